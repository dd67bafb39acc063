#include "replay/report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace kf {

namespace {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// An evaluation count: "-" when not reached, integral when it is one.
std::string count(double v) {
  if (std::isinf(v)) return "-";
  return v == std::floor(v) ? fmt("%.0f", v) : fmt("%.1f", v);
}

nlohmann::json finite_or_null(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

std::string pad(const std::string& s, size_t w) { return s.size() >= w ? s : s + std::string(w - s.size(), ' '); }

// Mean normalised best after the given fraction of the space (within the budget), or NaN.
double mean_at_fraction(const StrategyReplay& s, size_t valid, double fraction) {
  // floor, like a budget of valid / 10 evaluations
  auto k = std::max<size_t>(1, static_cast<size_t>(std::floor(fraction * static_cast<double>(valid))));
  if (k == 0 || k > s.mean_curve.size()) return std::nan("");
  return s.mean_curve[k - 1];
}

// One run's best-so-far as steps [evaluation, best]: one where the best changes (and the first).
nlohmann::json run_json(const ReplayRun& run) {
  nlohmann::json steps = nlohmann::json::array();
  for (size_t k = 0; k < run.best_us.size(); ++k)
    if (k == 0 || run.best_us[k] != run.best_us[k - 1]) steps.push_back({k + 1, run.best_us[k]});
  return {{"seed", run.seed}, {"evaluations", run.evaluations}, {"best_us", steps}};
}

}  // namespace

std::vector<double> expand_steps(const nlohmann::json& steps, size_t evaluations) {
  std::vector<double> out;
  out.reserve(evaluations);
  size_t next = 0;
  double best = std::nan("");
  for (size_t k = 1; k <= evaluations; ++k) {
    while (next < steps.size() && steps[next][0].get<size_t>() <= k) best = steps[next++][1].get<double>();
    out.push_back(best);
  }
  return out;
}

std::string format_table(const ReplayReport& r) {
  std::ostringstream out;
  out << "space: " << (r.space_name.empty() ? "(unnamed)" : r.space_name) << ", "
      << r.valid_configs << " configs (" << r.failed_configs << " failed), optimum "
      << fmt("%.4g", r.optimum_us) << " us at " << to_string(r.optimum) << "\n";
  out << "replay: " << r.seeds << " seeds, budget " << r.budget << " evaluations ("
      << fmt("%.1f", 100.0 * static_cast<double>(r.budget) / static_cast<double>(r.valid_configs))
      << "% of the space) per run\n";
  out << "evaluations to get within X% of the optimum: median [p25, p75], median as % of the "
         "space, runs that got there\n\n";

  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> head = {"strategy"};
  if (!r.strategies.empty())
    for (const auto& t : r.strategies.front().tolerances)
      head.push_back("within " + fmt("%g", 100 * t.tolerance) + "%");
  head.push_back("best@10%");
  rows.push_back(head);
  for (const auto& s : r.strategies) {
    std::vector<std::string> row = {s.strategy};
    for (const auto& t : s.tolerances) {
      row.push_back(count(t.median) + " [" + count(t.p25) + ", " + count(t.p75) + "] " +
                    (std::isinf(t.median) ? "-" : fmt("%.1f%%", 100 * t.median_fraction)) + " " +
                    fmt("%.0f%%", 100 * t.reached));
    }
    double at10 = mean_at_fraction(s, r.valid_configs, 0.10);
    row.push_back(std::isnan(at10) ? "-" : fmt("%.3fx", at10));
    rows.push_back(row);
  }
  std::vector<size_t> width(head.size(), 0);
  for (const auto& row : rows)
    for (size_t i = 0; i < row.size() && i < width.size(); ++i) width[i] = std::max(width[i], row[i].size());
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) line += pad(row[i], i + 1 < row.size() ? width[i] + 2 : 0);
    out << line << "\n";
  }
  out << "\nbest@10%: mean best / optimum after evaluating 10% of the space\n";
  return out.str();
}

nlohmann::json to_json(const ReplayReport& r) {
  nlohmann::json j;
  j["space"] = {{"name", r.space_name},
                {"info", r.space_info},
                {"configs", r.valid_configs},
                {"failed", r.failed_configs},
                {"optimum_us", r.optimum_us},
                {"optimum", to_json(r.optimum)}};
  j["seeds"] = r.seeds;
  j["budget"] = r.budget;
  j["strategies"] = nlohmann::json::array();
  for (const auto& s : r.strategies) {
    nlohmann::json js;
    js["strategy"] = s.strategy;
    js["to_reach"] = nlohmann::json::array();
    for (const auto& t : s.tolerances)
      js["to_reach"].push_back({{"tolerance", t.tolerance},
                                {"median", finite_or_null(t.median)},
                                {"p25", finite_or_null(t.p25)},
                                {"p75", finite_or_null(t.p75)},
                                {"median_fraction", finite_or_null(t.median_fraction)},
                                {"reached", t.reached}});
    js["mean_best_at_10pct"] = finite_or_null(mean_at_fraction(s, r.valid_configs, 0.10));
    js["curve"] = {{"mean", s.mean_curve}, {"median", s.median_curve}};
    js["runs"] = nlohmann::json::array();
    for (const auto& run : s.runs) js["runs"].push_back(run_json(run));
    j["strategies"].push_back(js);
  }
  return j;
}

std::string curves_csv(const ReplayReport& r) {
  std::ostringstream out;
  out << "strategy,evaluations,fraction_of_space,mean,median,p25,p75\n";
  for (const auto& s : r.strategies)
    for (size_t k = 0; k < s.mean_curve.size(); ++k)
      out << s.strategy << "," << k + 1 << ","
          << fmt("%.6g", static_cast<double>(k + 1) / static_cast<double>(r.valid_configs)) << ","
          << fmt("%.6g", s.mean_curve[k]) << "," << fmt("%.6g", s.median_curve[k]) << ","
          << fmt("%.6g", s.p25_curve[k]) << "," << fmt("%.6g", s.p75_curve[k]) << "\n";
  return out.str();
}

}  // namespace kf
