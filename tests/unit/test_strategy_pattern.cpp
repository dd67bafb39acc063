// Evo's compass poll (strategy/pattern.hpp) and the options that shape evo's generations
// (initial, offspring, pattern): the poll's steps and rounds, and that polling finds the
// optimum of a smooth landscape in fewer evaluations than breeding alone.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "strategy/pattern.hpp"
#include "strategy/strategy.hpp"
#include "strategy_trials.hpp"

using namespace kf;
using kf::strategy_detail::CompassPoll;

namespace {

using Idx = std::vector<int>;
const auto any_target = [](const Idx&) { return true; };

// P0..P{n-1}, each 0..k-1, valid where the index sum is not `hole` (-1: every config).
SearchSpace grid(size_t n, int64_t k, int64_t hole = -1) {
  std::vector<ParamSpec> params;
  for (size_t i = 0; i < n; ++i) {
    ParamSpec p{"P" + std::to_string(i), {}};
    for (int64_t v = 0; v < k; ++v) p.values.push_back(v);
    params.push_back(p);
  }
  return SearchSpace(params, [n, hole](const Config& c) {
    int64_t sum = 0;
    for (size_t i = 0; i < n; ++i) sum += std::get<int64_t>(c.at("P" + std::to_string(i)));
    return sum != hole;
  });
}

// Smooth and separable: a bowl whose bottom is at index 3*k/4 of every parameter.
double bowl(const Idx& idx, int64_t k) {
  double t = 1;
  for (int i : idx) t += std::pow(static_cast<double>(i) - 0.75 * static_cast<double>(k - 1), 2);
  return t;
}

}  // namespace

TEST(EvoCompassPoll, RoundsHalveTheStepsDownToOne) {
  CompassPoll poll({9, 5}, {true, true}, 0.5);
  EXPECT_EQ(poll.steps(), (Idx{4, 2}));
  const Idx center{4, 2};
  std::vector<Idx> got;
  while (auto t = poll.next(center, any_target)) got.push_back(*t);
  const std::vector<Idx> want = {{0, 2}, {8, 2}, {4, 0}, {4, 4},   // steps 4, 2
                                 {2, 2}, {6, 2}, {4, 1}, {4, 3},   // 2, 1
                                 {3, 2}, {5, 2}, {4, 1}, {4, 3}};  // 1, 1: then done
  EXPECT_EQ(got, want);
  EXPECT_FALSE(poll.next(center, any_target));  // nothing more around the same center
  // A new center restarts the round at the steps reached.
  auto t = poll.next({5, 2}, any_target);
  ASSERT_TRUE(t);
  EXPECT_EQ(*t, (Idx{4, 2}));
}

TEST(EvoCompassPoll, RankOrdersARound) {
  // Evo ranks a round's polls by its surrogate: here higher P1 predicts faster.
  CompassPoll poll({9, 5}, {true, true}, 0.5);
  auto rank = [](const Idx& i) { return -static_cast<double>(i[1]); };
  std::vector<Idx> got;
  for (int k = 0; k < 4; ++k) got.push_back(poll.next({4, 2}, any_target, rank).value());
  EXPECT_EQ(got, (std::vector<Idx>{{4, 4}, {0, 2}, {8, 2}, {4, 0}}));  // ties in parameter order
  EXPECT_EQ(poll.steps(), (Idx{2, 1}));                                // the round is over
}

TEST(EvoCompassPoll, SkipsCategoricalsEdgesAndMeasuredTargets) {
  CompassPoll poll({5, 3, 1}, {true, false, true}, 0.25);  // steps 1, -, 1
  const Idx center{0, 1, 0};
  std::set<Idx> measured = {Idx{1, 1, 0}};
  auto fresh = [&](const Idx& i) { return !measured.count(i); };
  // P0 cannot go below 0 and its step up is measured; P1 is categorical; P2 has one value.
  EXPECT_FALSE(poll.next(center, fresh));
  measured.clear();
  CompassPoll again({5, 3, 1}, {true, false, true}, 0.25);
  auto t = again.next(center, fresh);
  ASSERT_TRUE(t);
  EXPECT_EQ(*t, (Idx{1, 1, 0}));
  EXPECT_THROW(CompassPoll({2}, {true}, 0.5).next({0, 0}, any_target).value(), std::bad_optional_access);
}

TEST(EvoOptions, InitialAndOffspringSizeTheGenerations) {
  const SearchSpace space = grid(3, 8);
  StrategyContext ctx;
  ctx.space = &space;
  // No polls: elite neighbours and polls come on top of the offspring.
  ctx.options = {{"initial", 3}, {"offspring", 5}, {"population", 6}, {"pattern", 0}, {"elite", 0}};
  auto s = make_strategy("evo", ctx);
  auto first = s->ask(100);
  EXPECT_EQ(first.size(), 3u);
  for (const auto& c : first) s->tell({c, bowl(space.encode(c), 8)});
  EXPECT_EQ(s->ask(100).size(), 5u);
  ctx.options = {{"offspring", 0}};
  EXPECT_THROW(make_strategy("evo", ctx), std::invalid_argument);
  ctx.options = {{"pattern_step", 1.5}};
  EXPECT_THROW(make_strategy("evo", ctx), std::invalid_argument);
}

TEST(EvoOptions, EveryOperatorStillCoversTheSpaceOnce) {
  // With polls, a small first generation and small generations, evo still proposes every
  // valid config exactly once, through a hole in the space that repairs must step around.
  const SearchSpace space = grid(3, 5, 6);
  std::set<std::string> valid;
  for (const auto& c : space.enumerate_valid()) valid.insert(to_string(c));
  StrategyContext ctx;
  ctx.space = &space;
  ctx.options = {{"initial", 2}, {"offspring", 3}, {"pattern", 2}, {"pattern_step", 0.5}};
  auto s = make_strategy("evo", ctx);
  std::set<std::string> got;
  size_t asked = 0;
  while (true) {
    auto batch = s->ask(1);
    if (batch.empty()) break;
    ++asked;
    got.insert(to_string(batch[0]));
    s->tell({batch[0], bowl(space.encode(batch[0]), 5)});
  }
  EXPECT_EQ(asked, valid.size());
  EXPECT_EQ(got, valid);
}

TEST(EvoOptions, PollsFindASmoothOptimumSooner) {
  // 4 parameters of 32 values (1 M configs), a bowl: over 21 seeds, the mean number of
  // evaluations to the exact optimum with evo's default polls (4 per generation) is below
  // breeding alone.
  const int64_t k = 32;
  const SearchSpace space = grid(4, k);
  const double optimum = bowl(Idx(4, static_cast<int>(std::lround(0.75 * (k - 1)))), k);
  auto mean_evals = [&](const nlohmann::json& options) {
    return trials::mean_evals_to_optimum(
        space, "evo", options, [&](const Idx& i) { return bowl(i, k); }, optimum, 400);
  };
  const double blind = mean_evals({{"pattern", 0}}), polled = mean_evals(nlohmann::json::object());
  EXPECT_LT(polled, 0.9 * blind) << "mean evaluations to the optimum: polled " << polled << ", breeding alone " << blind;
}
