#include "winner/baseline_ratio.hpp"

#include <algorithm>
#include <cmath>

namespace kf {

namespace {

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// backend time / kforge time of a record that timed `config` beside the backend; 0 when it did not.
double paired_ratio(const BaselineRecord& b, const nlohmann::json& config) {
  if (!b.extra.is_object() || !b.extra.contains("side_by_side")) return 0;
  const nlohmann::json& p = b.extra.at("side_by_side");
  if (!p.is_object() || !p.contains("config") || !p.contains("kforge_us") || !p.at("kforge_us").is_number())
    return 0;
  const double us = p.at("kforge_us").get<double>();
  if (!(us > 0) || !std::isfinite(us) || p.at("config") != config) return 0;
  return b.median_us / us;
}

}  // namespace

std::vector<BaselineRatio> baseline_ratios(const std::vector<BaselineRecord>& all, const nlohmann::json& config,
                                           double winner_us) {
  std::vector<BaselineRatio> out;
  for (const BaselineRecord& typical : typical_baselines(all)) {
    BaselineRatio r{typical.backend, typical.median_us, winner_us > 0 ? typical.median_us / winner_us : 0, false};
    std::vector<double> paired;  // this backend's records on the same device that timed the winner beside it
    for (const BaselineRecord& b : all)
      if (b.backend == typical.backend && b.device.name == typical.device.name && b.device.cc == typical.device.cc &&
          b.device.sm_count == typical.device.sm_count)
        if (const double q = paired_ratio(b, config); q > 0) paired.push_back(q);
    if (!paired.empty()) {
      r.speedup = median_of(paired);
      r.side_by_side = true;
    }
    out.push_back(r);
  }
  return out;
}

}  // namespace kf
