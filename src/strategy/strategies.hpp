// Constructors of the individual strategies, used by make_strategy (strategy.cpp).
#pragma once
#include <memory>

#include "strategy/strategy.hpp"

namespace kf::strategy_detail {

std::unique_ptr<Strategy> make_exhaustive(const StrategyContext& ctx);
std::unique_ptr<Strategy> make_random(const StrategyContext& ctx);
std::unique_ptr<Strategy> make_evo(const StrategyContext& ctx);
std::unique_ptr<Strategy> make_anneal(const StrategyContext& ctx);

}  // namespace kf::strategy_detail
