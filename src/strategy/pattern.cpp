#include "strategy/pattern.hpp"

#include <algorithm>
#include <cmath>

namespace kf::strategy_detail {

CompassPoll::CompassPoll(const std::vector<size_t>& sizes, const std::vector<bool>& ordered, double first_step)
    : ordered_(ordered) {
  for (size_t n : sizes) {
    sizes_.push_back(static_cast<int>(n));
    const double range = n > 1 ? static_cast<double>(n - 1) : 0.0;
    steps_.push_back(std::max(1, static_cast<int>(std::lround(first_step * range))));
  }
  ordered_.resize(sizes_.size(), true);
  used_.assign(2 * sizes_.size(), false);
}

std::optional<std::vector<int>> CompassPoll::target(const std::vector<int>& center, size_t j) const {
  const size_t p = j / 2;
  if (!ordered_[p] || sizes_[p] < 2) return std::nullopt;
  const int to = std::clamp(center[p] + (j % 2 == 0 ? -steps_[p] : steps_[p]), 0, sizes_[p] - 1);
  if (to == center[p]) return std::nullopt;
  std::vector<int> out = center;
  out[p] = to;
  return out;
}

void CompassPoll::end_round() {
  std::fill(used_.begin(), used_.end(), false);
  if (std::all_of(steps_.begin(), steps_.end(), [](int s) { return s <= 1; })) done_ = true;
  for (int& s : steps_) s = std::max(1, s / 2);
}

std::optional<std::vector<int>> CompassPoll::next(const std::vector<int>& center, const Check& fresh,
                                                  const Rank& rank) {
  if (center.size() != sizes_.size()) return std::nullopt;
  // A new center carries on with the round's remaining directions: restarting it at every
  // new best (found by breeding as often as by polls) would keep the steps from ever shrinking.
  if (center != center_) {
    center_ = center;
    done_ = false;
  }
  // Each round without a fresh target halves the steps, so this ends within log2(range) rounds.
  while (!done_) {
    std::optional<std::vector<int>> best;
    size_t best_j = 0;
    double best_rank = 0;
    for (size_t j = 0; j < used_.size(); ++j) {
      if (used_[j]) continue;
      auto t = target(center, j);
      if (!t || !fresh(*t)) {
        used_[j] = true;  // not possible, or measured already: nothing to learn there
        continue;
      }
      const double r = rank ? rank(*t) : 0.0;
      if (!best || r < best_rank) {
        best = std::move(t);
        best_j = j;
        best_rank = r;
      }
      if (!rank) break;  // parameter order: the first one will do
    }
    if (best) {
      used_[best_j] = true;
      if (std::all_of(used_.begin(), used_.end(), [](bool u) { return u; })) end_round();
      return best;
    }
    end_round();
  }
  return std::nullopt;
}

}  // namespace kf::strategy_detail
