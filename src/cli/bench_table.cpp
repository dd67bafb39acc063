#include "cli/bench_table.hpp"

#include <algorithm>
#include <cstdio>

#include "cli/common.hpp"

namespace kf::cli {

namespace {

nlohmann::json row_json(const Contender& c, const ContenderResult& r, std::optional<double> first_us) {
  nlohmann::json j = {{"label", c.label},
                      {"config", to_json(c.config)},
                      {"defines", to_json(c.defines)},
                      {"variant_hash", r.variant_hash},
                      {"status", to_string(r.status)}};
  if (!r.error.empty()) j["error"] = r.error;
  if (r.status != Status::Invalid && r.status != Status::CompileError) {
    j["max_abs"] = r.max_abs;
    j["rel_l2"] = r.rel_l2;
  }
  if (r.timing) {
    const TimingStats& t = *r.timing;
    j["median_us"] = t.median_us;
    j["ci_us"] = {t.ci_lo_us, t.ci_hi_us};
    j["p10_us"] = t.p10_us;
    j["p90_us"] = t.p90_us;
    j["tflops"] = r.tflops();
    j["rounds"] = r.rounds;
    if (!r.round_us.empty()) j["round_us"] = r.round_us;
    if (first_us && *first_us > 0) j["ratio"] = t.median_us / *first_us;
  }
  return j;
}

}  // namespace

BenchReport bench_report(const Family& f, const Shape& shape, const std::string& device,
                         const SideBySideOptions& options, const std::vector<Contender>& contenders,
                         const SideBySideRun& run) {
  const std::vector<ContenderResult>& results = run.contenders;
  int label_width = 6;
  for (const auto& c : contenders) label_width = std::max(label_width, static_cast<int>(c.label.size()));
  BenchReport rep{Table({{"config", "label", label_width, true},
                         {"median us", "median_us", 10},
                         {"95% CI us", "ci", 15},
                         {"rounds", "rounds", 6},
                         {"TFLOP/s", "tflops", 8, false, 1},
                         {"x first", "ratio", 8, false, 3},
                         {"status", "status", 0, true}}),
                  "",
                  {}};
  std::optional<double> first_us;
  if (!results.empty() && results.front().timing) first_us = results.front().timing->median_us;
  for (size_t i = 0; i < contenders.size() && i < results.size(); ++i) {
    const ContenderResult& r = results[i];
    std::map<std::string, std::string> text;
    if (r.timing) {
      text["median_us"] = fmt_us(r.timing->median_us);
      text["ci"] = fmt_us(r.timing->ci_lo_us) + "-" + fmt_us(r.timing->ci_hi_us);
    }
    if (!r.error.empty()) text["status"] = to_string(r.status) + ": " + r.error;
    rep.table.add(row_json(contenders[i], r, first_us), text);
  }
  char wall[32];
  std::snprintf(wall, sizeof wall, "%.1f s", run.wall_s);
  rep.heading = f.name + " " + to_string(shape) + " on " + device + ", " + rounds_text(options, run) + ", " + wall +
                " (gated first; no time for a config that fails the gate)";
  rep.envelope = {{"family", f.name},
                  {"shape", to_json(shape)},
                  {"device", device},
                  {"rounds", run.rounds},
                  {"rounds_asked", options.until_decided ? nlohmann::json("auto") : nlohmann::json(options.rounds)},
                  {"stop", to_string(run.stop)},
                  {"wall_s", run.wall_s}};
  return rep;
}

}  // namespace kf::cli
