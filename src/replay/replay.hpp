// Replay: runs strategies offline against a recorded space, for many seeds, through the same
// search loop as a live campaign (campaign/search_loop.hpp: as many configs in flight as a
// campaign keeps, outcomes told late, budgets and plateau), with a recorded evaluator that
// answers in dispatch order, one per loop turn, as a GPU would. Measures how fast each strategy
// gets close to the recorded optimum. Back end of `kforge replay`; reports in replay/report.hpp.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "replay/recorded_space.hpp"

namespace kf {

struct ReplayOptions {
  int seeds = 50;           // runs per strategy, seeds first_seed, first_seed + 1, ...
  uint64_t first_seed = 1;
  size_t budget = 0;        // evaluations per run; 0 (or more than the space): the whole space
  std::vector<double> tolerances = {0.01, 0.05, 0.10};  // "within 1%" is best <= 1.01 * optimum
  nlohmann::json strategy_options = nlohmann::json::object();  // strategy name -> its options
  unsigned threads = 1;     // runs in parallel; results do not depend on it
  // Where every run starts (StrategyContext::seeds), e.g. the best configs of a neighbouring
  // shape; configs the recorded space does not hold are dropped by replay().
  std::vector<Config> seed_configs;
  // The search loop's rules: configs in flight (1: ask one, tell it, ask again; a campaign on
  // one GPU keeps campaign_depth(1, 0) = 4) and the plateau stop (0: off).
  size_t depth = 1;
  size_t plateau = 0;
  // Called from the calling thread after each finished run (done, total), for progress lines.
  std::function<void(size_t, size_t)> on_run;
};

// One run: best-so-far time after each evaluation (index k: after k + 1 evaluations). Before
// the first success the best is the space's worst successful time: no better than anything.
struct ReplayRun {
  uint64_t seed = 0;
  std::vector<double> best_us;
  size_t evaluations = 0;  // < budget only when the strategy ran out of configs
};

struct ToleranceStats {
  double tolerance = 0;
  // Evaluations needed to get within tolerance, over runs; +inf where the quantile run did
  // not get there within the budget.
  double median = 0, p25 = 0, p75 = 0;
  double median_fraction = 0;  // median / valid configs of the space
  double reached = 0;          // fraction of runs that got there within the budget
};

struct StrategyReplay {
  std::string strategy;
  std::vector<ToleranceStats> tolerances;  // in ReplayOptions::tolerances order
  // Normalised best-so-far (best / optimum) after k + 1 evaluations, over runs.
  std::vector<double> mean_curve, median_curve, p25_curve, p75_curve;
  // Every run, in seed order: what the quantiles above summarise, kept so that scripts can
  // compute their own statistics (bootstrap intervals, shares at any budget).
  std::vector<ReplayRun> runs;
};

struct ReplayReport {
  std::string space_name;
  nlohmann::json space_info;
  size_t valid_configs = 0, failed_configs = 0;
  double optimum_us = 0;
  Config optimum;
  int seeds = 0;
  size_t budget = 0;  // effective budget (never more than the space)
  std::vector<StrategyReplay> strategies;
};

// Runs one strategy once. Throws std::invalid_argument for an unknown strategy or options,
// and std::logic_error if the strategy proposes a config twice or one outside the space.
struct ReplayLoop {
  size_t depth = 1;
  size_t plateau = 0;
};
ReplayRun replay_run(const RecordedSpace& space, const std::string& strategy, uint64_t seed,
                     size_t budget, const nlohmann::json& options = nlohmann::json::object(),
                     const std::vector<Config>& seed_configs = {}, const ReplayLoop& loop = {});

// Throws std::invalid_argument if the space has no successful config (no optimum).
ReplayReport replay(const RecordedSpace& space, const std::vector<std::string>& strategies,
                    const ReplayOptions& options);
ReplayReport replay(const RecordedSpace& space, const std::vector<std::string>& strategies,
                    int seeds, size_t budget);

// Linear-interpolated quantile (q in [0, 1]) of values, which may hold +inf.
double quantile(std::vector<double> values, double q);

}  // namespace kf
