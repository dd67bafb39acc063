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
  LoopOutcome out = {};
  size_t in_flight = 0, since_improvement = 0;
  std::optional<double> best = {};
  std::set<std::string> retried = {};
  std::set<std::string> echo_to_strategy = {};
  std::map<std::string, Observation> finished = {};

  bool over_budget() const {
    if (out.dispatched >= rules.allowed) return true;
    if (rules.plateau && since_improvement >= rules.plateau) return true;
    return rules.stop && rules.stop();
  }

  void take(const std::vector<LoopResult>& results) {
    for (const auto& r : results) {
      const std::string key = to_string(r.observation.config);
      strategy.tell(r.observation);
      if (echo_to_strategy.erase(key)) strategy.tell(r.observation);
      finished[key] = r.observation;
      --in_flight;
      ++out.evaluated;
      if (r.observation.time_us && (!best || *r.observation.time_us < *best)) {
        best = r.observation.time_us;
        since_improvement = 0;
      } else {
        ++since_improvement;
      }
      if (hooks.on_result) hooks.on_result(r);
    }
  }

  // Fills the pipeline; returns how many configs it dispatched.
  size_t dispatch() {
    size_t added = 0;
    while (in_flight < rules.depth && out.dispatched < rules.allowed) {
      std::vector<Config> batch;
      if (!start.retries.empty()) {
        batch.push_back(start.retries.front());
        retried.insert(to_string(batch.back()));
        start.retries.pop_front();
      } else {
        batch = strategy.ask(std::min(rules.depth - in_flight, rules.allowed - out.dispatched));
      }
      if (batch.empty()) {
        if (in_flight == 0) out.exhausted = true;  // nothing pending, nothing proposed
        break;
      }
      for (auto& c : batch) {
        const std::string key = to_string(c);
        if (!start.done.insert(key).second) {
          if (rules.strict_duplicates && !retried.count(key))
            throw std::logic_error(strategy.name() + " proposed " + key + " twice");
          // Proposed again after a retry queued it: answer the strategy when it finishes.
          if (auto it = finished.find(key); it != finished.end())
            strategy.tell(it->second);
          else
            echo_to_strategy.insert(key);
          continue;
        }
        if (out.dispatched == 0 && hooks.before_first_dispatch) hooks.before_first_dispatch();
        evaluator.submit(c);
        ++in_flight;
        ++added;
        ++out.dispatched;
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
    const bool stop = run.over_budget() || run.out.exhausted;
    if (stop && run.in_flight == 0) {
      run.out.plateaued = rules.plateau && run.since_improvement >= rules.plateau;
      run.out.cut_short = !run.out.exhausted && run.out.dispatched < rules.allowed && !run.out.plateaued;
      return run.out;
    }
    idle = (stop || run.dispatch() == 0) && !run.out.exhausted;
  }
}

}  // namespace kf
