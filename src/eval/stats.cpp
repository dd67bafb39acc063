#include "eval/stats.hpp"

#include <algorithm>
#include <cmath>

namespace kf {

double quantile_sorted(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const double pos = std::clamp(q, 0.0, 1.0) * static_cast<double>(sorted.size() - 1);
  const auto i = static_cast<size_t>(std::floor(pos));
  const size_t j = std::min(i + 1, sorted.size() - 1);
  const double f = pos - static_cast<double>(i);
  return sorted[i] + (sorted[j] - sorted[i]) * f;
}

std::pair<size_t, size_t> median_ci_ranks(size_t n) {
  if (n == 0) return {0, 0};
  // Interval [x_(j), x_(n-j+1)] (1-based) misses the median with probability
  // 2 * P(B <= j-1), B ~ Binomial(n, 1/2). Take the largest j with that <= 5%.
  const double dn = static_cast<double>(n);
  double cdf = 0;
  size_t best_j = 1;
  for (size_t k = 0; k < n; ++k) {
    const double dk = static_cast<double>(k);
    const double log_pmf = std::lgamma(dn + 1) - std::lgamma(dk + 1) - std::lgamma(dn - dk + 1) - dn * std::log(2.0);
    cdf += std::exp(log_pmf);  // P(B <= k)
    if (2 * cdf > 0.05) break;
    best_j = k + 1;  // j - 1 = k passes
  }
  best_j = std::min(best_j, (n + 1) / 2);
  return {best_j - 1, n - best_j};
}

Summary summarize(std::vector<double> samples) {
  Summary s;
  s.n = samples.size();
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  s.median = quantile_sorted(samples, 0.5);
  s.p10 = quantile_sorted(samples, 0.1);
  s.p90 = quantile_sorted(samples, 0.9);
  const auto [lo, hi] = median_ci_ranks(samples.size());
  s.ci_lo = samples[lo];
  s.ci_hi = samples[hi];
  return s;
}

bool ci_within(const Summary& s, double target_rel) {
  if (s.n == 0 || s.median <= 0) return false;
  return std::max(s.median - s.ci_lo, s.ci_hi - s.median) <= target_rel * s.median;
}

}  // namespace kf
