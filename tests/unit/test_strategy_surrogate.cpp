// Evo's surrogate: the additive model ranks configs of a separable landscape right and steers
// away from values that fail, and screening children with it finds better configs at equal
// budget than breeding blind (evo's `screen` option; 1 turns it off).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "strategy/strategy.hpp"
#include "strategy/surrogate.hpp"

using namespace kf;
using kf::strategy_detail::AdditiveSurrogate;

namespace {

// P0..P{n-1}, each 0..k-1, no constraints.
SearchSpace grid(size_t n, int64_t k) {
  std::vector<ParamSpec> params;
  for (size_t i = 0; i < n; ++i) {
    ParamSpec p{"P" + std::to_string(i), {}};
    for (int64_t v = 0; v < k; ++v) p.values.push_back(v);
    params.push_back(p);
  }
  return SearchSpace(params, nullptr);
}

// Separable: each parameter has its own best value (i % k), the time multiplies up.
double separable_time(const std::vector<int>& idx, int64_t k) {
  double log_t = 0;
  for (size_t i = 0; i < idx.size(); ++i) {
    const double d = static_cast<double>(idx[i]) - static_cast<double>(static_cast<int64_t>(i) % k);
    log_t += 0.1 * d * d;
  }
  return std::exp(log_t);
}

}  // namespace

TEST(Surrogate, RanksASeparableLandscape) {
  const SearchSpace space = grid(2, 6);
  AdditiveSurrogate model(space);
  EXPECT_EQ(model.predict({0, 0}), 0.0);  // nothing told yet
  for (int a = 0; a < 6; ++a)
    for (int b = 0; b < 6; ++b) model.add({a, b}, separable_time({a, b}, 6));
  EXPECT_EQ(model.size(), 36u);
  // Balanced data: the model is the landscape's own log time, shrunk alike in every value.
  for (int a = 0; a < 6; ++a)
    for (int b = 0; b < 5; ++b)
      EXPECT_EQ(model.predict({a, b}) < model.predict({a, b + 1}),
                separable_time({a, b}, 6) < separable_time({a, b + 1}, 6))
          << a << "," << b;
}

TEST(Surrogate, FailuresCountAgainstTheirValues) {
  const SearchSpace space = grid(2, 3);
  AdditiveSurrogate model(space);
  for (int b = 0; b < 3; ++b) {
    model.add({0, b}, 10.0);
    model.add({1, b}, 20.0);
    model.add({2, b}, std::nullopt);  // P0=2 always fails: worse than the slowest success
  }
  EXPECT_LT(model.predict({0, 1}), model.predict({1, 1}));
  EXPECT_LT(model.predict({1, 1}), model.predict({2, 1}));
  model.add({0, 0, 0}, 1.0);  // the wrong number of parameters is ignored
  EXPECT_EQ(model.size(), 9u);
}

TEST(Surrogate, ScreeningFindsBetterConfigsAtEqualBudget) {
  // 10 parameters of 6 values (60 M configs), 50 evaluations: over 21 seeds, the mean log of
  // the best time with screened children beats blind breeding (screen=1).
  const int64_t k = 6;
  const SearchSpace space = grid(10, k);
  auto median_best = [&](int screen) {
    double sum_log = 0;
    for (uint64_t seed = 1; seed <= 21; ++seed) {
      StrategyContext ctx;
      ctx.space = &space;
      ctx.seed = seed;
      ctx.options = {{"screen", screen}};
      auto s = make_strategy("evo", ctx);
      double b = INFINITY;
      for (size_t n = 0; n < 50;) {
        auto got = s->ask(1);
        if (got.empty()) break;
        const double t = separable_time(space.encode(got[0]), k);
        b = std::min(b, t);
        s->tell({got[0], t});
        ++n;
      }
      sum_log += std::log(b);
    }
    return sum_log / 21;
  };
  const double blind = median_best(1), screened = median_best(4);
  EXPECT_LT(screened, blind) << "mean log best: screened " << screened << ", blind " << blind;
  StrategyContext bad;
  bad.space = &space;
  bad.options = {{"screen", 0}};
  EXPECT_THROW(make_strategy("evo", bad), std::invalid_argument);
}
