// compute-sanitizer runs of a campaign's finalists (`kforge search --sanitize`): each finalist's
// gate (no timing) runs once in a worker started under `compute-sanitizer --tool memcheck` and
// once under `--tool racecheck`; the verdict is recorded in the store (sanitizer_runs), and
// `best` / `export` skip a kernel that failed.
#pragma once
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "eval/protocol.hpp"
#include "family/family.hpp"
#include "store/store.hpp"

namespace kf {

inline constexpr const char* kSanitizerTools[] = {"memcheck", "racecheck"};

// The compute-sanitizer binary: $KFORGE_COMPUTE_SANITIZER, else compute-sanitizer in $PATH,
// next to nvcc in $PATH, in $CUDA_HOME/bin, $CUDA_PATH/bin or /usr/local/cuda/bin. Throws
// std::runtime_error with a one-line message naming where it looked.
std::filesystem::path find_compute_sanitizer();

// What a sanitizer log says: the error count from "ERROR SUMMARY: N errors" (racecheck: the
// larger of that and the errors of its "RACECHECK SUMMARY"), and that line.
struct SanitizerLog {
  bool has_summary = false;
  int64_t errors = 0;
  int64_t warnings = 0;  // racecheck's warning-level hazards (not failures)
  std::string summary;
};
SanitizerLog parse_sanitizer_log(const std::string& text);

// The command that runs one worker under the tool, reporting to log_file and checking only
// the candidate's kernel (the entry point's name) so the reference cannot be blamed.
std::vector<std::string> sanitizer_argv(const std::filesystem::path& sanitizer, const std::string& tool,
                                        const std::filesystem::path& log_file, const std::string& entry,
                                        const std::vector<std::string>& worker_argv, int device);

// The verdict from the gate's result under the tool and the tool's log (nullopt: no log).
// Fails when the gate failed, the tool reported errors, or the log has no summary.
struct SanitizerOutcome {
  bool passed = false;
  int64_t errors = 0;
  std::string summary;
};
SanitizerOutcome judge_sanitizer_run(const EvalResult& gate, const std::optional<std::string>& log,
                                     const std::string& exit_description);

// Runs req (gate only) under each tool in its own worker and returns one record per tool
// (family, kernel, shape and device filled in by the caller).
struct SanitizeJob {
  std::filesystem::path sanitizer;
  std::vector<std::string> worker_argv;  // without --device
  int device = 0;
  double timeout_s = 1800;  // racecheck runs a kernel tens to hundreds of times slower
  std::string entry;        // the candidate's kernel name
};
SanitizerOutcome run_under_sanitizer(const SanitizeJob& job, const std::string& tool, EvalRequest req);

}  // namespace kf

namespace kf {

class CubinCache;

// A finished shape's finalists: the stored top-K on this device whose kernel is current.
struct FinalistRun {
  Store* store = nullptr;
  std::mutex* store_mu = nullptr;
  const Family* family = nullptr;
  Shape shape;
  const DeviceLimits* device = nullptr;
  int64_t campaign_id = 0;
  CubinCache* cache = nullptr;
  std::string ref_cubin;
  uint64_t seed = 1;
  size_t top_k = 5;
  SanitizeJob job;  // sanitizer, worker command, device index, timeout (entry filled in)
};
// Runs each finalist under memcheck and racecheck (a tool already recorded for the kernel on
// this device is not run again) and records every run. Returns how many finalists failed.
size_t sanitize_finalists(const FinalistRun& run);

}  // namespace kf
