// The ask/tell loop of a search, shared by live campaigns and `kforge replay`: it keeps up to
// `depth` configs in flight, asks the strategy for as many as the pipeline has room for, tells
// it each outcome when it comes back (late: other configs were proposed meanwhile), and stops when
// its stop rule says so (campaign/stop_rule: the evaluation budget, a plateau, the time budget,
// Ctrl-C, or the strategy has nothing left to propose). The evaluator decides what an evaluation is: a compile and a GPU
// run (campaign/campaign.cpp) or a lookup in a recorded space (replay/recorded_evaluator).
#pragma once
#include <chrono>
#include <cstddef>
#include <deque>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "campaign/stop_rule.hpp"
#include "strategy/strategy.hpp"

namespace kf {

struct LoopResult {
  Observation observation;    // the strategy's value: the campaign's objective (time, energy or edp)
  std::string status = "ok";  // for progress lines
  double tflops = 0;
  std::optional<double> time_us;  // the launch's time, for progress lines whatever the objective
};

class LoopEvaluator {
 public:
  virtual ~LoopEvaluator() = default;
  // Starts evaluating c (asynchronously, or not: a result may come back on the next collect).
  virtual void submit(const Config& c) = 0;
  // The results finished since the last call. With wait > 0 the loop has nothing else to do:
  // block up to wait for one. May throw to stop the loop.
  virtual std::vector<LoopResult> collect(std::chrono::milliseconds wait) = 0;
};

struct LoopRules {
  size_t depth = 1;  // configs in flight at most
  StopRule stop;     // always stops on exhaustion; add the budget, plateau, time, interrupt
  // A config proposed twice that was not queued as a retry is a strategy bug (replay), rather
  // than a config the campaign gave up on (live).
  bool strict_duplicates = false;
};

struct LoopStart {
  std::set<std::string> done;   // canonical keys never to dispatch (known results)
  std::deque<Config> retries;   // dispatched first (interrupted evaluations)
};

struct LoopOutcome {
  size_t evaluated = 0, dispatched = 0;
  StopKind stopped_by = StopKind::Exhausted;
  // An outside stop (time, Ctrl-C) ended it before its own budget did.
  bool cut_short() const { return cuts_short(stopped_by); }
};

struct LoopHooks {
  std::function<void(const LoopResult&)> on_result;
  std::function<void()> before_first_dispatch;
};

LoopOutcome run_search_loop(Strategy& strategy, LoopEvaluator& evaluator, const LoopRules& rules,
                            LoopStart start, const LoopHooks& hooks = {});

}  // namespace kf
