#include "strategy/surrogate.hpp"

#include <cmath>

namespace kf::strategy_detail {

AdditiveSurrogate::AdditiveSurrogate(const SearchSpace& space) {
  for (const auto& p : space.params()) cells_.emplace_back(p.values.size());
}

void AdditiveSurrogate::add(const std::vector<int>& idx, const std::optional<double>& time_us) {
  if (idx.size() != cells_.size()) return;
  const bool ok = time_us && *time_us > 0 && std::isfinite(*time_us);
  const double l = ok ? std::log(*time_us) : 0;
  if (ok) {
    worst_log_ = measured_ == 0 ? l : std::max(worst_log_, l);
    log_sum_ += l;
    ++measured_;
  } else {
    ++failed_;
  }
  for (size_t p = 0; p < idx.size(); ++p) {
    if (idx[p] < 0 || static_cast<size_t>(idx[p]) >= cells_[p].size()) continue;
    Cell& c = cells_[p][static_cast<size_t>(idx[p])];
    if (ok) {
      c.log_sum += l;
      ++c.measured;
    } else {
      ++c.failed;
    }
  }
}

double AdditiveSurrogate::failure_log() const { return worst_log_ + std::log(2.0); }

double AdditiveSurrogate::predict(const std::vector<int>& idx) const {
  if (size() == 0 || idx.size() != cells_.size()) return 0;
  const double fail = failure_log();
  const double mean = (log_sum_ + static_cast<double>(failed_) * fail) / static_cast<double>(size());
  double out = mean;
  for (size_t p = 0; p < idx.size(); ++p) {
    if (idx[p] < 0 || static_cast<size_t>(idx[p]) >= cells_[p].size()) continue;
    const Cell& c = cells_[p][static_cast<size_t>(idx[p])];
    const double n = static_cast<double>(c.measured + c.failed);
    if (n == 0) continue;
    const double value_mean = (c.log_sum + static_cast<double>(c.failed) * fail) / n;
    out += n / (n + kShrink) * (value_mean - mean);
  }
  return out;
}

}  // namespace kf::strategy_detail
