// SearchSpace: domains, encoding, validity, neighbourhoods and repair over finite ordered
// domains (the walks and the samplers are in space_walk.cpp, the nearest search in
// space_nearest.cpp).
#include "space/space.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <unordered_set>

namespace kf {

SearchSpace::SearchSpace(std::vector<ParamSpec> params, Validity valid, PrefixValidity prefix_valid,
                         LeafValidity leaf_valid)
    : params_(std::move(params)),
      valid_(std::move(valid)),
      prefix_valid_(std::move(prefix_valid)),
      leaf_valid_(prefix_valid_ ? std::move(leaf_valid) : LeafValidity{}),
      sizes_(make_subtree_sizes()) {
  std::unordered_set<std::string> names;  // a search per parameter would be quadratic
  for (size_t i = 0; i < params_.size(); ++i) {
    if (params_[i].values.empty())
      throw std::invalid_argument("parameter '" + params_[i].name + "' has an empty domain");
    if (!names.insert(params_[i].name).second)
      throw std::invalid_argument("parameter '" + params_[i].name + "' declared twice");
    auto& w = params_[i].weights;
    if (!w.empty() && w.size() != params_[i].values.size())
      throw std::invalid_argument("parameter '" + params_[i].name + "': " + std::to_string(w.size()) +
                                  " prior weights for " + std::to_string(params_[i].values.size()) + " values");
    for (double x : w)
      if (!(x >= 0) || !std::isfinite(x))
        throw std::invalid_argument("parameter '" + params_[i].name + "': prior weights must be finite and >= 0");
    // All zero says nothing about order: the same as no prior.
    if (std::all_of(w.begin(), w.end(), [](double x) { return x == 0; })) w.clear();
  }
}

size_t SearchSpace::cardinality() const {
  size_t n = 1;
  for (const auto& p : params_) {
    // Saturate: a product this large is never enumerated anyway.
    if (__builtin_mul_overflow(n, p.values.size(), &n)) return std::numeric_limits<size_t>::max();
  }
  return n;
}

std::vector<int> SearchSpace::encode(const Config& c) const {
  if (c.size() != params_.size()) {
    for (const auto& [name, value] : c) {
      bool known = false;
      for (const auto& p : params_) known = known || p.name == name;
      if (!known) throw std::invalid_argument("unknown parameter '" + name + "'");
    }
  }
  std::vector<int> idx(params_.size());
  for (size_t i = 0; i < params_.size(); ++i) {
    const auto& p = params_[i];
    auto it = c.find(p.name);
    if (it == c.end()) throw std::invalid_argument("missing parameter '" + p.name + "'");
    size_t k = 0;
    while (k < p.values.size() && p.values[k] != it->second) ++k;
    if (k == p.values.size())
      throw std::invalid_argument("value " + to_string(it->second) + " is not in the domain of '" + p.name + "'");
    idx[i] = static_cast<int>(k);
  }
  return idx;
}

Config SearchSpace::decode(const std::vector<int>& idx) const {
  if (idx.size() != params_.size())
    throw std::invalid_argument("index vector has " + std::to_string(idx.size()) + " entries, space has " +
                                std::to_string(params_.size()) + " parameters");
  Config c;
  for (size_t i = 0; i < params_.size(); ++i) {
    if (idx[i] < 0 || static_cast<size_t>(idx[i]) >= params_[i].values.size())
      throw std::invalid_argument("index " + std::to_string(idx[i]) + " out of range for '" + params_[i].name + "'");
    c.emplace(params_[i].name, params_[i].values[static_cast<size_t>(idx[i])]);
  }
  return c;
}

bool SearchSpace::prefix_ok(const Config& prefix, size_t depth) const {
  return !prefix_valid_ || prefix_valid_(prefix, depth);
}

bool SearchSpace::leaf_ok(const Config& c) const {
  if (leaf_valid_) return leaf_valid_(c);
  return !valid_ || valid_(c);
}

bool SearchSpace::valid(const Config& c) const {
  try {
    encode(c);  // in the domain, with exactly the space's parameters
  } catch (const std::invalid_argument&) {
    return false;
  }
  return !valid_ || valid_(c);
}

std::vector<Config> SearchSpace::neighbours(const Config& c) const {
  const std::vector<int> base = encode(c);
  std::vector<Config> out;
  for (size_t i = 0; i < params_.size(); ++i) {
    for (int step : {-1, +1}) {
      std::vector<int> idx = base;
      idx[i] += step;
      if (idx[i] < 0 || static_cast<size_t>(idx[i]) >= params_[i].values.size()) continue;
      Config n = decode(idx);
      if (!valid_ || valid_(n)) out.push_back(std::move(n));
    }
  }
  return out;
}

std::optional<Config> SearchSpace::repair(const Config& c, size_t max_checks) const {
  if (valid(c)) return c;
  // Where the config is, per parameter, as an index. A numeric value outside the domain is
  // placed at its numerically nearest value; a missing or unknown categorical value
  // constrains nothing (-1: every index is at distance 0).
  NearestQuery q;
  q.target.assign(params_.size(), -1);
  q.max_checks = max_checks;
  for (size_t i = 0; i < params_.size(); ++i) {
    const auto& p = params_[i];
    auto it = c.find(p.name);
    if (it == c.end()) continue;
    double best_gap = std::numeric_limits<double>::infinity();
    for (size_t k = 0; k < p.values.size(); ++k) {
      if (p.values[k] == it->second) {
        q.target[i] = static_cast<int>(k);
        break;
      }
      if (is_string(it->second) || is_string(p.values[k])) continue;
      const double gap = std::fabs(as_double(p.values[k]) - as_double(it->second));
      if (gap < best_gap) {
        best_gap = gap;
        q.target[i] = static_cast<int>(k);
      }
    }
  }
  return nearest(q);
}

}  // namespace kf
