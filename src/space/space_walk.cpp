// The walks over a SearchSpace that never list it: the resumable depth-first walk (exhaustive
// order, exact counts), the randomized descent that samples valid configs, and Knuth's
// estimate of the number of valid configs.
#include <algorithm>
#include <cmath>
#include <limits>

#include "space/space.hpp"

namespace kf {

namespace {

// A value of prior weight 0 in a parameter that has some positive weight: tried last.
bool is_last(const ParamSpec& p, size_t v) { return !p.weights.empty() && p.weights[v] == 0; }

// The order in which a descent tries the values of parameter `depth` below its prefix: a
// weighted random permutation (Efraimidis-Spirakis keys: value v comes first with probability
// w_v / sum w), with w_v the value's prior weight times the (estimated) weighted number of
// valid configs below it, so that a config is drawn about as often as any other of the same
// prior weight. Values of weight 0, and values whose subtree looks empty, come after all
// others, in random order: the descent still finds a config wherever one exists.
std::vector<int> weighted_order(const SearchSpace& space, Config& prefix, std::vector<int>& path, size_t depth,
                                std::mt19937_64& rng, size_t& allowance) {
  const ParamSpec& p = space.params()[depth];
  std::vector<double> w(p.values.size());
  bool sized = true;  // every live value's size known: otherwise the prior alone decides
  for (size_t v = 0; v < p.values.size(); ++v) {
    w[v] = p.weight(v);
    if (w[v] == 0 || !sized) continue;
    prefix.insert_or_assign(p.name, p.values[v]);
    path[depth] = static_cast<int>(v);
    if (depth + 1 < space.params().size() && !space.prefix_ok(prefix, depth + 1)) {
      w[v] = 0;
      continue;
    }
    const auto size = space.subtree_size(prefix, path, depth + 1, &allowance);
    if (size) {
      w[v] *= size->weight;
    } else {
      sized = false;
    }
  }
  if (!sized)
    for (size_t v = 0; v < p.values.size(); ++v) w[v] = p.weight(v);
  path[depth] = -1;
  prefix.erase(p.name);
  std::uniform_real_distribution<double> u01(std::numeric_limits<double>::min(), 1.0);
  std::vector<std::pair<double, int>> keyed;
  keyed.reserve(p.values.size());
  for (size_t v = 0; v < p.values.size(); ++v) {
    const double u = u01(rng);
    // Smaller key first; weight 0 gets keys above every positive weight's.
    keyed.emplace_back(w[v] > 0 ? -std::log(u) / w[v] : std::numeric_limits<double>::max() / 2 + u,
                       static_cast<int>(v));
  }
  std::sort(keyed.begin(), keyed.end());
  std::vector<int> out;
  out.reserve(keyed.size());
  for (const auto& [key, v] : keyed) out.push_back(v);
  return out;
}

// One randomized depth-first descent with backtracking, cut after `budget` checks (the
// checks behind the subtree sizes are bounded on their own and not counted).
struct Descent {
  const SearchSpace& space;
  const SearchSpace::Validity& accept;
  std::mt19937_64& rng;
  size_t budget;
  size_t checks = 0;
  bool cut = false;  // the budget ended it before the tree was exhausted
  Config prefix = {};
  std::vector<int> path = std::vector<int>(space.params().size(), -1);
  size_t allowance = SearchSpace::kSizeChecksPerDraw;  // the size checks this draw may spend

  bool dfs(size_t depth) {
    const auto& params = space.params();
    if (depth == params.size()) {
      ++checks;
      return space.leaf_ok(prefix) && (!accept || accept(prefix));
    }
    const ParamSpec& p = params[depth];
    for (int v : weighted_order(space, prefix, path, depth, rng, allowance)) {
      if (checks >= budget) {
        cut = true;
        return false;
      }
      prefix.insert_or_assign(p.name, p.values[static_cast<size_t>(v)]);
      path[depth] = v;
      if (depth + 1 < params.size()) {
        ++checks;
        if (!space.prefix_ok(prefix, depth + 1)) continue;
      }
      if (dfs(depth + 1)) return true;
      if (cut) return false;
    }
    prefix.erase(p.name);
    path[depth] = -1;
    return false;
  }
};

}  // namespace

std::optional<Config> SearchSpace::random_valid(std::mt19937_64& rng, const Validity& accept,
                                                size_t max_checks) const {
  // Restarts with a doubling budget: a descent that wandered into a large subtree without
  // valid leaves (constraints decided only by the last parameters) starts over elsewhere,
  // while a small space is walked to the end at once, which proves it empty.
  size_t total = 0;
  size_t budget = 64 * std::max<size_t>(1, params_.size());
  for (;;) {
    Descent d{*this, accept, rng, std::min(budget, max_checks - std::min(total, max_checks))};
    const bool found = d.dfs(0);
    total += d.checks;
    if (found) return d.prefix;
    if (!d.cut) return std::nullopt;
    if (total >= max_checks)
      throw SpaceBudgetError("no valid config found in " + std::to_string(total) +
                             " checks of random descent (the constraints leave too little of the space; "
                             "narrow it with --fix)");
    budget *= 2;
  }
}

double SearchSpace::estimate_valid(std::mt19937_64& rng, size_t probes) const {
  if (probes == 0) return 0;
  double sum = 0;
  for (size_t probe = 0; probe < probes; ++probe) {
    // The product of the number of live children along one random path estimates the number
    // of leaves (Knuth 1975): an unbiased estimate, with a variance that grows with how
    // unevenly the valid configs spread over the subtrees.
    Config prefix;
    double estimate = 1;
    for (size_t d = 0; d < params_.size() && estimate > 0; ++d) {
      const ParamSpec& p = params_[d];
      std::vector<size_t> live;
      for (size_t v = 0; v < p.values.size(); ++v) {
        prefix.insert_or_assign(p.name, p.values[v]);
        if (d + 1 < params_.size() ? prefix_ok(prefix, d + 1) : leaf_ok(prefix)) live.push_back(v);
      }
      estimate *= static_cast<double>(live.size());
      if (live.empty()) break;
      prefix.insert_or_assign(p.name, p.values[live[std::uniform_int_distribution<size_t>(0, live.size() - 1)(rng)]]);
    }
    if (params_.empty()) estimate = leaf_ok(prefix) ? 1 : 0;
    sum += estimate;
  }
  return sum / static_cast<double>(probes);
}

size_t SearchSpace::count_valid(const std::function<void(size_t)>& progress) const {
  SpaceWalker walk(*this);
  size_t n = 0;
  while (walk.next()) {
    if (++n % 4096 == 0 && progress) progress(n);
  }
  return n;
}

std::vector<Config> SearchSpace::enumerate_valid() const {
  std::vector<Config> out;
  SpaceWalker walk(*this);
  while (auto c = walk.next()) out.push_back(std::move(*c));
  return out;
}

SpaceWalker::SpaceWalker(const SearchSpace& space, bool prefer_priors)
    : space_(&space), prefer_priors_(prefer_priors), idx_(space.params().size(), -1) {
  if (prefer_priors_) {
    const auto& ps = space.params();
    prefer_priors_ = std::any_of(ps.begin(), ps.end(), [](const ParamSpec& p) { return !p.weights.empty(); });
  }
}

bool SpaceWalker::allowed(size_t depth, size_t value) const {
  return !prefer_priors_ || pass_ == 1 || !is_last(space_->params()[depth], value);
}

std::optional<Config> SpaceWalker::next() {
  const auto& params = space_->params();
  const size_t n = params.size();
  if (done_) return std::nullopt;
  if (n == 0) {  // the product holds exactly one (empty) config
    done_ = true;
    ++checks_;
    return space_->leaf_ok(prefix_) ? std::optional<Config>(prefix_) : std::nullopt;
  }
  size_t d = 0;
  int from = 0;
  if (started_) {
    d = n - 1;
    from = idx_[d] + 1;
  }
  started_ = true;
  for (;;) {
    // The next value of parameter d from `from` on that passes the checks.
    const ParamSpec& p = params[d];
    int found = -1;
    for (int v = from; v < static_cast<int>(p.values.size()) && found < 0; ++v) {
      if (!allowed(d, static_cast<size_t>(v))) continue;
      prefix_.insert_or_assign(p.name, p.values[static_cast<size_t>(v)]);
      idx_[d] = v;
      ++checks_;
      bool ok;
      if (d + 1 < n) {
        ok = space_->prefix_ok(prefix_, d + 1);
      } else {
        // The second pass takes only configs the first could not: with a weight-0 value.
        bool uses_last = false;
        for (size_t k = 0; k < n && !uses_last; ++k) uses_last = is_last(params[k], static_cast<size_t>(idx_[k]));
        ok = (!prefer_priors_ || pass_ == 0 || uses_last) && space_->leaf_ok(prefix_);
      }
      if (ok) found = v;
    }
    if (found >= 0) {
      if (d + 1 == n) return prefix_;
      ++d;
      from = 0;
      continue;
    }
    prefix_.erase(p.name);
    idx_[d] = -1;
    if (d > 0) {
      --d;
      from = idx_[d] + 1;
      continue;
    }
    if (prefer_priors_ && pass_ == 0) {
      pass_ = 1;
      from = 0;
      continue;
    }
    done_ = true;
    return std::nullopt;
  }
}

}  // namespace kf
