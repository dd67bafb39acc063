// The JSON-lines protocol between the orchestrator and `kforge worker` processes.
//
// Worker -> orchestrator, once at start:   {"type":"hello","device":{...}} or
//                                           {"type":"hello","error":"no CUDA device ..."}
// Orchestrator -> worker, one per line:    {"type":"evaluate", ...EvalRequest}
//                                           {"type":"time_many", ...TimeManyRequest}
// Worker -> orchestrator, one per request: {"type":"result", ...EvalResult}
//                                           {"type":"times", ...TimeManyResult}
// A worker that hits a sticky CUDA error answers with status runtime_fault and exits.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/vocabulary.hpp"

namespace kf {

struct EvalRequest {
  int64_t id = 0;
  std::string spec_path;       // the family spec (the worker loads it)
  Config config;
  Shape shape;
  std::string cubin_path;      // candidate
  std::string ref_cubin_path;  // reference, specialized like the candidate
  uint64_t seed = 1;
  bool time = true;            // false: gate only
  TimingOptions timing;
};

struct EvalResult {
  int64_t id = 0;
  Status status = Status::Ok;
  std::string error;           // one line; empty when ok
  double max_abs = 0;          // worst over the gate shapes
  double rel_l2 = 0;
  int gate_shapes = 0;         // how many shapes were checked
  std::optional<TimingStats> timing;
};

// Re-measure several gated kernels interleaved, in rounds, in one session (noise-aware
// selection and ablation): item i is timed once per round, rounds alternate the order.
struct TimeManyRequest {
  int64_t id = 0;
  std::vector<EvalRequest> items;
  int rounds = 5;
};
struct TimeManyResult {
  int64_t id = 0;
  std::vector<EvalResult> items;  // timing.median_us is the median over rounds
};

nlohmann::json to_json(const TimingOptions& t);
nlohmann::json to_json(const TimingStats& t);
nlohmann::json to_json(const EvalRequest& r);
nlohmann::json to_json(const EvalResult& r);
nlohmann::json to_json(const DeviceLimits& d);
TimingOptions timing_options_from_json(const nlohmann::json& j);
TimingStats timing_stats_from_json(const nlohmann::json& j);
EvalRequest eval_request_from_json(const nlohmann::json& j);
EvalResult eval_result_from_json(const nlohmann::json& j);
DeviceLimits device_limits_from_json(const nlohmann::json& j);
nlohmann::json to_json(const TimeManyRequest& r);
nlohmann::json to_json(const TimeManyResult& r);
TimeManyRequest time_many_request_from_json(const nlohmann::json& j);
TimeManyResult time_many_result_from_json(const nlohmann::json& j);

}  // namespace kf
