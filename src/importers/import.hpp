// Importers of recorded spaces published by other autotuners, so strategies can be replayed
// on public data: Kernel Tuner cache files and T4 ("Open Autotuning Results") files.
// Parameter values: integers stay integers; booleans, reals and strings become strings
// (booleans spelled True/False and reals as in the files' JSON, which is how the tools key
// their caches). Times are converted to microseconds. Domains keep the tuner's order.
#pragma once
#include <filesystem>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "replay/recorded_space.hpp"

namespace kf {

// One line, naming the file when there is one.
struct ImportError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Kernel Tuner cache (any schema version, also an unversioned one): domains from
// tune_params in tune_params_keys order; each cache entry is a recorded config, failed when
// its time is an error string ("InvalidConfig", "CompilationFailedConfig",
// "RuntimeFailedConfig", ...) or Kernel Tuner's error value 1e20. Refused (ImportError naming the
// entry): a tune_params_keys that is not tune_params' names, a key whose values disagree with the entry's
// fields or number, and a numeric time that is no measurement (not finite, or below a nanosecond).
RecordedSpace import_kernel_tuner_cache(const nlohmann::ordered_json& j, const std::string& name = "");

// T4 results: each result is a recorded config; failed unless invalidity is "correct" and it
// has a numeric "time" measurement (unit "ms" or empty: milliseconds; "s", "us", "ns").
// T4 carries no domains: each parameter's domain is the values seen, integers in ascending
// order, anything else in order of first appearance.
RecordedSpace import_t4(const nlohmann::ordered_json& j, const std::string& name = "");

// The largest file import_recorded reads (README.md, "Limits"): parsed whole, a JSON file takes
// about ten times its size in memory.
inline constexpr size_t kMaxImportBytes = size_t{256} << 20;

// Reads a file and picks the format ("cache" + "tune_params": Kernel Tuner; "results": T4).
// A Kernel Tuner cache left open by an interrupted run (no closing braces) is read too.
RecordedSpace import_recorded(const std::filesystem::path& path);

}  // namespace kf
