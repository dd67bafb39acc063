// Several kernels of one family and shape timed side by side in one worker session: each is
// rendered (with any extra defines), compiled, gated once, and the survivors are timed in interleaved
// rounds of alternating order (the worker's time_many), so clock and thermal drift spread evenly
// over them: a fixed count of rounds, or until the rule of eval/round_rule knows the answer.
// `kforge bench`, `kforge ablate` and the campaign's end-of-shape top-K re-measure all time through here.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "compile/compiler.hpp"
#include "eval/protocol.hpp"
#include "eval/client/worker_client.hpp"
#include "family/family.hpp"
#include "space/space.hpp"

namespace kf {

struct Contender {
  std::string label;  // how the caller names it (a config key, "PARAM=value", ...)
  Config config;      // complete
  Assignment defines;  // extra #defines (family/user_config.hpp); part of the variant hash
};

struct ContenderResult {
  Status status = Status::Ok;  // invalid (a constraint), compile_error, or the worker's verdict
  std::string error;           // one line; empty when ok
  std::optional<TimingStats> timing;  // only for a contender that passed the gate
  double max_abs = 0, rel_l2 = 0;     // the gate's worst errors
  double flops = 0;                   // the family's cost for the shape, for TFLOP/s
  std::string variant_hash;
  int rounds = 0;                 // rounds it was timed in (the rule may have let it sit some out)
  std::vector<double> round_us;   // its median in each of them (empty from a worker that does not say)
  double tflops() const;  // 0 without a timing or a cost
};

struct SideBySideOptions {
  int rounds = 7;              // interleaved timing rounds: the fixed count, or with until_decided the most
  bool until_decided = false;  // stop once the rule (eval/round_rule) knows the answer
  RoundRule rule;
  double max_s = 0;  // with until_decided, > 0: a time cap on the worker's request (gate included)
  double rewarm_ms = kRewarmMs;  // warm-up of a kernel's rounds after its first
  TimingOptions timing;
  uint64_t seed = 1;
  size_t compile_threads = 0;  // 0: hardware concurrency
};

struct SideBySideRun {
  std::vector<ContenderResult> contenders;  // one per contender, in order
  int rounds = 0;                           // rounds run
  RoundStop stop = RoundStop::Fixed;        // what ended them
  double wall_s = 0;                        // compile, gate and rounds
};

// Throws std::runtime_error (one line) when the family's reference kernel does not compile: nothing
// could be gated.
SideBySideRun time_side_by_side(const Family& f, const Shape& shape, const DeviceLimits& device,
                                WorkerClient& worker, CubinCache& cache, const std::vector<Contender>& contenders,
                                const SideBySideOptions& options);

// "7 interleaved rounds", or with the rule "5 interleaved rounds (auto, at most 21: separated)".
std::string rounds_text(const SideBySideOptions& options, const SideBySideRun& run);

// The ablation of `base`: base itself (label ""), then every valid config that differs from it in
// one parameter, labelled "PARAM=value", in the family's parameter and value order.
std::vector<Contender> one_parameter_changes(const Family& f, const Config& base, const SearchSpace& space);

// A watchdog limit for one side-by-side request of n contenders: it gates and times all of them.
double side_by_side_timeout_s(size_t n, const SideBySideOptions& options);

}  // namespace kf
