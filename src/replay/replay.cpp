#include "replay/replay.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <deque>
#include <exception>
#include <limits>
#include <stdexcept>
#include <thread>
#include <unordered_set>

#include "campaign/search_loop.hpp"
#include "strategy/strategy.hpp"

namespace kf {

double quantile(std::vector<double> values, double q) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(values.begin(), values.end());
  double pos = q * static_cast<double>(values.size() - 1);
  auto lo = static_cast<size_t>(std::floor(pos));
  double frac = pos - static_cast<double>(lo);
  if (frac == 0 || lo + 1 >= values.size()) return values[lo];
  // Spelled out so that an infinite neighbour gives +inf, never inf * 0 = NaN.
  if (std::isinf(values[lo + 1])) return values[lo + 1];
  return values[lo] + frac * (values[lo + 1] - values[lo]);
}

namespace {

// A recorded space as the search loop's evaluator: each config's recorded outcome, answered in
// dispatch order, one per turn in which the loop has nothing else to do (a GPU finishing the
// oldest config in flight while the compiles of the others run ahead).
class RecordedEvaluator final : public LoopEvaluator {
 public:
  RecordedEvaluator(const RecordedSpace& space, const std::string& strategy) : space_(space), strategy_(strategy) {}
  void submit(const Config& c) override {
    const RecordedPoint* p = space_.find(c);
    if (!p) throw std::logic_error(strategy_ + " proposed " + to_string(c) + ", not in the space");
    fifo_.push_back(p);
  }
  std::vector<LoopResult> collect(std::chrono::milliseconds wait) override {
    if (wait.count() == 0 || fifo_.empty()) return {};
    const RecordedPoint* p = fifo_.front();
    fifo_.pop_front();
    return {{{p->config, p->time_us}, p->time_us ? "ok" : "failed", 0, p->time_us}};
  }

 private:
  const RecordedSpace& space_;
  std::string strategy_;
  std::deque<const RecordedPoint*> fifo_;
};

}  // namespace

ReplayRun replay_run(const RecordedSpace& space, const std::string& strategy, uint64_t seed,
                     size_t budget, const nlohmann::json& options, const std::vector<Config>& seed_configs,
                     const ReplayLoop& loop) {
  StrategyContext ctx;
  ctx.space = &space.space();
  ctx.seed = seed;
  ctx.seeds = seed_configs;
  ctx.options = options.is_null() ? nlohmann::json::object() : options;
  auto s = make_strategy(strategy, ctx);
  if (budget == 0 || budget > space.size()) budget = space.size();

  ReplayRun run;
  run.seed = seed;
  run.best_us.reserve(budget);
  double best = space.worst_us().value_or(std::numeric_limits<double>::infinity());
  bool any_success = false;
  LoopRules rules;
  rules.depth = std::max<size_t>(1, loop.depth);
  rules.stop.budget(budget).plateau(loop.plateau);
  rules.strict_duplicates = true;
  LoopHooks hooks;
  hooks.on_result = [&](const LoopResult& r) {
    const auto& t = r.observation.time_us;
    if (t && (!any_success || *t < best)) {
      best = *t;
      any_success = true;
    }
    run.best_us.push_back(best);
  };
  RecordedEvaluator evaluator(space, strategy);
  run.evaluations = run_search_loop(*s, evaluator, rules, {}, hooks).evaluated;
  return run;
}

namespace {

StrategyReplay summarize(const RecordedSpace& space, const std::string& name,
                         const std::vector<ReplayRun>& runs, size_t budget,
                         const std::vector<double>& tolerances) {
  const double opt = *space.optimum()->time_us;
  StrategyReplay r;
  r.strategy = name;
  for (double tol : tolerances) {
    // A tiny relative slack so that "within 0%" matches the optimum itself despite rounding.
    const double target = opt * (1 + tol) * (1 + 1e-12);
    std::vector<double> needed;
    size_t reached = 0;
    for (const auto& run : runs) {
      auto it = std::find_if(run.best_us.begin(), run.best_us.end(),
                             [&](double b) { return b <= target; });
      if (it == run.best_us.end()) {
        needed.push_back(std::numeric_limits<double>::infinity());
      } else {
        needed.push_back(static_cast<double>(it - run.best_us.begin() + 1));
        ++reached;
      }
    }
    ToleranceStats t;
    t.tolerance = tol;
    t.median = quantile(needed, 0.5);
    t.p25 = quantile(needed, 0.25);
    t.p75 = quantile(needed, 0.75);
    t.median_fraction = t.median / static_cast<double>(space.size());
    t.reached = runs.empty() ? 0 : static_cast<double>(reached) / static_cast<double>(runs.size());
    r.tolerances.push_back(t);
  }
  // A run that ran out of configs keeps its final best for the rest of the budget.
  for (size_t k = 0; k < budget; ++k) {
    std::vector<double> at;
    double sum = 0;
    for (const auto& run : runs) {
      if (run.best_us.empty()) continue;
      double v = run.best_us[std::min(k, run.best_us.size() - 1)] / opt;
      at.push_back(v);
      sum += v;
    }
    if (at.empty()) break;
    r.mean_curve.push_back(sum / static_cast<double>(at.size()));
    r.median_curve.push_back(quantile(at, 0.5));
    r.p25_curve.push_back(quantile(at, 0.25));
    r.p75_curve.push_back(quantile(at, 0.75));
  }
  r.runs = runs;
  return r;
}

}  // namespace

ReplayReport replay(const RecordedSpace& space, const std::vector<std::string>& strategies,
                    const ReplayOptions& options) {
  if (!space.optimum())
    throw std::invalid_argument("replay: the recorded space '" + space.name() +
                                "' has no successful config");
  if (options.seeds < 1) throw std::invalid_argument("replay: seeds must be at least 1");
  ReplayReport rep;
  rep.space_name = space.name();
  rep.space_info = space.info();
  rep.valid_configs = space.size();
  rep.failed_configs = space.failed();
  rep.optimum_us = *space.optimum()->time_us;
  rep.optimum = space.optimum()->config;
  rep.seeds = options.seeds;
  rep.budget = options.budget == 0 || options.budget > space.size() ? space.size() : options.budget;

  const ReplayLoop loop{options.depth, options.plateau};
  const size_t total_runs = strategies.size() * static_cast<size_t>(options.seeds);
  size_t done_before = 0;
  std::vector<Config> starts;  // the seed configs the space holds
  for (const auto& c : options.seed_configs)
    if (space.find(c)) starts.push_back(c);
  for (const auto& name : strategies) {
    nlohmann::json opts = nlohmann::json::object();
    if (options.strategy_options.is_object() && options.strategy_options.contains(name))
      opts = options.strategy_options.at(name);
    std::vector<ReplayRun> runs(static_cast<size_t>(options.seeds));
    std::atomic<size_t> finished{0};
    // Runs are independent: each thread takes the next seed; each result lands in its slot,
    // so the report is the same for any number of threads.
    std::atomic<size_t> next{0};
    std::exception_ptr error;
    std::atomic<bool> failed{false};
    auto work = [&] {
      for (size_t i = next++; i < runs.size() && !failed; i = next++) {
        try {
          runs[i] = replay_run(space, name, options.first_seed + i, rep.budget, opts, starts, loop);
          ++finished;
        } catch (...) {
          if (!failed.exchange(true)) error = std::current_exception();
        }
      }
    };
    // The first run alone surfaces a bad name or options before any thread starts.
    runs[0] = replay_run(space, name, options.first_seed, rep.budget, opts, starts, loop);
    next = 1;
    finished = 1;
    unsigned threads = std::max(1u, std::min<unsigned>(options.threads, 64));
    std::vector<std::thread> pool;
    for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
    if (options.on_run) {
      // This thread reports progress while the pool runs.
      pool.emplace_back(work);
      while (finished < runs.size() && !failed) {
        options.on_run(done_before + finished, total_runs);
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
      }
    } else {
      work();
    }
    for (auto& t : pool) t.join();
    done_before += runs.size();
    if (error) std::rethrow_exception(error);
    rep.strategies.push_back(summarize(space, name, runs, rep.budget, options.tolerances));
  }
  return rep;
}

ReplayReport replay(const RecordedSpace& space, const std::vector<std::string>& strategies,
                    int seeds, size_t budget) {
  ReplayOptions o;
  o.seeds = seeds;
  o.budget = budget;
  return replay(space, strategies, o);
}

}  // namespace kf
