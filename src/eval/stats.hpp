// Order statistics for timing samples. No CUDA here.
#pragma once
#include <cstddef>
#include <utility>
#include <vector>

namespace kf {

struct Summary {
  double median = 0, p10 = 0, p90 = 0;
  double ci_lo = 0, ci_hi = 0;  // 95% confidence interval of the median
  size_t n = 0;
};

// Quantile q in [0, 1] of sorted samples, interpolating linearly between order statistics.
double quantile_sorted(const std::vector<double>& sorted, double q);

// 0-based ranks (lo, hi) into n sorted samples such that [x_lo, x_hi] covers the population
// median with probability >= 95% (distribution-free: the count of samples below the median
// is Binomial(n, 1/2)). For n <= 5 no such pair exists and (0, n-1) is returned.
std::pair<size_t, size_t> median_ci_ranks(size_t n);

Summary summarize(std::vector<double> samples);

// True when the CI lies within +-target_rel of the median.
bool ci_within(const Summary& s, double target_rel);

}  // namespace kf
