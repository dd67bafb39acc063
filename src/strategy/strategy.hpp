// Ask/tell search strategies. Pure and seeded: the same seed and the same observations give
// the same proposals. They see the space only through SearchSpace.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "space/space.hpp"

namespace kf {

struct Observation {
  Config config;
  std::optional<double> time_us;  // nullopt: the config failed (any status but ok)
};

struct StrategyContext {
  const SearchSpace* space = nullptr;
  uint64_t seed = 1;
  // Already evaluated for this shape and device: never proposed again, but told to the
  // strategy first (their outcomes are known).
  std::vector<Observation> known;
  // Seeds in priority order (best stored results for this shape, nearby shapes, other
  // devices, family defaults): the first generation is drawn from these before random.
  std::vector<Config> seeds;
  nlohmann::json options;  // strategy-specific (population size, ...)
};

class Strategy {
 public:
  virtual ~Strategy() = default;
  virtual std::string name() const = 0;
  // Up to n new configs to evaluate (none evaluated before, none repeated); empty when the
  // strategy has nothing left to propose.
  virtual std::vector<Config> ask(size_t n) = 0;
  // The outcome of a proposed config.
  virtual void tell(const Observation& o) = 0;
};

// "exhaustive", "random", "evo", "anneal"; throws std::invalid_argument listing the names.
std::unique_ptr<Strategy> make_strategy(const std::string& name, const StrategyContext& ctx);
std::vector<std::string> strategy_names();
// Proposes exactly `configs` (in order, each once, skipping known and invalid ones): what
// `kforge refresh` re-runs. Not a search strategy, so not among strategy_names().
std::unique_ptr<Strategy> make_listed_strategy(std::vector<Config> configs, const StrategyContext& ctx);

}  // namespace kf
