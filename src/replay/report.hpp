// Renderings of a ReplayReport: a plain-text table for people, JSON for scripts, and the
// best-so-far curves as CSV (tools/plot_replay.py draws them).
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "replay/replay.hpp"

namespace kf {

std::string format_table(const ReplayReport& r);
// Quantiles that were not reached (+inf) are null. Each strategy's "runs" holds every run's
// best-so-far trajectory as its steps: {"seed", "evaluations", "best_us": [[k, best], ...]},
// the best after evaluation k (1-based) being that of the last step at or before k. Steps
// rather than one value per evaluation: 200 runs of 1000 evaluations stay a few KB per run.
nlohmann::json to_json(const ReplayReport& r);
// The inverse of the steps above: best-so-far after each of `evaluations` evaluations.
std::vector<double> expand_steps(const nlohmann::json& steps, size_t evaluations);
// Header "strategy,evaluations,fraction_of_space,mean,median,p25,p75"; one row per strategy
// and evaluation count; the ratios are best-so-far / optimum.
std::string curves_csv(const ReplayReport& r);

}  // namespace kf
