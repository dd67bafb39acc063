// Pieces shared by the strategies: scores, the set of configs already seen, option parsing
// and a sampler of unseen valid configs. Internal to src/strategy/.
#pragma once
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <nlohmann/json.hpp>

#include "space/space.hpp"
#include "strategy/strategy.hpp"

namespace kf::strategy_detail {

// Lower is better. A failed config scores +inf: worse than any measured time, so it never
// wins a comparison, yet it is remembered (never proposed again).
inline double score(const std::optional<double>& time_us) {
  return time_us ? *time_us : std::numeric_limits<double>::infinity();
}

// Canonical keys of configs that must not be proposed again (known, proposed or told).
class SeenSet {
 public:
  // True if c was not in the set before.
  bool insert(const Config& c) { return keys_.insert(to_string(c)).second; }
  bool contains(const Config& c) const { return keys_.count(to_string(c)) != 0; }
  size_t size() const { return keys_.size(); }

 private:
  std::unordered_set<std::string> keys_;
};

// A generator seeded from the context seed. The seed is scrambled (splitmix64) so that
// consecutive seeds 1, 2, 3 give unrelated streams, and salted per strategy.
std::mt19937_64 make_rng(uint64_t seed, const std::string& salt);

// Reads strategy options, rejecting unknown names and wrong types with a one-line message
// ("evo: unknown option 'popsize' (known: population, ...)").
class Options {
 public:
  Options(std::string strategy, const nlohmann::json& options, std::vector<std::string> known);
  int64_t get_int(const std::string& name, int64_t def, int64_t min, int64_t max) const;
  double get_double(const std::string& name, double def, double min, double max) const;

 private:
  std::string strategy_;
  nlohmann::json options_;
};

// Draws valid configs that are not in a SeenSet. It first rejects seen draws of
// SearchSpace::random_valid (cheap while most of the space is unseen, and then distributed
// as random_valid is); after repeated collisions it lets the descent itself skip seen configs,
// which walks a small space to the end, so it reports exhaustion exactly. Never lists the space.
class UnseenSampler {
 public:
  explicit UnseenSampler(const SearchSpace& space) : space_(&space) {}
  // nullopt only when every valid config has been seen. Does not insert into seen. Throws
  // SpaceBudgetError when the descent found nothing within its budget.
  std::optional<Config> draw(std::mt19937_64& rng, const SeenSet& seen);

 private:
  static constexpr int kMaxRejections = 32;
  const SearchSpace* space_;
};

// Whether value v of p is one the spec's prior says to try last (weight 0).
inline bool tried_last(const ParamSpec& p, size_t v) { return !p.weights.empty() && p.weights[v] == 0; }

// Appends to out the configs of seeds that are valid (repaired when not) and unseen, in
// order, marking them seen, until out holds limit configs.
void take_seeds(const SearchSpace& space, const std::vector<Config>& seeds, SeenSet& seen,
                std::vector<Config>& out, size_t limit);

}  // namespace kf::strategy_detail
