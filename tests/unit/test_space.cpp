// SearchSpace: enumeration counts, encoding, sampling, neighbours and repair.
#include <gtest/gtest.h>

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
  const auto& all = space.valid_configs();
  EXPECT_EQ(all.size(), 17u);
  // Lexicographic by index, first parameter slowest.
  EXPECT_EQ(all.front(), cfg(16, 1, "simt"));
  EXPECT_EQ(all[1], cfg(32, 1, "simt"));
  EXPECT_EQ(all[2], cfg(32, 1, "wmma"));
  EXPECT_EQ(all.back(), cfg(128, 4, "wmma"));
  for (size_t i = 1; i < all.size(); ++i) EXPECT_LT(space.encode(all[i - 1]), space.encode(all[i]));
}

TEST(SearchSpace, ValidConfigsAreCached) {
  int calls = 0;
  SearchSpace space(tile_params(), [&](const Config& c) {
    ++calls;
    return tile_rule(c);
  });
  space.valid_configs();
  EXPECT_EQ(calls, 24);
  space.valid_configs();
  EXPECT_EQ(calls, 24);
  EXPECT_EQ(&space.valid_configs(), &space.valid_configs());
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
  EXPECT_EQ(pruned.valid_configs(), plain.valid_configs());
  EXPECT_EQ(full_calls, 18);  // 9 (BLOCK_M, WARPS) prefixes survive, times 2 MMA values
  EXPECT_EQ(depths.size(), 4u + 12u);  // never asked about a complete config
}

TEST(SearchSpace, NoPredicateOrNoParams) {
  SearchSpace everything(tile_params(), nullptr);
  EXPECT_EQ(everything.valid_configs().size(), 24u);
  SearchSpace empty({}, nullptr);
  EXPECT_EQ(empty.cardinality(), 1u);
  ASSERT_EQ(empty.valid_configs().size(), 1u);
  EXPECT_TRUE(empty.valid_configs()[0].empty());
  SearchSpace none(tile_params(), [](const Config&) { return false; });
  EXPECT_TRUE(none.valid_configs().empty());
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

TEST(SearchSpace, RandomValidIsUniformAndSeeded) {
  SearchSpace space(tile_params(), tile_rule);
  std::mt19937_64 a(42), b(42);
  std::map<std::string, int> counts;
  for (int i = 0; i < 17000; ++i) {
    const auto x = space.random_valid(a);
    ASSERT_TRUE(x.has_value());
    EXPECT_TRUE(space.valid(*x));
    EXPECT_EQ(*x, *space.random_valid(b));  // same seed, same sequence
    ++counts[to_string(*x)];
  }
  EXPECT_EQ(counts.size(), 17u);
  // Expected 1000 each; 5 sigma is about 160.
  for (const auto& [name, n] : counts) {
    EXPECT_GT(n, 840) << name;
    EXPECT_LT(n, 1160) << name;
  }
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
