// A cheap surrogate of a kernel's time over a search space, fitted to the outcomes told so far:
// an additive model of log time over parameter values (each value's mean deviation from the
// overall mean, shrunk toward 0 while it has few measurements). Evo uses it to screen children
// before spending an evaluation on one. Failed configs count as twice the slowest time, so the
// model also steers away from values that often fail.
#pragma once
#include <cstddef>
#include <optional>
#include <vector>

#include "space/space.hpp"

namespace kf::strategy_detail {

class AdditiveSurrogate {
 public:
  explicit AdditiveSurrogate(const SearchSpace& space);
  // idx: SearchSpace::encode(config); time_us: nullopt for a failed config.
  void add(const std::vector<int>& idx, const std::optional<double>& time_us);
  size_t size() const { return measured_ + failed_; }
  // Predicted log time (lower is better); the overall mean for values never measured.
  double predict(const std::vector<int>& idx) const;

 private:
  struct Cell {
    double log_sum = 0;
    size_t measured = 0, failed = 0;
  };
  double failure_log() const;
  std::vector<std::vector<Cell>> cells_;  // [parameter][value]
  double log_sum_ = 0, worst_log_ = 0;
  size_t measured_ = 0, failed_ = 0;
  // A value's deviation counts n / (n + kShrink) of its mean: one lucky config does not
  // make a value look best.
  static constexpr double kShrink = 2.0;
};

}  // namespace kf::strategy_detail
