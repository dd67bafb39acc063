// Sizes of the subtrees of a space's prefix tree: how many valid configs complete a prefix,
// each counted with the product of its values' prior weights. The sampler draws each value
// in proportion to its weight times this size, which makes its draws (close to) uniform over
// the valid configs, reweighted by the prior (docs/architecture.md, "Sampling").
#include <cmath>
#include <cstdint>
#include <limits>
#include <mutex>
#include <unordered_map>

#include "space/space.hpp"

namespace kf {

struct SubtreeSizes {
  std::mutex mu;
  std::unordered_map<std::string, SearchSpace::SubtreeSize> cache;
  std::vector<size_t> exact_failures;  // per depth: exact walks cut by their budget
};

std::shared_ptr<SubtreeSizes> make_subtree_sizes() { return std::make_shared<SubtreeSizes>(); }

namespace {

// The cache key of the first `depth` entries of path: two bytes per index, or four where a
// domain has 65,536 values or more (an imported space may), so that keys never collide. (The
// key also seeds the estimates: two bytes keep the usual spaces' draws as they were.)
std::string path_key(const std::vector<int>& path, size_t depth, bool wide) {
  const int bytes = wide ? 4 : 2;
  std::string key;
  key.reserve(static_cast<size_t>(bytes) * depth);
  for (size_t i = 0; i < depth; ++i)
    for (int b = 0; b < bytes; ++b) key.push_back(static_cast<char>((static_cast<uint32_t>(path[i]) >> (8 * b)) & 0xff));
  return key;
}

bool needs_wide_keys(const std::vector<ParamSpec>& params) {
  for (const auto& p : params)
    if (p.values.size() > 0xffff) return true;
  return false;
}

// An exact count by a depth-first walk below the prefix, cut after `budget` checks. Every
// subtree it finishes on the way is exact too, and is kept for the cache.
struct ExactCount {
  const SearchSpace& space;
  Config prefix;
  std::vector<int> path;
  size_t budget;
  bool wide;  // path_key's width
  std::vector<std::pair<std::string, double>> finished = {};

  bool child_ok(size_t depth) {
    return depth + 1 < space.params().size() ? space.prefix_ok(prefix, depth + 1) : space.leaf_ok(prefix);
  }

  // The weighted count below depth d; nullopt when the budget ran out.
  std::optional<double> below(size_t d) {
    const auto& params = space.params();
    const ParamSpec& p = params[d];
    double total = 0;
    for (size_t v = 0; v < p.values.size(); ++v) {
      const double w = p.weight(v);
      if (w == 0) continue;  // contributes nothing to a weighted count
      if (budget == 0) return std::nullopt;
      --budget;
      prefix.insert_or_assign(p.name, p.values[v]);
      path[d] = static_cast<int>(v);
      if (!child_ok(d)) continue;
      if (d + 1 == params.size()) {
        total += w;
        continue;
      }
      auto sub = below(d + 1);
      if (!sub) return std::nullopt;
      finished.emplace_back(path_key(path, d + 1, wide), *sub);
      total += w * *sub;
    }
    prefix.erase(p.name);
    return total;
  }
};

// Knuth's estimate from `probes` random paths below the prefix, each child taken in
// proportion to its weight: the product of the live children's weight sums along a path is
// an unbiased estimate of the weighted count.
double knuth_below(const SearchSpace& space, Config prefix, size_t depth, size_t probes, std::mt19937_64& rng,
                   size_t& checks) {
  const auto& params = space.params();
  double sum = 0;
  for (size_t probe = 0; probe < probes; ++probe) {
    Config c = prefix;
    double estimate = 1;
    for (size_t d = depth; d < params.size() && estimate > 0; ++d) {
      const ParamSpec& p = params[d];
      std::vector<size_t> live;
      std::vector<double> weights;
      for (size_t v = 0; v < p.values.size(); ++v) {
        if (p.weight(v) == 0) continue;
        c.insert_or_assign(p.name, p.values[v]);
        ++checks;
        if (d + 1 < params.size() ? space.prefix_ok(c, d + 1) : space.leaf_ok(c)) {
          live.push_back(v);
          weights.push_back(p.weight(v));
        }
      }
      double total = 0;
      for (double w : weights) total += w;
      estimate *= total;
      if (live.empty()) break;
      c.insert_or_assign(p.name, p.values[live[std::discrete_distribution<size_t>(weights.begin(), weights.end())(rng)]]);
    }
    sum += estimate;
  }
  return sum / static_cast<double>(probes);
}

}  // namespace

std::optional<SearchSpace::SubtreeSize> SearchSpace::subtree_size(const Config& prefix, const std::vector<int>& path,
                                                                  size_t depth, size_t* allowance) const {
  if (depth >= params_.size()) return SubtreeSize{leaf_ok(prefix) ? 1.0 : 0.0, true};
  const bool wide = needs_wide_keys(params_);
  const std::string key = path_key(path, depth, wide);
  bool try_exact = true;
  {
    std::lock_guard lock(sizes_->mu);
    auto it = sizes_->cache.find(key);
    if (it != sizes_->cache.end()) return it->second;
    if (sizes_->exact_failures.size() < params_.size()) sizes_->exact_failures.resize(params_.size(), 0);
    try_exact = sizes_->exact_failures[depth] < kExactFailures;
  }
  if (allowance && *allowance == 0) return std::nullopt;
  if (!try_exact) {
    // A product below that small is walked within the budget whatever the constraints.
    size_t product = 1;
    for (size_t d = depth; d < params_.size() && product <= kExactSizeChecks; ++d) product *= params_[d].values.size();
    try_exact = product * 2 <= kExactSizeChecks;
  }
  ExactCount exact{*this, prefix, path, try_exact ? kExactSizeChecks : 0, wide};
  exact.path.resize(params_.size(), -1);
  SubtreeSize size;
  size_t checks = 0;
  std::optional<double> n;
  if (try_exact) {
    n = exact.below(depth);
    checks += kExactSizeChecks - exact.budget;
  }
  if (n) {
    size = {*n, true};
  } else {
    // Seeded by the prefix, so that an estimate does not depend on which draw (or which
    // replay thread) asked first: replays stay reproducible.
    std::seed_seq seq(key.begin(), key.end());
    std::mt19937_64 rng(seq);
    size = {knuth_below(*this, prefix, depth, kSizeProbes, rng, checks), false};
  }
  if (allowance) *allowance -= std::min(*allowance, checks);
  std::lock_guard lock(sizes_->mu);
  if (try_exact && !n) ++sizes_->exact_failures[depth];
  // A bounded cache: dropping it changes no value, only what the next draws pay.
  if (sizes_->cache.size() + exact.finished.size() > kMaxCachedSizes) sizes_->cache.clear();
  for (auto& [k, count] : exact.finished) sizes_->cache.emplace(std::move(k), SubtreeSize{count, true});
  sizes_->cache.emplace(key, size);
  return size;
}

}  // namespace kf
