// Evo's restarts (strategy/restart.hpp): which measured configs a restart breeds from, that a
// live search's first evaluations do not change, and that a run caught in a wide basin reaches
// an optimum elsewhere sooner than evo without restarts.
#include <gtest/gtest.h>

#include <cmath>

#include "importers/import.hpp"
#include "replay/replay.hpp"
#include "strategy/restart.hpp"
#include "strategy/strategy.hpp"
#include "strategy_trials.hpp"

using namespace kf;
using kf::strategy_detail::diverse_picks;
using kf::strategy_detail::hamming;

namespace {

using Idx = std::vector<int>;

using kf::trials::grid;

// The proposals of one ask-one-tell-one run of `evals` evaluations.
template <class Objective>
std::vector<Config> proposals(const SearchSpace& space, uint64_t seed, const nlohmann::json& options, size_t evals,
                              Objective f) {
  StrategyContext ctx;
  ctx.space = &space;
  ctx.seed = seed;
  ctx.options = options;
  auto s = make_strategy("evo", ctx);
  std::vector<Config> out;
  for (size_t n = 0; n < evals; ++n) {
    auto got = s->ask(1);
    if (got.empty()) break;
    out.push_back(got[0]);
    s->tell({got[0], f(space.encode(got[0]))});
  }
  return out;
}

}  // namespace

TEST(EvoRestart, DiversePicksKeepAwayFromBasinsAndEachOther) {
  EXPECT_EQ(hamming({1, 2, 3}, {1, 0, 0}), 2u);
  const std::vector<Idx> ranked = {{0, 0, 0}, {0, 0, 1}, {0, 1, 1}, {1, 1, 1}, {1, 1, 0}, {2, 2, 2}};
  // Center {0,0,0}, away 2: {0,0,0} and {0,0,1} are too near; {0,1,1} is the first pick, then
  // {1,1,1} is only 1 from it (apart 2), {1,1,0} is 2 from both.
  EXPECT_EQ(diverse_picks(ranked, {{0, 0, 0}}, 2, 2, 10), (std::vector<size_t>{2, 4, 5}));
  EXPECT_EQ(diverse_picks(ranked, {{0, 0, 0}}, 2, 2, 1), (std::vector<size_t>{2}));
  // A second basin at {2,2,2} leaves it out too; no basin: the best first.
  EXPECT_EQ(diverse_picks(ranked, {{0, 0, 0}, {2, 2, 2}}, 2, 2, 10), (std::vector<size_t>{2, 4}));
  EXPECT_EQ(diverse_picks(ranked, {}, 0, 1, 2), (std::vector<size_t>{0, 1}));
}

// A live search of 40 evaluations (the attention campaigns) sees exactly the evo it had: a
// restart needs restart_after stalled generations, which the first 48 evaluations never hold.
TEST(EvoRestart, FirstEvaluationsAreUnchanged) {
  const SearchSpace space = grid(5, 8);
  // A plateau everywhere but one corner: the best stalls from the first generation on.
  auto flat = [](const Idx& i) { return i[0] == 7 && i[1] == 7 ? 1.0 : 2.0; };
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    const auto with = proposals(space, seed, nlohmann::json::object(), 48, flat);
    EXPECT_EQ(with, proposals(space, seed, {{"restart_after", 0}}, 48, flat)) << "seed " << seed;
    // Where the best keeps stalling, the default does restart later on: the runs part.
    EXPECT_NE(proposals(space, seed, nlohmann::json::object(), 160, flat),
              proposals(space, seed, {{"restart_after", 0}}, 160, flat))
        << "seed " << seed;
  }
}

// The MI50 convolution space (tests/data): the optimum (block 128 x 2) beats each of its
// neighbours by 30% or more, and evo without restarts stays in the basin it found in two runs of
// three. With restarts most runs get within 1% within 20% of the space (30 seeds: 63% against 30%).
TEST(EvoRestart, RunsLeaveTheirBasinOnARealSpace) {
  RecordedSpace r = import_recorded(std::string(KFORGE_TEST_DIR) + "/data/kernel_tuner_convolution_MI50_times.json");
  ReplayOptions o;
  o.seeds = 30;
  o.budget = r.size() / 5;
  o.depth = 1;
  o.threads = 2;
  const double with = replay(r, {"evo"}, o).strategies[0].tolerances[0].reached;
  o.strategy_options = {{"evo", {{"restart_after", 0}}}};
  const double without = replay(r, {"evo"}, o).strategies[0].tolerances[0].reached;
  EXPECT_GE(with, 0.55) << "without restarts " << without;
  EXPECT_GE(with, without + 0.25) << "with restarts " << with << ", without " << without;
}
