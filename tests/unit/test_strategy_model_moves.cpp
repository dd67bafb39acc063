// Evo's model moves (strategy/pair_moves.hpp, single_moves): the best config with one parameter moved
// anywhere in its range, ranked by the surrogate; and that they reach an optimum whose good value lies far
// from the value evo settled on, in fewer evaluations than evo without them.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "strategy/pair_moves.hpp"
#include "strategy/strategy.hpp"
#include "strategy_trials.hpp"

using namespace kf;
using kf::strategy_detail::single_moves;

namespace {

using Idx = std::vector<int>;

// The convolution spaces' block sizes, small: P0 has 16 values of which only 3, 7 and 15 are good (the
// powers of two among 16..256), 7 best by 3%, every other value 40% slower; P1..P3 a smooth bowl (best
// at index 2). Breeding walks P0 one step at a time, so from 15 it meets only slow values before 7.
double octaves(const Idx& i) {
  const double block = i[0] == 7 ? 1.0 : (i[0] == 3 || i[0] == 15) ? 1.03 : 1.4;
  double bowl = 1;
  for (size_t p = 1; p < i.size(); ++p) bowl += 0.05 * std::pow(i[p] - 2, 2);
  return block * bowl;
}

}  // namespace

TEST(EvoModelMoves, OneParameterOverItsWholeRangeRankedAndFiltered) {
  const Idx center{1, 0};
  const std::vector<size_t> sizes{3, 3};
  auto any = [](const Idx&) { return true; };
  // Without a rank: parameter and value order, every other value of each parameter.
  EXPECT_EQ(single_moves(center, sizes, {}, any, 10), (std::vector<Idx>{{0, 0}, {2, 0}, {1, 1}, {1, 2}}));
  // The rank orders them (here: the higher the index sum, the sooner), and k caps them.
  auto neg_sum = [](const Idx& i) { return -static_cast<double>(i[0] + i[1]); };
  EXPECT_EQ(single_moves(center, sizes, neg_sum, any, 2), (std::vector<Idx>{{1, 2}, {2, 0}}));
  // Rejected targets (measured or invalid) are skipped, not repaired.
  std::set<Idx> measured = {{1, 2}};
  auto fresh = [&](const Idx& i) { return !measured.count(i); };
  EXPECT_EQ(single_moves(center, sizes, neg_sum, fresh, 2), (std::vector<Idx>{{2, 0}, {1, 1}}));
}

TEST(EvoOptions, ModelMovesReachAFarGoodValueSooner) {
  // P0 of 16 values, P1..P3 of 5 (2000 configs): over 21 seeds, the mean evaluations to the optimum with
  // evo's default model moves is well below evo without them.
  std::vector<ParamSpec> params;
  for (size_t p = 0; p < 4; ++p) {
    ParamSpec s{"P" + std::to_string(p), {}};
    for (int64_t v = 0; v < (p == 0 ? 16 : 5); ++v) s.values.push_back(v);
    params.push_back(s);
  }
  const SearchSpace space(params, nullptr);
  const double optimum = octaves({7, 2, 2, 2});
  auto mean_evals = [&](const nlohmann::json& options) {
    return trials::mean_evals_to_optimum(space, "evo", options, octaves, optimum, 1000);
  };
  const double without = mean_evals({{"model_moves", 0}}), with = mean_evals(nlohmann::json::object());
  EXPECT_LT(with, 0.8 * without) << "mean evaluations to the optimum: with model moves " << with << ", without "
                                 << without;
  StrategyContext bad;
  bad.space = &space;
  bad.options = {{"model_moves", -1}};
  EXPECT_THROW(make_strategy("evo", bad), std::invalid_argument);
}
