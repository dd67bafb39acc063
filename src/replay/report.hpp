// Renderings of a ReplayReport: a plain-text table for people, JSON for scripts, and the
// best-so-far curves as CSV (tools/plot_replay.py draws them).
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "replay/replay.hpp"

namespace kf {

std::string format_table(const ReplayReport& r);
// Quantiles that were not reached (+inf) are null.
nlohmann::json to_json(const ReplayReport& r);
// Header "strategy,evaluations,fraction_of_space,mean,median,p25,p75"; one row per strategy
// and evaluation count; the ratios are best-so-far / optimum.
std::string curves_csv(const ReplayReport& r);

}  // namespace kf
