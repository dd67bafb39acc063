#include "strategy/surrogate.hpp"

#include <cmath>

namespace kf::strategy_detail {

AdditiveSurrogate::AdditiveSurrogate(const SearchSpace& space, bool pairs) : pairs_(pairs) {
  for (const auto& p : space.params()) cells_.emplace_back(p.values.size());
  if (pairs_)
    for (size_t p = 0; p < cells_.size(); ++p)
      for (size_t q = p + 1; q < cells_.size(); ++q) pair_cells_.emplace_back(cells_[p].size() * cells_[q].size());
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
  auto count = [&](Cell& c) {
    if (ok) {
      c.log_sum += l;
      ++c.measured;
    } else {
      ++c.failed;
    }
  };
  auto in_range = [&](size_t p) { return idx[p] >= 0 && static_cast<size_t>(idx[p]) < cells_[p].size(); };
  for (size_t p = 0; p < idx.size(); ++p)
    if (in_range(p)) count(cells_[p][static_cast<size_t>(idx[p])]);
  if (!pairs_) return;
  size_t k = 0;
  for (size_t p = 0; p < idx.size(); ++p)
    for (size_t q = p + 1; q < idx.size(); ++q, ++k)
      if (in_range(p) && in_range(q))
        count(pair_cells_[k][static_cast<size_t>(idx[p]) * cells_[q].size() + static_cast<size_t>(idx[q])]);
}

// Value v of parameter p: its shrunk deviation from the mean.
double AdditiveSurrogate::value_dev(size_t p, int v, double mean, double fail) const {
  if (v < 0 || static_cast<size_t>(v) >= cells_[p].size()) return 0;
  const Cell& c = cells_[p][static_cast<size_t>(v)];
  const double n = static_cast<double>(c.measured + c.failed);
  if (n == 0) return 0;
  return n / (n + kShrink) * ((c.log_sum + static_cast<double>(c.failed) * fail) / n - mean);
}

double AdditiveSurrogate::failure_log() const { return worst_log_ + std::log(2.0); }

double AdditiveSurrogate::predict(const std::vector<int>& idx) const {
  if (size() == 0 || idx.size() != cells_.size()) return 0;
  const double fail = failure_log();
  const double mean = (log_sum_ + static_cast<double>(failed_) * fail) / static_cast<double>(size());
  std::vector<double> dev(idx.size());
  double out = mean;
  for (size_t p = 0; p < idx.size(); ++p) out += dev[p] = value_dev(p, idx[p], mean, fail);
  if (!pairs_) return out;
  size_t k = 0;
  for (size_t p = 0; p < idx.size(); ++p)
    for (size_t q = p + 1; q < idx.size(); ++q, ++k) {
      if (idx[p] < 0 || idx[q] < 0 || static_cast<size_t>(idx[p]) >= cells_[p].size() ||
          static_cast<size_t>(idx[q]) >= cells_[q].size())
        continue;
      const Cell& c = pair_cells_[k][static_cast<size_t>(idx[p]) * cells_[q].size() + static_cast<size_t>(idx[q])];
      const double n = static_cast<double>(c.measured + c.failed);
      if (n == 0) continue;
      const double cell_mean = (c.log_sum + static_cast<double>(c.failed) * fail) / n;
      out += n / (n + kPairShrink) * (cell_mean - (mean + dev[p] + dev[q]));
    }
  return out;
}

}  // namespace kf::strategy_detail
