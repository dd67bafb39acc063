// SearchSpace: walks and counts, encoding, sampling (distribution, priors, budget), neighbours and repair.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>

#include "space/space.hpp"

using namespace kf;

namespace {

Value I(int64_t v) { return Value{v}; }
Value S(const char* s) { return Value{std::string(s)}; }

// BLOCK_M in {16,32,64,128}, WARPS in {1,2,4}, MMA in {simt,wmma}: 24 configs.
std::vector<ParamSpec> tile_params() {
  return {{"BLOCK_M", {I(16), I(32), I(64), I(128)}}, {"WARPS", {I(1), I(2), I(4)}}, {"MMA", {S("simt"), S("wmma")}}};
}

// BLOCK_M % (16 * WARPS) == 0, and wmma needs BLOCK_M >= 32.
SearchSpace::Validity space_validity_all_sevens() {
  return [](const Config& c) {
    for (const auto& [name, v] : c)
      if (std::get<int64_t>(v) != 7) return false;
    return true;
  };
}

bool tile_rule(const Config& c) {
  const int64_t bm = std::get<int64_t>(c.at("BLOCK_M"));
  const int64_t w = std::get<int64_t>(c.at("WARPS"));
  if (bm % (16 * w) != 0) return false;
  return !(std::get<std::string>(c.at("MMA")) == "wmma" && bm < 32);
}

Config cfg(int64_t bm, int64_t w, const char* mma) { return {{"BLOCK_M", I(bm)}, {"WARPS", I(w)}, {"MMA", S(mma)}}; }

}  // namespace

TEST(SearchSpace, CardinalityIsTheProduct) {
  SearchSpace space(tile_params(), tile_rule);
  EXPECT_EQ(space.cardinality(), 24u);
  EXPECT_EQ(space.params().size(), 3u);
}

TEST(SearchSpace, ValidConfigsMatchHandCount) {
  // Hand count of BLOCK_M % (16*WARPS) == 0: BM=16 -> W=1; 32 -> 1,2; 64 -> 1,2,4; 128 -> 1,2,4.
  // That is 9 (BM,W) pairs; simt keeps all 9, wmma drops BM=16 (1 pair): 9 + 8 = 17.
  SearchSpace space(tile_params(), tile_rule);
  const auto& all = space.enumerate_valid();
  EXPECT_EQ(all.size(), 17u);
  // Lexicographic by index, first parameter slowest.
  EXPECT_EQ(all.front(), cfg(16, 1, "simt"));
  EXPECT_EQ(all[1], cfg(32, 1, "simt"));
  EXPECT_EQ(all[2], cfg(32, 1, "wmma"));
  EXPECT_EQ(all.back(), cfg(128, 4, "wmma"));
  for (size_t i = 1; i < all.size(); ++i) EXPECT_LT(space.encode(all[i - 1]), space.encode(all[i]));
}

TEST(SearchSpace, WalkStreamsWithoutListing) {
  // The first config comes after a handful of checks, not after a walk of the whole space.
  int calls = 0;
  SearchSpace space(tile_params(), [&](const Config& c) {
    ++calls;
    return tile_rule(c);
  });
  SpaceWalker walk(space);
  EXPECT_EQ(walk.next(), cfg(16, 1, "simt"));
  EXPECT_EQ(calls, 1);
  size_t n = 1;
  while (walk.next()) ++n;
  EXPECT_EQ(n, 17u);
  EXPECT_EQ(calls, 24);
  EXPECT_FALSE(walk.next().has_value());  // stays over
  EXPECT_EQ(space.count_valid(), 17u);
}

TEST(SearchSpace, PrefixCheckPrunesWithoutChangingTheResult) {
  // BLOCK_M % (16 * WARPS) is decided by the first two parameters: a prefix check on them
  // must leave the enumeration exactly as it was while calling the full check less often.
  int full_calls = 0;
  std::vector<size_t> depths;
  SearchSpace pruned(
      tile_params(),
      [&](const Config& c) {
        ++full_calls;
        return tile_rule(c);
      },
      [&](const Config& prefix, size_t depth) {
        depths.push_back(depth);
        EXPECT_EQ(prefix.size(), depth);  // only the first `depth` parameters are set
        if (depth < 2) return true;
        return std::get<int64_t>(prefix.at("BLOCK_M")) % (16 * std::get<int64_t>(prefix.at("WARPS"))) == 0;
      });
  SearchSpace plain(tile_params(), tile_rule);
  EXPECT_EQ(pruned.enumerate_valid(), plain.enumerate_valid());
  EXPECT_EQ(full_calls, 18);  // 9 (BLOCK_M, WARPS) prefixes survive, times 2 MMA values
  EXPECT_EQ(depths.size(), 4u + 12u);  // never asked about a complete config
}

TEST(SearchSpace, NoPredicateOrNoParams) {
  SearchSpace everything(tile_params(), nullptr);
  EXPECT_EQ(everything.enumerate_valid().size(), 24u);
  SearchSpace empty({}, nullptr);
  EXPECT_EQ(empty.cardinality(), 1u);
  ASSERT_EQ(empty.enumerate_valid().size(), 1u);
  EXPECT_TRUE(empty.enumerate_valid()[0].empty());
  SearchSpace none(tile_params(), [](const Config&) { return false; });
  EXPECT_TRUE(none.enumerate_valid().empty());
  std::mt19937_64 rng(1);
  EXPECT_FALSE(none.random_valid(rng).has_value());
  EXPECT_FALSE(none.repair(cfg(16, 4, "wmma")).has_value());
}

TEST(SearchSpace, RejectsBadDeclarations) {
  EXPECT_THROW(SearchSpace({{"A", {}}}, nullptr), std::invalid_argument);
  EXPECT_THROW(SearchSpace({{"A", {I(1)}}, {"A", {I(2)}}}, nullptr), std::invalid_argument);
}

TEST(SearchSpace, EncodeDecode) {
  SearchSpace space(tile_params(), tile_rule);
  EXPECT_EQ(space.encode(cfg(64, 2, "wmma")), (std::vector<int>{2, 1, 1}));
  EXPECT_EQ(space.decode({3, 0, 0}), cfg(128, 1, "simt"));
  EXPECT_THROW(space.encode(cfg(48, 2, "wmma")), std::invalid_argument);  // not in domain
  EXPECT_THROW(space.encode({{"BLOCK_M", I(64)}, {"WARPS", I(2)}}), std::invalid_argument);  // missing
  Config extra = cfg(64, 2, "wmma");
  extra["STAGES"] = I(2);
  EXPECT_THROW(space.encode(extra), std::invalid_argument);  // unknown
  EXPECT_THROW(space.decode({4, 0, 0}), std::invalid_argument);
  EXPECT_THROW(space.decode({0, 0}), std::invalid_argument);
  // A real 64.0 is not the integer 64 of the domain.
  EXPECT_THROW(space.encode({{"BLOCK_M", Value{64.0}}, {"WARPS", I(2)}, {"MMA", S("simt")}}), std::invalid_argument);
}

TEST(SearchSpace, ValidChecksDomainAndPredicate) {
  SearchSpace space(tile_params(), tile_rule);
  EXPECT_TRUE(space.valid(cfg(64, 4, "wmma")));
  EXPECT_FALSE(space.valid(cfg(16, 2, "simt")));  // predicate
  EXPECT_FALSE(space.valid(cfg(48, 1, "simt")));  // domain
}

TEST(SearchSpace, RandomValidIsUniformOverValidConfigsAndSeeded) {
  // The descent weighs each value by the number of valid configs below it (exact on a space
  // this small), so every one of the 17 valid configs is drawn with chance 1/17. Without the
  // sizes it drew each value uniformly among those that can still complete: BLOCK_M=16's
  // only config 1/4 of the time, each of BLOCK_M=64's six 1/24 (docs/architecture.md).
  SearchSpace space(tile_params(), tile_rule);
  std::mt19937_64 a(42), b(42);
  std::map<std::string, int> counts;
  const int n = 17000;
  for (int i = 0; i < n; ++i) {
    const auto x = space.random_valid(a);
    ASSERT_TRUE(x.has_value());
    EXPECT_TRUE(space.valid(*x));
    EXPECT_EQ(*x, *space.random_valid(b));  // same seed, same sequence
    ++counts[to_string(*x)];
  }
  EXPECT_EQ(counts.size(), 17u);
  const double p = 1.0 / 17, sigma = std::sqrt(n * p * (1 - p));
  for (const auto& [name, k] : counts) EXPECT_NEAR(k, n * p, 5 * sigma) << name;
}

TEST(SearchSpace, SubtreeSizesMakeLopsidedSpacesUniform) {
  // A=0 has one valid completion, A=1 has 99 (B < 99, C any of 1; D 0..9 with B*10+D < 990):
  // uniform draws take A=0 once in 100, where the size-blind descent took it every other time.
  // Too big for the exact count at the root, so the sizes there are Knuth's estimates.
  std::vector<ParamSpec> params = {{"A", {I(0), I(1)}}, {"B", {}}, {"C", {}}};
  for (int v = 0; v < 100; ++v) params[1].values.push_back(I(v));
  for (int v = 0; v < 100; ++v) params[2].values.push_back(I(v));
  auto rule = [](const Config& c) {
    const int64_t a = std::get<int64_t>(c.at("A")), b = std::get<int64_t>(c.at("B")),
                  cc = std::get<int64_t>(c.at("C"));
    return a == 0 ? b == 0 && cc == 0 : b < 99 && cc == b;
  };
  auto prefix = [](const Config& c, size_t depth) {
    return depth < 2 || std::get<int64_t>(c.at("A")) == 1 || std::get<int64_t>(c.at("B")) == 0;
  };
  SearchSpace space(params, rule, prefix);
  std::mt19937_64 rng(5);
  int a0 = 0;
  const int n = 3000;
  for (int i = 0; i < n; ++i) a0 += std::get<int64_t>(space.random_valid(rng)->at("A")) == 0;
  EXPECT_NEAR(a0, n / 100.0, 5 * std::sqrt(n * 0.01 * 0.99));
  // With a prior, a config's chance is proportional to the product of its values' weights.
  params[0].weights = {99.0, 1.0};
  SearchSpace weighted(params, rule, prefix);
  a0 = 0;
  for (int i = 0; i < n; ++i) a0 += std::get<int64_t>(weighted.random_valid(rng)->at("A")) == 0;
  EXPECT_NEAR(a0, n / 2.0, 5 * std::sqrt(n * 0.25));
}

TEST(SearchSpace, PriorWeightsShapeTheDescent) {
  // wmma weighs 3 times simt; where both complete, wmma is drawn 3 times in 4.
  auto params = tile_params();
  params[2].weights = {1.0, 3.0};
  SearchSpace weighted(params, tile_rule);
  std::mt19937_64 rng(7);
  int wmma = 0, both = 0;
  for (int i = 0; i < 8000; ++i) {
    const Config c = *weighted.random_valid(rng);
    if (std::get<int64_t>(c.at("BLOCK_M")) == 16) continue;  // only simt completes there
    ++both;
    wmma += std::get<std::string>(c.at("MMA")) == "wmma";
  }
  EXPECT_NEAR(static_cast<double>(wmma) / both, 0.75, 0.03);
  // Weight 0: only where nothing else completes.
  params[2].weights = {1.0, 0.0};
  SearchSpace last(params, tile_rule);
  for (int i = 0; i < 500; ++i) EXPECT_EQ(std::get<std::string>(last.random_valid(rng)->at("MMA")), "simt");
  params[2].weights = {1.0};
  EXPECT_THROW(SearchSpace(params, tile_rule), std::invalid_argument);
  params[2].weights = {1.0, -1.0};
  EXPECT_THROW(SearchSpace(params, tile_rule), std::invalid_argument);
}

TEST(SearchSpace, WalkWithPriorsTakesLastValuesLast) {
  auto params = tile_params();
  params[2].weights = {0.0, 1.0};  // simt last
  SearchSpace space(params, tile_rule);
  SpaceWalker walk(space, /*prefer_priors=*/true);
  std::vector<Config> got;
  while (auto c = walk.next()) got.push_back(*c);
  ASSERT_EQ(got.size(), 17u);
  for (size_t i = 0; i < 8; ++i) EXPECT_EQ(std::get<std::string>(got[i].at("MMA")), "wmma") << i;
  for (size_t i = 8; i < 17; ++i) EXPECT_EQ(std::get<std::string>(got[i].at("MMA")), "simt") << i;
  std::set<std::string> unique;
  for (const auto& c : got) unique.insert(to_string(c));
  EXPECT_EQ(unique.size(), 17u);
}

TEST(SearchSpace, EstimateOfTheValidCount) {
  SearchSpace space(tile_params(), tile_rule);
  std::mt19937_64 rng(3);
  EXPECT_NEAR(space.estimate_valid(rng, 4000), 17.0, 1.0);
  SearchSpace none(tile_params(), [](const Config&) { return false; });
  EXPECT_EQ(none.estimate_valid(rng, 50), 0.0);
}

TEST(SearchSpace, SamplingAHugeSparseSpaceIsBounded) {
  // 10^12 configs, one of them valid, and no prefix check to find it: the descent gives up
  // within its budget with a clear error instead of walking the product.
  std::vector<ParamSpec> params;
  for (int i = 0; i < 12; ++i) {
    ParamSpec p{"P" + std::to_string(i), {}};
    for (int v = 0; v < 10; ++v) p.values.push_back(I(v));
    params.push_back(p);
  }
  SearchSpace space(params, [](const Config& c) {
    for (const auto& [name, v] : c)
      if (std::get<int64_t>(v) != 7) return false;
    return true;
  });
  std::mt19937_64 rng(1);
  try {
    space.random_valid(rng, {}, 100000);
    FAIL() << "no exception";
  } catch (const SpaceBudgetError& e) {
    EXPECT_NE(std::string(e.what()).find("100000 checks"), std::string::npos) << e.what();
  }
  // A prefix check makes the same config easy to find.
  SearchSpace pruned(params, space_validity_all_sevens(), [](const Config& prefix, size_t) {
    for (const auto& [name, v] : prefix)
      if (std::get<int64_t>(v) != 7) return false;
    return true;
  });
  EXPECT_EQ(std::get<int64_t>(pruned.random_valid(rng)->at("P11")), 7);
}

TEST(SearchSpace, NearestBreaksTiesAtRandomAndHonoursAccept) {
  SearchSpace space(tile_params(), tile_rule);
  SearchSpace::NearestQuery q;
  q.target = {2, 1, 1};  // (64,2,wmma), valid: distance 0
  EXPECT_EQ(space.nearest(q), cfg(64, 2, "wmma"));
  q.accept = [](const Config& c) { return c != cfg(64, 2, "wmma"); };
  // Distance 1: (32,2,wmma), (128,2,wmma), (64,1,wmma), (64,4,wmma), (64,2,simt).
  std::set<std::string> got;
  std::mt19937_64 rng(5);
  for (int i = 0; i < 200; ++i) got.insert(to_string(*space.nearest(q, &rng)));
  EXPECT_EQ(got.size(), 5u);
  q.accept = [](const Config&) { return false; };
  EXPECT_FALSE(space.nearest(q, &rng).has_value());
}

TEST(SearchSpace, NeighboursStepOneIndexAndStayValid) {
  SearchSpace space(tile_params(), tile_rule);
  // From (64,2,wmma): BLOCK_M-1 -> (32,2,wmma) ok; BLOCK_M+1 -> (128,2,wmma) ok;
  // WARPS-1 -> (64,1,wmma) ok; WARPS+1 -> (64,4,wmma) ok; MMA-1 -> (64,2,simt) ok; MMA+1 out of range.
  EXPECT_EQ(space.neighbours(cfg(64, 2, "wmma")),
            (std::vector<Config>{cfg(32, 2, "wmma"), cfg(128, 2, "wmma"), cfg(64, 1, "wmma"), cfg(64, 4, "wmma"),
                                 cfg(64, 2, "simt")}));
  // From (32,1,simt): BLOCK_M-1 -> (16,1,simt) ok; +1 -> (64,1,simt) ok; WARPS+1 -> (32,2,simt) ok;
  // MMA+1 -> (32,1,wmma) ok.
  EXPECT_EQ(space.neighbours(cfg(32, 1, "simt")),
            (std::vector<Config>{cfg(16, 1, "simt"), cfg(64, 1, "simt"), cfg(32, 2, "simt"), cfg(32, 1, "wmma")}));
  // From (16,1,simt): BLOCK_M+1 ok; WARPS+1 -> (16,2) invalid; MMA+1 -> (16,1,wmma) invalid.
  EXPECT_EQ(space.neighbours(cfg(16, 1, "simt")), (std::vector<Config>{cfg(32, 1, "simt")}));
  EXPECT_THROW(space.neighbours(cfg(48, 1, "simt")), std::invalid_argument);
}

TEST(SearchSpace, RepairReturnsValidConfigUnchanged) {
  SearchSpace space(tile_params(), tile_rule);
  EXPECT_EQ(space.repair(cfg(64, 4, "wmma")), cfg(64, 4, "wmma"));
}

TEST(SearchSpace, RepairFindsNearestByIndexDistance) {
  SearchSpace space(tile_params(), tile_rule);
  // (16,4,wmma) = indices (0,2,1). Distance-1 candidates in enumeration order: (16,2,wmma) bad,
  // (16,4,simt) bad, (32,4,wmma) bad. Distance 2: (16,1,wmma) bad, (16,2,simt) bad,
  // (32,2,wmma) = (1,1,1) ok -- but (32,4,simt) = (1,2,0) is bad and (64,4,wmma) = (2,2,1) ok.
  // Enumeration order puts (32,2,wmma) before (64,4,wmma).
  EXPECT_EQ(space.repair(cfg(16, 4, "wmma")), cfg(32, 2, "wmma"));
  // (16,2,simt) = (0,1,0): distance 1 gives (16,1,simt) [first] and (32,2,simt).
  EXPECT_EQ(space.repair(cfg(16, 2, "simt")), cfg(16, 1, "simt"));
}

TEST(SearchSpace, RepairHandlesValuesOutsideTheDomain) {
  SearchSpace space(tile_params(), tile_rule);
  // 100 is numerically nearest to 128 (index 3); (128,4,simt) is valid.
  EXPECT_EQ(space.repair(cfg(100, 4, "simt")), cfg(128, 4, "simt"));
  // An unknown category constrains nothing: the first valid config with BLOCK_M=64, WARPS=4.
  EXPECT_EQ(space.repair(cfg(64, 4, "wgmma")), cfg(64, 4, "simt"));
  // A missing parameter likewise.
  EXPECT_EQ(space.repair({{"BLOCK_M", I(16)}, {"WARPS", I(1)}}), cfg(16, 1, "simt"));
}
