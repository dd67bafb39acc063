// The nearest valid config to a target, without listing the space: an iterative-deepening
// depth-first search over the parameters in order. At distance bound b it visits only the
// prefixes whose distance so far is at most b and that pass the prefix checks; the next bound
// is the least distance it had to cut off, so bounds jump over gaps (a prior's penalty) at once.
#include <climits>
#include <cstdlib>

#include "space/space.hpp"

namespace kf {

namespace {

struct NearestSearch {
  const SearchSpace& space;
  const SearchSpace::NearestQuery& q;
  std::mt19937_64* rng;
  long bound = 0;
  long next_bound = LONG_MAX;  // least distance cut off by the bound in this round
  size_t checks = 0;
  size_t ties = 0;
  bool out_of_checks = false;
  std::optional<Config> chosen = {};
  Config prefix = {};

  long cost(size_t d, size_t v) const {
    const ParamSpec& p = space.params()[d];
    const int t = q.target[d];
    long c = 0;
    if (t >= 0) {
      const bool categorical = !q.categorical.empty() && q.categorical[d];
      c = categorical ? (static_cast<int>(v) != t) : std::labs(static_cast<long>(v) - t);
    }
    if (!p.weights.empty() && p.weights[v] == 0 && static_cast<int>(v) != t) c += SearchSpace::kLastPenalty;
    return c;
  }

  // Leaves closer than the bound were all examined (and refused) in earlier rounds, so only
  // leaves at exactly the bound are checked. Returns true to stop the round.
  bool dfs(size_t depth, long dist) {
    const auto& params = space.params();
    if (depth == params.size()) {
      if (dist != bound) return false;
      ++checks;
      if (!space.leaf_ok(prefix) || (q.accept && !q.accept(prefix))) return false;
      if (!rng) {
        chosen = prefix;  // the first in walk order
        return true;
      }
      // Reservoir sampling: each config at the least distance equally likely.
      if (std::uniform_int_distribution<size_t>(0, ties++)(*rng) == 0) chosen = prefix;
      return false;
    }
    const ParamSpec& p = params[depth];
    for (size_t v = 0; v < p.values.size(); ++v) {
      if (checks >= q.max_checks) {
        out_of_checks = true;
        return true;
      }
      const long d = dist + cost(depth, v);
      if (d > bound) {
        next_bound = std::min(next_bound, d);
        continue;
      }
      prefix.insert_or_assign(p.name, p.values[v]);
      if (depth + 1 < params.size()) {
        ++checks;
        if (!space.prefix_ok(prefix, depth + 1)) continue;
      }
      if (dfs(depth + 1, d)) return true;
    }
    prefix.erase(p.name);
    return false;
  }
};

}  // namespace

std::optional<Config> SearchSpace::nearest(const NearestQuery& q, std::mt19937_64* rng) const {
  if (q.target.size() != params_.size())
    throw std::invalid_argument("nearest: target has " + std::to_string(q.target.size()) + " entries, space has " +
                                std::to_string(params_.size()) + " parameters");
  if (!q.categorical.empty() && q.categorical.size() != params_.size())
    throw std::invalid_argument("nearest: categorical flags do not match the parameters");
  NearestSearch s{*this, q, rng};
  for (;;) {
    s.next_bound = LONG_MAX;
    s.prefix.clear();
    s.dfs(0, 0);
    if (s.chosen || s.out_of_checks) return s.chosen;
    if (s.next_bound == LONG_MAX) return std::nullopt;  // nothing was cut off: no such config
    s.bound = s.next_bound;
  }
}

}  // namespace kf
