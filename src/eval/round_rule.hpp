// When a side-by-side re-measure knows its answer. Kernels are timed in interleaved rounds (one median
// per kernel per round, eval/worker time_many); with the rule on, the rounds come in batches and after
// each batch the order-statistic 95% interval of each kernel's median over its rounds (what the
// worker reports, eval/stats) decides:
//   - a kernel whose interval lies entirely above the leader's (the lowest median) is behind: it
//     sits out the next batch (it comes back should the leader's interval grow to reach it);
//   - the rounds stop "separated" once every other kernel is behind the leader;
//   - they stop "tie" once every kernel not behind is tied with the leader: both intervals together
//     span at most tie_rel of the leader's median, so whichever is faster, it is by less than that;
//   - else another batch, up to max rounds, or until a time cap.
// With the rule off, every kernel is timed in each of a fixed count of rounds. No CUDA here: the worker
// runs the loop, the tests run it on synthetic rounds.
#pragma once
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace kf {

// Batches of the sequential rule. 5 rounds first: the fewest whose min..max interval covers a median
// with ~94% (below that the interval is no interval); then 4 at a time, so there are at most five looks
// in 21 rounds (each look is a chance to stop on noise: few looks keep that chance small).
struct RoundRule {
  int first_batch = 5;
  int batch = 4;
  double tie_rel = 0.005;  // two kernels within 0.5% of each other are the same to the ranking
};

// 21: where the worker's intervals on the D128 attention shapes were ~0.4% wide and ordered two
// configs 1.4% apart (docs/experiments/71-*): the fixed count the finalists used before the rule.
constexpr int kMaxAutoRounds = 21;

// What ended the rounds. Fixed: the fixed count was reached (rule off).
enum class RoundStop { Continue, Fixed, Separated, Tie, MaxRounds, TimeCap, OneKernel };

// "fixed", "separated", "tie", "max rounds", "time cap", "one kernel" ("" for Continue).
std::string to_string(RoundStop s);
// The inverse; Continue for anything else.
RoundStop round_stop_from_string(const std::string& s);

struct RoundVerdict {
  RoundStop stop = RoundStop::Continue;  // Continue, Separated, Tie, OneKernel or MaxRounds
  std::optional<size_t> leader;          // the lowest median (none when no kernel has a round)
  std::vector<bool> next;                // kernels to time in the next batch
};

// The rule over per-round medians (samples[i]: kernel i's, in round order; empty: not timed, e.g. it
// failed the gate) after `rounds` rounds; MaxRounds when still undecided at max_rounds.
RoundVerdict judge_rounds(const std::vector<std::vector<double>>& samples, int rounds, int max_rounds,
                          const RoundRule& rule);

struct RoundPlan {
  int rounds = 7;              // the fixed count, or with the rule the most
  bool until_decided = false;  // the rule decides when to stop (batches, judge_rounds)
  RoundRule rule;
  double max_s = 0;  // with the rule, > 0: after the first batch, no round starts that would end past it
                     // (estimated from the round before)
};

struct RoundsRun {
  int rounds = 0;  // rounds run (a kernel that sat some out has fewer samples)
  RoundStop stop = RoundStop::Fixed;
  std::vector<std::vector<double>> samples;  // per kernel, its per-round medians
};

// Runs interleaved rounds over n kernels: round r times kernel 0..n-1 (even r) or n-1..0 (odd r), so
// drift spreads evenly. time_one(i) times kernel i once and returns its median, or nullopt when it
// failed (it is not timed again). elapsed_s() is the seconds since the request began.
RoundsRun run_rounds(size_t n, const RoundPlan& plan, const std::function<std::optional<double>(size_t)>& time_one,
                     const std::function<double()>& elapsed_s);

}  // namespace kf
