// SearchSpace: enumeration, sampling, neighbourhoods and repair over finite ordered domains.
#include "space/space.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>

namespace kf {

SearchSpace::SearchSpace(std::vector<ParamSpec> params, Validity valid, PrefixValidity prefix_valid,
                         LeafValidity leaf_valid)
    : params_(std::move(params)),
      valid_(std::move(valid)),
      prefix_valid_(std::move(prefix_valid)),
      leaf_valid_(prefix_valid_ ? std::move(leaf_valid) : LeafValidity{}) {
  for (size_t i = 0; i < params_.size(); ++i) {
    if (params_[i].values.empty())
      throw std::invalid_argument("parameter '" + params_[i].name + "' has an empty domain");
    for (size_t j = 0; j < i; ++j)
      if (params_[j].name == params_[i].name)
        throw std::invalid_argument("parameter '" + params_[i].name + "' declared twice");
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

bool SearchSpace::valid(const Config& c) const {
  try {
    encode(c);  // in the domain, with exactly the space's parameters
  } catch (const std::invalid_argument&) {
    return false;
  }
  return !valid_ || valid_(c);
}

const std::vector<Config>& SearchSpace::valid_configs() const {
  if (valid_cache_) return *valid_cache_;
  std::vector<Config> out;
  // Depth-first over the parameters in order, values in domain order, so the result is in
  // lexicographic index order; a prefix the PrefixValidity rejects is not extended (for the
  // attention family that skips most of a product of millions). With no parameters the
  // product holds exactly one (empty) config.
  Config prefix;
  auto walk = [&](auto&& self, size_t depth) -> void {
    if (depth == params_.size()) {
      if (leaf_valid_ ? leaf_valid_(prefix) : (!valid_ || valid_(prefix))) out.push_back(prefix);
      return;
    }
    const auto& p = params_[depth];
    for (const auto& value : p.values) {
      prefix.insert_or_assign(p.name, value);
      if (depth + 1 < params_.size() && prefix_valid_ && !prefix_valid_(prefix, depth + 1)) continue;
      self(self, depth + 1);
    }
    prefix.erase(p.name);
  };
  walk(walk, 0);
  valid_cache_ = std::move(out);
  return *valid_cache_;
}

std::optional<Config> SearchSpace::random_valid(std::mt19937_64& rng) const {
  const auto& all = valid_configs();
  if (all.empty()) return std::nullopt;
  std::uniform_int_distribution<size_t> pick(0, all.size() - 1);
  return all[pick(rng)];
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

std::optional<Config> SearchSpace::repair(const Config& c) const {
  if (valid(c)) return c;
  // Where the config is, per parameter, as an index. A numeric value
  // outside the domain is placed at its numerically nearest value; a missing or unknown
  // categorical value constrains nothing (-1: every index is at distance 0).
  std::vector<int> where(params_.size(), -1);
  for (size_t i = 0; i < params_.size(); ++i) {
    const auto& p = params_[i];
    auto it = c.find(p.name);
    if (it == c.end()) continue;
    double best_gap = std::numeric_limits<double>::infinity();
    for (size_t k = 0; k < p.values.size(); ++k) {
      if (p.values[k] == it->second) {
        where[i] = static_cast<int>(k);
        break;
      }
      if (is_string(it->second) || is_string(p.values[k])) continue;
      const double gap = std::fabs(as_double(p.values[k]) - as_double(it->second));
      if (gap < best_gap) {
        best_gap = gap;
        where[i] = static_cast<int>(k);
      }
    }
  }
  const auto& all = valid_configs();
  const Config* best = nullptr;
  long best_distance = std::numeric_limits<long>::max();
  for (const auto& candidate : all) {
    const std::vector<int> idx = encode(candidate);
    long distance = 0;
    for (size_t i = 0; i < idx.size(); ++i)
      if (where[i] >= 0) distance += std::abs(idx[i] - where[i]);
    if (distance < best_distance) {  // strict: ties keep the earlier config
      best_distance = distance;
      best = &candidate;
    }
  }
  if (!best) return std::nullopt;
  return *best;
}

}  // namespace kf
