// Evo's pair moves (strategy/pair_moves.hpp): which moves come, in what order, and that they
// find an optimum reached only by changing two parameters together in fewer evaluations than
// evo without them.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "strategy/pair_moves.hpp"
#include "strategy_trials.hpp"
#include "strategy/strategy.hpp"

using namespace kf;
using kf::strategy_detail::pair_moves;

namespace {

using Idx = std::vector<int>;

using kf::trials::grid;

// The convolution spaces' trap, small: P2..P4 a smooth bowl (best at index 5), times a table
// over the pair (P0, P1) whose best entry (2, 6) is isolated: every other entry of its row or
// column is 60% slower, while the rest lie between 1.05 and 1.35 (a pseudo-random pattern), so
// evo settles on some other pair first and no single move leads to the optimum.
double trap(const Idx& i) {
  double pair;
  if (i[0] == 2 && i[1] == 6)
    pair = 0.8;
  else if (i[0] == 2 || i[1] == 6)
    pair = 1.6;
  else
    pair = 1.05 + 0.3 * static_cast<double>((i[0] * 5 + i[1] * 3) % 7) / 6.0;
  double bowl = 1;
  for (size_t p = 2; p < i.size(); ++p) bowl += 0.05 * std::pow(i[p] - 5, 2);
  return pair * bowl;
}

}  // namespace

TEST(EvoPairMoves, NeighbouringPairsRankedAndFiltered) {
  const Idx center{1, 1, 1};
  const std::vector<size_t> sizes{3, 2, 2};
  auto any = [](const Idx&) { return true; };
  // span 1: (P0, P1) and (P1, P2) only; without a rank, parameter and value order.
  EXPECT_EQ(pair_moves(center, sizes, 1, {}, any, 10), (std::vector<Idx>{{0, 0, 1}, {2, 0, 1}, {1, 0, 0}}));
  // span 0 adds (P0, P2); the rank orders them (here: the lower the index sum, the sooner).
  auto sum = [](const Idx& i) { return static_cast<double>(i[0] + i[1] + i[2]); };
  EXPECT_EQ(pair_moves(center, sizes, 0, sum, any, 2), (std::vector<Idx>{{0, 0, 1}, {0, 1, 0}}));
  // Rejected targets (measured or invalid) are skipped, not repaired.
  std::set<Idx> measured = {{0, 0, 1}, {0, 1, 0}};
  auto fresh = [&](const Idx& i) { return !measured.count(i); };
  EXPECT_EQ(pair_moves(center, sizes, 0, sum, fresh, 2), (std::vector<Idx>{{1, 0, 0}, {2, 0, 1}}));
}

TEST(EvoOptions, PairMovesFindAnIsolatedPairSooner) {
  // 5 parameters of 8 values (32768 configs): over 21 seeds, the mean number of evaluations
  // to the optimum with evo's default pair moves is well below evo without them.
  const int64_t k = 8;
  const SearchSpace space = grid(5, k);
  const double optimum = trap({2, 6, 5, 5, 5});
  auto mean_evals = [&](const nlohmann::json& options) {
    return trials::mean_evals_to_optimum(space, "evo", options, trap, optimum, 1500);
  };
  const double without = mean_evals({{"pairs", 0}}), with = mean_evals(nlohmann::json::object());
  EXPECT_LT(with, 0.8 * without) << "mean evaluations to the optimum: with pair moves " << with << ", without "
                                 << without;
  StrategyContext bad;
  bad.space = &space;
  bad.options = {{"pair_span", -1}};
  EXPECT_THROW(make_strategy("evo", bad), std::invalid_argument);
}
