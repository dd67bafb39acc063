// How many evaluations a strategy needs to reach a known optimum, averaged over seeds: the
// measure of the evo option tests (an option must make this smaller on the landscape it is for).
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "strategy/strategy.hpp"

namespace kf::trials {

// A space of n parameters P0..P(n-1), each with the values 0..k-1, no constraints.
inline SearchSpace grid(size_t n, int64_t k) {
  std::vector<ParamSpec> params;
  for (size_t i = 0; i < n; ++i) {
    ParamSpec p{std::string(1, 'P') + std::to_string(i), {}};
    for (int64_t v = 0; v < k; ++v) p.values.push_back(v);
    params.push_back(p);
  }
  return SearchSpace(params, nullptr);
}

// Mean over seeds 1..seeds of the evaluations `strategy` (with `options`) asks, one at a time,
// until `objective` (of the config's value indices) is at most `optimum`; a run that has not
// got there after `cap` evaluations counts cap + 1.
template <class Objective>
double mean_evals_to_optimum(const SearchSpace& space, const std::string& strategy, const nlohmann::json& options,
                             Objective objective, double optimum, size_t cap, uint64_t seeds = 21) {
  double sum = 0;
  for (uint64_t seed = 1; seed <= seeds; ++seed) {
    StrategyContext ctx;
    ctx.space = &space;
    ctx.seed = seed;
    ctx.options = options;
    auto s = make_strategy(strategy, ctx);
    size_t n = 0;
    for (; n < cap; ++n) {
      auto got = s->ask(1);
      const double t = objective(space.encode(got.at(0)));
      s->tell({got[0], t});
      if (t <= optimum) break;
    }
    sum += static_cast<double>(n + 1);
  }
  return sum / static_cast<double>(seeds);
}

}  // namespace kf::trials
