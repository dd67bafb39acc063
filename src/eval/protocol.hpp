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
#include "eval/round_rule.hpp"

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

// Warm-up before an item's rounds after its first, in place of the timing options' warm-up. The
// rounds run back to back, so the GPU is already under the load the full warm-up brings it to; a
// short one re-estimates the launch time and brings the item's own data back into the caches. The
// full warm-up (200 ms) on every round was most of a finalists' re-measure of us-scale kernels.
constexpr double kRewarmMs = 20;

// Re-measure several gated kernels interleaved, in rounds, in one session (noise-aware
// selection and ablation): item i is gated once, then timed once per round, rounds alternate the
// order. With until_decided the rounds stop when the rule says so (eval/round_rule).
struct TimeManyRequest {
  int64_t id = 0;
  std::vector<EvalRequest> items;
  int rounds = 5;              // the fixed count, or with until_decided the most
  bool until_decided = false;
  RoundRule rule;
  double max_s = 0;            // with until_decided, > 0: the request's time cap (gate included)
  double rewarm_ms = kRewarmMs;
};
struct TimeManyResult {
  int64_t id = 0;
  std::vector<EvalResult> items;  // timing.median_us is the median over rounds
  int rounds = 0;                 // rounds run (0: a worker that did not say)
  RoundStop stop = RoundStop::Continue;  // what ended them (Continue: a worker that did not say)
  std::vector<std::vector<double>> round_us;  // per item its per-round medians (empty: not said)
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
