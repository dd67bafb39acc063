// A search space: named parameters with finite ordered domains, plus a validity predicate
// (the family's constraints). Pure and GPU-free; strategies work only through this class.
#pragma once
#include <cstddef>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "space/value.hpp"

namespace kf {

struct ParamSpec {
  std::string name;
  std::vector<Value> values;  // ordered: neighbouring indices are "nearby" values
};

class SearchSpace {
 public:
  using Validity = std::function<bool(const Config&)>;
  // Optional, for enumeration only: may the first `depth` parameters (the only ones in the
  // prefix) still complete to a valid config? It may let invalid prefixes through (the full
  // Validity decides at the end) but must never reject a prefix of a valid config.
  using PrefixValidity = std::function<bool(const Config& prefix, size_t depth)>;
  // Optional, for enumeration only, with a PrefixValidity: the exact validity of a complete
  // config whose every prefix passed it (so it may skip what the prefixes decided). Without
  // it the full Validity decides each complete config.
  using LeafValidity = std::function<bool(const Config&)>;
  SearchSpace(std::vector<ParamSpec> params, Validity valid, PrefixValidity prefix_valid = {},
              LeafValidity leaf_valid = {});

  const std::vector<ParamSpec>& params() const { return params_; }
  // Size of the Cartesian product, valid or not.
  size_t cardinality() const;
  bool valid(const Config& c) const;
  // All valid configs in lexicographic index order (computed once, then cached).
  const std::vector<Config>& valid_configs() const;

  // Index encoding: position of each parameter's value in its domain.
  std::vector<int> encode(const Config& c) const;  // throws std::invalid_argument
  Config decode(const std::vector<int>& idx) const;

  // A uniformly random valid config; nullopt if the space has none.
  std::optional<Config> random_valid(std::mt19937_64& rng) const;
  // Valid configs that differ from c in exactly one parameter, moved by one index step
  // (both directions), in deterministic order.
  std::vector<Config> neighbours(const Config& c) const;
  // The valid config nearest to c (sum of index distances, ties broken by order); c itself if valid.
  std::optional<Config> repair(const Config& c) const;

 private:
  std::vector<ParamSpec> params_;
  Validity valid_;
  PrefixValidity prefix_valid_;
  LeafValidity leaf_valid_;
  mutable std::optional<std::vector<Config>> valid_cache_;
};

}  // namespace kf
