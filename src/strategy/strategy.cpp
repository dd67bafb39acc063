#include "strategy/strategy.hpp"

#include <stdexcept>

#include "strategy/strategies.hpp"

namespace kf {

std::vector<std::string> strategy_names() { return {"exhaustive", "random", "evo", "anneal"}; }

std::unique_ptr<Strategy> make_strategy(const std::string& name, const StrategyContext& ctx) {
  if (ctx.space == nullptr) throw std::invalid_argument("make_strategy: no search space");
  if (name == "exhaustive") return strategy_detail::make_exhaustive(ctx);
  if (name == "random") return strategy_detail::make_random(ctx);
  if (name == "evo") return strategy_detail::make_evo(ctx);
  if (name == "anneal") return strategy_detail::make_anneal(ctx);
  std::string list;
  for (const auto& n : strategy_names()) list += (list.empty() ? "" : ", ") + n;
  throw std::invalid_argument("unknown strategy '" + name + "' (known: " + list + ")");
}

}  // namespace kf
