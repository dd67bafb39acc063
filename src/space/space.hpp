// A search space: named parameters with finite ordered domains, plus a validity predicate
// (the family's constraints). Pure and GPU-free; strategies work only through this class.
//
// The space is never listed: random configs come from a randomized descent over the prefix
// checks, neighbours and repairs are generated and checked on the fly, and the exhaustive
// order is a resumable depth-first walk (SpaceWalker) that holds one config at a time.
#pragma once
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "space/value.hpp"

namespace kf {

struct ParamSpec {
  std::string name;
  std::vector<Value> values;  // ordered: neighbouring indices are "nearby" values
  // Search prior, one weight per value (empty: all 1). The sampler draws a valid config with
  // probability proportional to the product of its values' weights (random_valid); weight 0
  // means "only after every other value" (the spec's "priors", docs/family_spec.md).
  std::vector<double> weights = {};
  double weight(size_t i) const { return weights.empty() ? 1.0 : weights[i]; }
};

// Thrown when a bounded search (sampling, repair) ran out of checks before it found a valid
// config; the message says how many checks it made.
struct SpaceBudgetError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct SubtreeSizes;  // space_sizes.cpp
std::shared_ptr<SubtreeSizes> make_subtree_sizes();

class SearchSpace {
 public:
  using Validity = std::function<bool(const Config&)>;
  // Optional: may the first `depth` parameters (the only ones in the prefix) still complete
  // to a valid config? It may let invalid prefixes through (the full Validity decides at the
  // end) but must never reject a prefix of a valid config.
  using PrefixValidity = std::function<bool(const Config& prefix, size_t depth)>;
  // Optional, with a PrefixValidity: the exact validity of a complete config whose every
  // prefix passed it (so it may skip what the prefixes decided). Without it the full
  // Validity decides each complete config.
  using LeafValidity = std::function<bool(const Config&)>;
  SearchSpace(std::vector<ParamSpec> params, Validity valid, PrefixValidity prefix_valid = {},
              LeafValidity leaf_valid = {});

  const std::vector<ParamSpec>& params() const { return params_; }
  // Size of the Cartesian product, valid or not (saturates at SIZE_MAX).
  size_t cardinality() const;
  bool valid(const Config& c) const;

  // Index encoding: position of each parameter's value in its domain.
  std::vector<int> encode(const Config& c) const;  // throws std::invalid_argument
  Config decode(const std::vector<int>& idx) const;

  // A random valid config drawn by a randomized descent (see docs/architecture.md for its
  // distribution): per parameter, values in a random order weighted by the prior times the
  // size of the subtree below each (subtree_size), prefix checks on the way down, backtracking on a dead end, restarts after a bounded number of
  // checks. Configs `accept` rejects count as invalid. nullopt when the space provably holds
  // no (accepted) config; SpaceBudgetError when max_checks ran out first.
  static constexpr size_t kDefaultSampleChecks = 2'000'000;
  std::optional<Config> random_valid(std::mt19937_64& rng, const Validity& accept = {},
                                     size_t max_checks = kDefaultSampleChecks) const;
  // Knuth's estimator of the number of valid configs from `probes` random descents (each
  // counts the children that pass the prefix checks along its path): unbiased, noisy.
  double estimate_valid(std::mt19937_64& rng, size_t probes) const;
  // The exact number of valid configs, by a full walk; `progress(done_checks)` is called now
  // and then. Minutes on the attention space.
  size_t count_valid(const std::function<void(size_t valid_so_far)>& progress = {}) const;
  // Every valid config in walk order. For tests and tiny spaces: nothing in a search calls it.
  std::vector<Config> enumerate_valid() const;

  // Valid configs that differ from c in exactly one parameter, moved by one index step
  // (both directions), in deterministic order.
  std::vector<Config> neighbours(const Config& c) const;
  // The valid config nearest to c (sum of index distances, ties broken by walk order); c
  // itself if valid. A bounded search outward from c: nullopt when no valid config exists or
  // none was found within max_checks.
  std::optional<Config> repair(const Config& c, size_t max_checks = 200'000) const;

  // The nearest search behind repair, for strategies. target: an index per parameter, -1
  // for "any value" (distance 0). A categorical parameter counts 1 for any other value, an
  // ordered one its index steps; a value of prior weight 0 costs kLastPenalty more, so it is
  // taken only where nothing else is near. Among configs at the least distance that pass
  // `accept`, one is chosen uniformly at random with rng, or the first in walk order
  // without. nullopt when none exists or max_checks ran out first.
  struct NearestQuery {
    std::vector<int> target;
    std::vector<bool> categorical;  // empty: every parameter ordered
    Validity accept;                // empty: every valid config
    size_t max_checks = 200'000;
  };
  static constexpr long kLastPenalty = 1000;
  std::optional<Config> nearest(const NearestQuery& q, std::mt19937_64* rng = nullptr) const;

  // The number of valid configs that complete a prefix (its first `depth` parameters, at
  // indices path[0..depth)), each counted with the product of its remaining values' prior
  // weights (values of weight 0 count nothing). Exact when a walk below the prefix finishes
  // within kExactSizeChecks checks (not tried again at a depth where it failed kExactFailures
  // times, unless the product below is small enough to finish surely), Knuth's estimate from
  // kSizeProbes paths otherwise (seeded by the prefix: the same on every call). Cached per
  // prefix; thread-safe. With `allowance`, an uncached size costs its checks from it, and none
  // is computed once it is spent (nullopt): a draw's sampling work stays bounded.
  struct SubtreeSize {
    double weight = 0;
    bool exact = false;
  };
  static constexpr size_t kExactSizeChecks = 1024, kExactFailures = 4, kSizeProbes = 8,
                          kMaxCachedSizes = 1'000'000, kSizeChecksPerDraw = 50'000;
  std::optional<SubtreeSize> subtree_size(const Config& prefix, const std::vector<int>& path, size_t depth,
                                          size_t* allowance = nullptr) const;

  // The checks behind the walks (for SpaceWalker and the samplers).
  bool prefix_ok(const Config& prefix, size_t depth) const;
  bool leaf_ok(const Config& c) const;

 private:
  std::vector<ParamSpec> params_;
  Validity valid_;
  PrefixValidity prefix_valid_;
  LeafValidity leaf_valid_;
  // Shared by copies of the space (same domains and checks, so the same sizes).
  std::shared_ptr<SubtreeSizes> sizes_;
};

// A resumable depth-first walk over the valid configs, in lexicographic index order: constant
// memory, the first config at once. With prefer_priors, values of prior weight 0 come last:
// first every config that uses none of them, then (a second walk) every config that uses one.
class SpaceWalker {
 public:
  explicit SpaceWalker(const SearchSpace& space, bool prefer_priors = false);
  // The next valid config; nullopt when the walk is over.
  std::optional<Config> next();
  size_t checks() const { return checks_; }

 private:
  bool allowed(size_t depth, size_t value) const;
  const SearchSpace* space_;
  bool prefer_priors_;
  int pass_ = 0;  // with prefer_priors: 0 without weight-0 values, 1 with at least one
  std::vector<int> idx_;  // current path; idx_[d] == -1 below the current depth
  size_t depth_ = 0;
  Config prefix_;
  bool started_ = false, done_ = false;
  size_t checks_ = 0;
};

}  // namespace kf
