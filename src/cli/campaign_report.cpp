#include "cli/campaign_report.hpp"

#include <cstdio>

#include "cli/common.hpp"

namespace kf::cli {

nlohmann::json outcome_json(const CampaignOutcome& o) {
  nlohmann::json shapes = nlohmann::json::array();
  for (const auto& s : o.shapes) {
    nlohmann::json j = {{"shape", to_json(s.shape)}, {"evaluated", s.evaluated}};
    if (s.best && s.best->timing) {
      j["best"] = {{"config", to_json(s.best->config)},
                   {"median_us", s.best->timing->median_us},
                   {"tflops", s.best->flops / (s.best->timing->median_us * 1e-6) / 1e12}};
    }
    nlohmann::json rem = nlohmann::json::array();
    for (const auto& r : s.remeasured)
      rem.push_back({{"config", to_json(r.config)}, {"timing", to_json(r.timing)},
                     {"tied_with_best", r.tied_with_best}, {"rounds", r.rounds}});
    j["remeasured"] = rem;
    if (s.remeasure.rounds > 0)
      j["remeasure"] = {{"rounds", s.remeasure.rounds}, {"stop", to_string(s.remeasure.stop)},
                        {"wall_s", s.remeasure.wall_s}, {"cap_s", s.remeasure.cap_s}};
    shapes.push_back(j);
  }
  return {{"campaign", o.campaign_id}, {"status", o.status},     {"wall_s", o.wall_s},
          {"compile_cpu_s", o.compile_s}, {"gpu_s", o.gpu_s},   {"compiled", o.compiled},
          {"cache_hits", o.cache_hits},  {"status_counts", o.status_counts}, {"shapes", shapes}};
}

void print_outcome(const CampaignOutcome& o) {
  std::printf("\ncampaign %lld %s: %.1f s wall, %.1f s NVRTC (CPU, %zu compiled, %zu cached), "
              "%.1f s in workers\n",
              static_cast<long long>(o.campaign_id), o.status.c_str(), o.wall_s, o.compile_s,
              o.compiled, o.cache_hits, o.gpu_s);
  std::printf("status:");
  for (const auto& [k, v] : o.status_counts) std::printf(" %s %d", k.c_str(), v);
  std::printf("\n");
  for (const auto& s : o.shapes) {
    std::printf("\n%s  (%zu evaluated now)\n", to_string(s.shape).c_str(), s.evaluated);
    if (!s.best || !s.best->timing) {
      std::printf("  no config passed the gate\n");
      continue;
    }
    const double tflops = s.best->flops / (s.best->timing->median_us * 1e-6) / 1e12;
    std::printf("  best  %s us  %.1f TFLOP/s  %s\n", fmt_us(s.best->timing->median_us).c_str(),
                tflops, to_string(s.best->config).c_str());
    if (!s.remeasured.empty()) {
      const auto& m = s.remeasure;
      char cap[48] = "";
      if (m.cap_s > 0) std::snprintf(cap, sizeof cap, " (cap %.1f s)", m.cap_s);
      std::printf("  top %zu re-measured interleaved: %d round%s, stopped: %s, %.1f s%s\n"
                  "  (median, 95%% CI, rounds timed):\n",
                  s.remeasured.size(), m.rounds, m.rounds == 1 ? "" : "s", to_string(m.stop).c_str(), m.wall_s, cap);
      for (const auto& r : s.remeasured)
        std::printf("    %9s us [%s, %s] %2d %s %s\n", fmt_us(r.timing.median_us).c_str(),
                    fmt_us(r.timing.ci_lo_us).c_str(), fmt_us(r.timing.ci_hi_us).c_str(), r.rounds,
                    r.tied_with_best ? "tie " : "    ", to_string(r.config).c_str());
    }
  }
}

std::string resume_command(const Globals& g, int64_t campaign_id) {
  return kforge_command(g) + " resume " + std::to_string(campaign_id);
}

void report_outcome(const CampaignOutcome& o, bool json, const Globals& g) {
  const bool stopped = o.status == "stopped";
  if (json) {
    nlohmann::json j = outcome_json(o);
    if (stopped) j["resume_command"] = resume_command(g, o.campaign_id);
    print_json(j);
    return;
  }
  print_outcome(o);
  if (stopped) std::printf("\nresume with: %s\n", resume_command(g, o.campaign_id).c_str());
}

}  // namespace kf::cli
