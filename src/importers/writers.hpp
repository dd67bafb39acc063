// Writers of kforge's recorded results in the community formats the importers read, so other
// tuners can replay kforge's spaces: Kernel Tuner cache files (its simulation mode replays a
// complete cache) and T4 ("Open Autotuning Results") files.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/vocabulary.hpp"
#include "space/space.hpp"

namespace kf {

struct ResultRow {
  Config config;
  Status status = Status::Ok;
  std::optional<double> time_us;  // the median launch time of an ok result
  double compile_ms = 0;          // 0 when unknown
  double benchmark_ms = 0;        // wall time spent timing it (estimate); 0 when unknown
  std::string timestamp;
};

// One shape's results on one device: what a Kernel Tuner cache holds.
struct ResultTable {
  std::string kernel_name;          // the family
  std::string device_name;
  std::vector<ParamSpec> params;    // domains in spec order (the cache key order)
  std::vector<int64_t> problem_size;  // the shape's integer dims, in the family's dim order
  nlohmann::json provenance;        // family, shape, campaign: kept under "kforge"
  std::vector<ResultRow> rows;
};

// Kernel Tuner's cache status of a failed kforge result: InvalidConfig (constraints or
// resources), CompilationFailedConfig, or RuntimeFailedConfig (launch error, wrong result,
// fault, timeout: Kernel Tuner has no finer kind). "" for ok.
std::string kernel_tuner_error(Status s);
// T4 "invalidity": correct, constraints, compile, runtime, correctness or timeout.
std::string t4_invalidity(Status s);

// A Kernel Tuner cache (schema 1.0.0): entries keyed by the values' Python spellings joined by
// commas in params order, sorted by key; times in ms; a failed entry carries "__error__" and
// the same error string as its "time" (older Kernel Tuner versions read it from there).
// Interrupted rows are skipped; a config recorded twice keeps its fastest ok result.
nlohmann::ordered_json kernel_tuner_cache(const ResultTable& t);
// T4 results (schema 1.0.0), one result per config, in the cache's order.
nlohmann::ordered_json t4_results(const ResultTable& t);

}  // namespace kf
