#include "campaign/search_loop.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>

namespace kf {

namespace {

struct LoopRun {
  Strategy& strategy;
  LoopEvaluator& evaluator;
  const LoopRules& rules;
  const LoopHooks& hooks;
  LoopStart start;
  LoopState state = {};
  size_t in_flight = 0;
  std::optional<double> best = {};
  std::set<std::string> retried = {};
  std::set<std::string> echo_to_strategy = {};
  std::map<std::string, Observation> finished = {};

  void take(const std::vector<LoopResult>& results) {
    for (const auto& r : results) {
      const std::string key = to_string(r.observation.config);
      strategy.tell(r.observation);
      if (echo_to_strategy.erase(key)) strategy.tell(r.observation);
      finished[key] = r.observation;
      --in_flight;
      ++state.evaluated;
      if (r.observation.time_us && (!best || *r.observation.time_us < *best)) {
        best = r.observation.time_us;
        state.since_improvement = 0;
      } else {
        ++state.since_improvement;
      }
      if (hooks.on_result) hooks.on_result(r);
    }
  }

  // The next configs: a queued retry first, else what the strategy proposes for the room left.
  std::vector<Config> next_batch() {
    if (start.retries.empty())
      return strategy.ask(std::min(rules.depth - in_flight, rules.stop.dispatches_left(state)));
    std::vector<Config> batch{start.retries.front()};
    retried.insert(to_string(batch.back()));
    start.retries.pop_front();
    return batch;
  }

  // A config proposed again: a strategy bug in strict mode; else (a retry queued it) the
  // strategy is answered when it finishes.
  void proposed_again(const std::string& key) {
    if (rules.strict_duplicates && !retried.count(key))
      throw std::logic_error(strategy.name() + " proposed " + key + " twice");
    if (auto it = finished.find(key); it != finished.end())
      strategy.tell(it->second);
    else
      echo_to_strategy.insert(key);
  }

  // Fills the pipeline; returns how many configs it dispatched.
  size_t dispatch() {
    size_t added = 0;
    while (in_flight < rules.depth && rules.stop.dispatches_left(state) > 0) {
      const std::vector<Config> batch = next_batch();
      if (batch.empty()) {
        if (in_flight == 0) state.exhausted = true;  // nothing pending, nothing proposed
        break;
      }
      for (const auto& c : batch) {
        const std::string key = to_string(c);
        if (!start.done.insert(key).second) {
          proposed_again(key);
          continue;
        }
        if (state.dispatched == 0 && hooks.before_first_dispatch) hooks.before_first_dispatch();
        evaluator.submit(c);
        ++in_flight;
        ++added;
        ++state.dispatched;
      }
    }
    return added;
  }
};

}  // namespace

LoopOutcome run_search_loop(Strategy& strategy, LoopEvaluator& evaluator, const LoopRules& rules,
                            LoopStart start, const LoopHooks& hooks) {
  if (rules.depth == 0) throw std::invalid_argument("search loop: depth must be at least 1");
  LoopRun run{strategy, evaluator, rules, hooks, std::move(start)};
  bool idle = false;
  for (;;) {
    run.take(evaluator.collect(idle ? std::chrono::milliseconds(200) : std::chrono::milliseconds(0)));
    const bool stop = rules.stop.reached(run.state);
    if (stop && run.in_flight == 0) return {run.state.evaluated, run.state.dispatched, rules.stop.why(run.state)};
    idle = (stop || run.dispatch() == 0) && !run.state.exhausted;
  }
}

}  // namespace kf
