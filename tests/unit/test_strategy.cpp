// Contract tests for the ask/tell strategies: coverage, no repeats, determinism, seeds,
// known results, options.
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <set>

#include "strategy/strategy.hpp"

using namespace kf;

namespace {

// 4 x 3 x 3 = 36 configs, of which those with X + Y odd... are invalid, plus a categorical.
SearchSpace small_space() {
  std::vector<ParamSpec> params = {
      {"X", {int64_t{1}, int64_t{2}, int64_t{4}, int64_t{8}}},
      {"Y", {int64_t{1}, int64_t{2}, int64_t{3}}},
      {"K", {std::string("a"), std::string("b"), std::string("c")}},
  };
  return SearchSpace(params, [](const Config& c) {
    return std::get<int64_t>(c.at("X")) * std::get<int64_t>(c.at("Y")) <= 8;
  });
}

// A deterministic outcome: smooth in X and Y, K matters, some configs fail.
std::optional<double> outcome(const Config& c) {
  auto x = static_cast<double>(std::get<int64_t>(c.at("X")));
  auto y = static_cast<double>(std::get<int64_t>(c.at("Y")));
  const auto& k = std::get<std::string>(c.at("K"));
  if (k == "c" && x == 8) return std::nullopt;
  return (x - 4) * (x - 4) + (y - 2) * (y - 2) + (k == "b" ? 0 : 3) + 1;
}

// Runs a strategy to exhaustion (or max_evals), asking `batch` at a time and telling every
// proposal before the next ask. Returns the proposals in order.
std::vector<std::string> run(const std::string& name, const SearchSpace& space, uint64_t seed,
                             size_t batch, StrategyContext ctx = {}, size_t max_evals = 1000) {
  ctx.space = &space;
  ctx.seed = seed;
  auto s = make_strategy(name, ctx);
  std::vector<std::string> out;
  while (out.size() < max_evals) {
    auto got = s->ask(batch);
    if (got.empty()) break;
    EXPECT_LE(got.size(), batch);
    for (const auto& c : got) {
      out.push_back(to_string(c));
      s->tell({c, outcome(c)});
    }
  }
  return out;
}

std::set<std::string> valid_keys(const SearchSpace& space) {
  std::set<std::string> keys;
  for (const auto& c : space.enumerate_valid()) keys.insert(to_string(c));
  return keys;
}

class EveryStrategy : public ::testing::TestWithParam<std::string> {};

}  // namespace

TEST(StrategyFactory, NamesAndErrors) {
  EXPECT_EQ(strategy_names(), (std::vector<std::string>{"exhaustive", "random", "evo", "anneal"}));
  SearchSpace space = small_space();
  StrategyContext ctx;
  ctx.space = &space;
  try {
    make_strategy("genetic", ctx);
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("evo"), std::string::npos) << e.what();
  }
  ctx.options = {{"popsize", 4}};
  EXPECT_THROW(make_strategy("evo", ctx), std::invalid_argument);
  ctx.options = {{"population", "many"}};
  EXPECT_THROW(make_strategy("evo", ctx), std::invalid_argument);
  ctx.options = {{"population", 1}};
  EXPECT_THROW(make_strategy("evo", ctx), std::invalid_argument);
  ctx.options = {{"population", 4}, {"tournament", 2}, {"crossover_rate", 0.5}};
  EXPECT_NO_THROW(make_strategy("evo", ctx));
  ctx.options = {{"t0", 0.5}};
  EXPECT_NO_THROW(make_strategy("anneal", ctx));
  StrategyContext none;
  EXPECT_THROW(make_strategy("random", none), std::invalid_argument);
}

TEST_P(EveryStrategy, CoversEveryValidConfigExactlyOnce) {
  SearchSpace space = small_space();
  for (size_t batch : {1, 3, 50}) {
    auto got = run(GetParam(), space, 7, batch);
    std::set<std::string> unique(got.begin(), got.end());
    EXPECT_EQ(unique.size(), got.size()) << "a config was proposed twice (batch " << batch << ")";
    EXPECT_EQ(unique, valid_keys(space)) << "batch " << batch;
  }
}

TEST_P(EveryStrategy, AskingAheadOfTellsStillGivesWorkUntilExhausted) {
  // A caller with a deep pipeline asks again before telling: the answer may be short but is
  // empty only when nothing is left.
  SearchSpace space = small_space();
  StrategyContext ctx;
  ctx.space = &space;
  ctx.seed = 3;
  auto s = make_strategy(GetParam(), ctx);
  std::vector<Config> outstanding;
  std::set<std::string> seen;
  for (;;) {
    auto got = s->ask(4);
    if (got.empty()) break;
    for (auto& c : got) {
      EXPECT_TRUE(seen.insert(to_string(c)).second);
      outstanding.push_back(c);
    }
    if (outstanding.size() > 6) {  // tell the oldest half, keep the rest in flight
      for (size_t i = 0; i < 3; ++i) s->tell({outstanding[i], outcome(outstanding[i])});
      outstanding.erase(outstanding.begin(), outstanding.begin() + 3);
    }
  }
  EXPECT_EQ(seen, valid_keys(space));
}

TEST_P(EveryStrategy, DeterministicPerSeed) {
  SearchSpace space = small_space();
  auto a = run(GetParam(), space, 11, 1, {}, 20);
  auto b = run(GetParam(), space, 11, 1, {}, 20);
  EXPECT_EQ(a, b);
  if (GetParam() != "exhaustive") {
    bool differs = false;
    for (uint64_t seed : {12, 13, 14}) differs = differs || run(GetParam(), space, seed, 1, {}, 20) != a;
    EXPECT_TRUE(differs) << "the seed has no effect";
  }
}

TEST_P(EveryStrategy, NeverProposesKnownConfigs) {
  SearchSpace space = small_space();
  StrategyContext ctx;
  std::set<std::string> known;
  const auto all = space.enumerate_valid();
  for (size_t i = 0; i < all.size(); i += 3) {
    const auto& c = all[i];
    ctx.known.push_back({c, outcome(c)});
    known.insert(to_string(c));
  }
  auto got = run(GetParam(), space, 5, 2, ctx);
  std::set<std::string> unique(got.begin(), got.end());
  EXPECT_EQ(unique.size(), got.size());
  for (const auto& k : got) EXPECT_EQ(known.count(k), 0u) << k;
  EXPECT_EQ(unique.size() + known.size(), space.enumerate_valid().size());
}

TEST_P(EveryStrategy, SurvivesASpaceWhereEverythingFails) {
  SearchSpace space = small_space();
  StrategyContext ctx;
  ctx.space = &space;
  auto s = make_strategy(GetParam(), ctx);
  size_t n = 0;
  for (auto got = s->ask(2); !got.empty(); got = s->ask(2))
    for (auto& c : got) {
      ++n;
      s->tell({c, std::nullopt});
    }
  EXPECT_EQ(n, space.enumerate_valid().size());
}

TEST_P(EveryStrategy, RepeatedTellsChangeNothing) {
  // A campaign may echo a retried evaluation's result twice.
  SearchSpace space = small_space();
  auto proposals = [&](bool twice) {
    StrategyContext ctx;
    ctx.space = &space;
    ctx.seed = 9;
    auto s = make_strategy(GetParam(), ctx);
    std::vector<std::string> out;
    for (int i = 0; i < 15; ++i) {
      auto got = s->ask(1);
      if (got.empty()) break;
      out.push_back(to_string(got[0]));
      s->tell({got[0], outcome(got[0])});
      if (twice) s->tell({got[0], outcome(got[0])});
    }
    return out;
  };
  EXPECT_EQ(proposals(true), proposals(false));
}

TEST_P(EveryStrategy, EmptySpaceGivesNothing) {
  SearchSpace space({{"X", {int64_t{1}, int64_t{2}}}}, [](const Config&) { return false; });
  StrategyContext ctx;
  ctx.space = &space;
  ctx.seeds = {parse_assignment("X=1")};
  auto s = make_strategy(GetParam(), ctx);
  EXPECT_TRUE(s->ask(4).empty());
}

INSTANTIATE_TEST_SUITE_P(Strategies, EveryStrategy,
                         ::testing::Values("exhaustive", "random", "evo", "anneal"));

TEST(Exhaustive, EnumerationOrderSkippingKnown) {
  SearchSpace space = small_space();
  StrategyContext ctx;
  ctx.known.push_back({space.enumerate_valid()[1], 1.0});
  auto got = run("exhaustive", space, 1, 4, ctx);
  std::vector<std::string> want;
  for (size_t i = 0; i < space.enumerate_valid().size(); ++i)
    if (i != 1) want.push_back(to_string(space.enumerate_valid()[i]));
  EXPECT_EQ(got, want);
}

TEST(Evo, FirstGenerationStartsWithTheSeedsInOrder) {
  SearchSpace space = small_space();
  StrategyContext ctx;
  ctx.space = &space;
  ctx.seeds = {
      parse_assignment("K=b,X=4,Y=2"),
      parse_assignment("K=a,X=8,Y=3"),        // invalid (8 * 3 > 8): repaired
      parse_assignment("K=b,X=4,Y=2"),        // repeated: once is enough
      parse_assignment("K=a,X=1,Y=1,Z=3"),    // from another family version: Z is dropped
      parse_assignment("K=c,X=1,Y=1"),
  };
  auto s = make_strategy("evo", ctx);
  auto first = s->ask(100);
  ASSERT_GE(first.size(), 4u);
  EXPECT_LE(first.size(), 8u) << "more than one generation";
  EXPECT_EQ(to_string(first[0]), "K=b,X=4,Y=2");
  // X=8,Y=3 is two index steps from each of X=2,Y=3 / X=4,Y=2 / X=8,Y=1; repair takes the
  // first in enumeration order.
  EXPECT_EQ(to_string(first[1]), "K=a,X=2,Y=3");
  EXPECT_EQ(to_string(first[2]), "K=a,X=1,Y=1");
  EXPECT_EQ(to_string(first[3]), "K=c,X=1,Y=1");
}

// The first generation evo proposes on small_space() with the given population, known results
// (all successes) and seeds, as config strings.
static std::vector<std::string> evo_first_generation(int population, const std::vector<const char*>& known,
                                                     const std::vector<const char*>& seeds) {
  SearchSpace space = small_space();
  StrategyContext ctx;
  ctx.space = &space;
  ctx.options = {{"population", population}};
  for (const char* k : known) ctx.known.push_back({parse_assignment(k), 1.0});
  for (const char* c : seeds) ctx.seeds.push_back(parse_assignment(c));
  std::vector<std::string> out;
  for (const auto& c : make_strategy("evo", ctx)->ask(100)) out.push_back(to_string(c));
  return out;
}

// A seed the store already measured takes no place in the first generation; the next seed does
// (a sweep campaign re-run once filled the places of known seeds with random configs).
TEST(Evo, KnownSeedsGiveWayToTheNextSeeds) {
  const auto first = evo_first_generation(3, {"K=a,X=1,Y=1"},
                                          {"K=a,X=1,Y=1", "K=b,X=1,Y=1", "K=c,X=1,Y=1", "K=a,X=2,Y=2"});
  // the population less the known result
  EXPECT_EQ(first, (std::vector<std::string>{"K=b,X=1,Y=1", "K=c,X=1,Y=1"}));
}

// A shape with a population's worth of results breeds from them, but half a generation still
// goes to seeds it has not measured (a default the first campaign missed).
TEST(Evo, SeedsGetHalfAGenerationWhereKnownResultsFillThePopulation) {
  const auto first = evo_first_generation(4, {"K=a,X=1,Y=1", "K=a,X=1,Y=2", "K=a,X=1,Y=3", "K=a,X=2,Y=1"},
                                          {"K=a,X=1,Y=1", "K=c,X=8,Y=1", "K=c,X=4,Y=2", "K=c,X=2,Y=3"});
  EXPECT_EQ(first, (std::vector<std::string>{"K=c,X=8,Y=1", "K=c,X=4,Y=2"}));
}

TEST(Anneal, StartsAtTheSeeds) {
  SearchSpace space = small_space();
  StrategyContext ctx;
  ctx.space = &space;
  ctx.seeds = {parse_assignment("K=b,X=2,Y=3"), parse_assignment("K=b,X=4,Y=2")};
  auto s = make_strategy("anneal", ctx);
  auto first = s->ask(1);
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(to_string(first[0]), "K=b,X=2,Y=3");
  s->tell({first[0], outcome(first[0])});
  auto second = s->ask(1);
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(to_string(second[0]), "K=b,X=4,Y=2");
}
