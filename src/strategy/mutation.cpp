#include "strategy/mutation.hpp"

#include <algorithm>

#include "strategy/common.hpp"

namespace kf::strategy_detail {

std::vector<std::pair<int, double>> move_targets(const SearchSpace& space, size_t p, int from) {
  const ParamSpec& spec = space.params()[p];
  std::vector<std::pair<int, double>> out;
  for (size_t v = 0; v < spec.values.size(); ++v)
    if (static_cast<int>(v) != from && !tried_last(spec, v)) out.emplace_back(static_cast<int>(v), spec.weight(v));
  if (out.empty())
    for (size_t v = 0; v < spec.values.size(); ++v)
      if (static_cast<int>(v) != from) out.emplace_back(static_cast<int>(v), 1.0);
  return out;
}

void mutate_params(const SearchSpace& space, const std::vector<bool>& categorical, double jump,
                   std::vector<int>& idx, size_t k, std::mt19937_64& rng) {
  std::vector<size_t> movable;
  for (size_t i = 0; i < idx.size(); ++i)
    if (!move_targets(space, i, idx[i]).empty()) movable.push_back(i);
  std::shuffle(movable.begin(), movable.end(), rng);
  if (movable.size() > k) movable.resize(k);
  std::bernoulli_distribution coin_jump(jump);
  for (size_t p : movable) {
    const auto to = move_targets(space, p, idx[p]);
    if (categorical[p] || coin_jump(rng)) {
      std::vector<double> w;
      for (const auto& t : to) w.push_back(t.second);
      idx[p] = to[std::discrete_distribution<size_t>(w.begin(), w.end())(rng)].first;
    } else {
      // The nearest allowed value below or above, either side equally likely.
      int below = -1, above = -1;
      for (const auto& t : to) {
        if (t.first < idx[p]) below = t.first;
        if (t.first > idx[p] && above < 0) above = t.first;
      }
      const bool up = below < 0 || (above >= 0 && std::bernoulli_distribution(0.5)(rng));
      idx[p] = up ? above : below;
    }
  }
}

}  // namespace kf::strategy_detail
