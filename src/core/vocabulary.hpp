// The design's nouns that every module speaks of, in one header without logic: a config (one
// value per tuning parameter) and a shape (one value per problem dimension) are assignments
// (space/value.hpp); an evaluation ends in a Status; a timed kernel has TimingStats, measured
// under TimingOptions; a device is described by its DeviceLimits. The store, the GPU layer and
// the worker protocol read these without including one another or the family spec.
#pragma once
#include <cstdint>
#include <string>

#include "space/value.hpp"

namespace kf {

// Outcome of one evaluation (see docs/architecture.md).
enum class Status { Ok, Invalid, CompileError, LaunchError, WrongResult, RuntimeFault, Timeout, Interrupted };

std::string to_string(Status s);                 // "ok", "invalid", "compile_error", ...
Status status_from_string(const std::string& s);  // throws std::invalid_argument

// The stretch of back-to-back replays an energy measurement spans at the least (TimingOptions.energy_ms).
constexpr double kEnergyWindowMs = 100;

struct TimingOptions {
  double warmup_ms = 200;      // plain launches before measuring (sustained clocks, not an idle GPU's boost)
  int min_reps = 10;           // graph replays measured, at least
  int max_reps = 100;          // and at most
  double max_ms = 1500;        // time cap for one kernel's measurement
  double target_rel_ci = 0.01; // stop when the 95% CI of the median is within +-1%
  double graph_ms = 2.0;       // launches per graph chosen so a replay lasts about this long
  bool cold_l2 = false;        // flush L2 before each plain launch
  double energy_ms = 0;        // > 0: replays kept back to back this long (at least) for the energy counter
};

// The worker's timing method. Times of two methods do not compare, so a record timed with another method is
// stale (winner/current_results.hpp) and `kforge refresh` re-times it. Bump it with any change to how
// measure_kernel times a kernel. 1: ~2 ms graph replays, a host sync after each, 25 ms of warm-up.
// 2: the replays back to back in batches of five (one host sync per batch), 200 ms of warm-up: the clocks
// sustained load holds (docs/experiments/68-*).
constexpr int kTimingMethod = 2;

struct TimingStats {
  double median_us = 0;        // per launch, from graph replay
  double p10_us = 0, p90_us = 0;
  double ci_lo_us = 0, ci_hi_us = 0;  // 95% CI of the median
  int reps = 0;                // graph replays measured
  int launches_per_rep = 0;
  double plain_median_us = 0;  // per launch, plain launches with events around each
  int method = 1;              // how it was timed (kTimingMethod of the worker that measured it)
  // From the GPU's energy counter (NVML) over a stretch of back-to-back replays after the timed ones
  // (0: not measured: no NVML, no counter, or energy_ms 0): mean board power, and that power times
  // median_us, the energy of one launch. Measured apart from the time, so they leave the method as it is.
  double power_w = 0;
  double energy_uj = 0;
};

// What kforge needs to know of a GPU (its methods are in family/device.cpp).
struct DeviceLimits {
  std::string name = "unknown";
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  int64_t smem_per_block = 48 * 1024;  // without opt-in
  int64_t smem_optin = 48 * 1024;      // with cudaFuncAttributeMaxDynamicSharedMemorySize
  int64_t smem_per_sm = 0;
  int max_threads = 1024;
  int regs_per_block = 65536;
  int regs_per_sm = 65536;
  int64_t l2_bytes = 0;
  std::string driver;

  int cc() const { return cc_major * 10 + cc_minor; }
  std::string arch() const;  // "sm_90"
  // Limits of a known architecture, for compiling and checking without a GPU ("sm_90", "sm_89", ...).
  // Throws SpecError for an unknown one.
  static DeviceLimits for_arch(const std::string& arch);
  // Adds device.cc, device.sm_count, device.smem_optin, device.smem_per_block,
  // device.max_threads, device.regs_per_block, device.l2_bytes.
  void add_to(Scope& scope) const;
};

}  // namespace kf
