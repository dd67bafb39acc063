#include <gtest/gtest.h>

#include "eval/worker/dataset_cache.hpp"

namespace kf {
namespace {

using Cache = DatasetCache<int>;

// Replays a suite campaign's access pattern: per evaluation the campaign shape's data set, then one per
// gate case; the gate shapes are shared by the shapes of one causal flag. Returns the misses after the
// first round (every data set built once).
size_t misses_after_first_round(Cache& c, int shapes, int gate_cases, int rounds) {
  size_t first = 0;
  for (int r = 0; r < rounds; ++r) {
    for (int s = 0; s < shapes; ++s) {
      const std::string shape = "shape" + std::to_string(s);
      if (!c.find(shape)) c.add(shape, std::make_shared<int>(s), 200 << 20, 300 << 20);
      for (int g = 0; g < gate_cases; ++g) {
        const std::string gate = "gate" + std::to_string(g) + "/causal" + std::to_string(s % 2);
        if (!c.find(gate)) c.add(gate, std::make_shared<int>(g), 1 << 20, 1 << 20);
      }
    }
    if (r == 0) first = c.misses();
  }
  return c.misses() - first;
}

TEST(DatasetCache, ASuiteOfSixShapesHitsEveryTimeOnceBuilt) {
  // The six D128 sweep shapes (two causal flags) and six gate cases: 18 data sets. A cache of 16 entries
  // missed on every campaign shape, rebuilding its inputs and reference each evaluation.
  Cache c({size_t{64} << 30, size_t{32} << 30});
  EXPECT_EQ(misses_after_first_round(c, 6, 6, 5), 0u);
  EXPECT_EQ(c.size(), 18u);
}

TEST(DatasetCache, DropsTheLeastRecentOverTheDeviceBudget) {
  Cache c({300, 1000});
  c.add("a", std::make_shared<int>(1), 100, 0);
  c.add("b", std::make_shared<int>(2), 100, 0);
  c.add("c", std::make_shared<int>(3), 100, 0);
  ASSERT_TRUE(c.find("a"));  // a is now the most recent; b the least
  c.add("d", std::make_shared<int>(4), 100, 0);
  EXPECT_FALSE(c.find("b"));
  EXPECT_TRUE(c.find("a"));
  EXPECT_TRUE(c.find("c"));
  EXPECT_TRUE(c.find("d"));
}

TEST(DatasetCache, DropsOverTheHostBudgetAndTheCountCap) {
  Cache host({1000, 150});
  host.add("a", std::make_shared<int>(1), 0, 100);
  host.add("b", std::make_shared<int>(2), 0, 100);
  EXPECT_EQ(host.size(), 1u);
  EXPECT_TRUE(host.find("b"));

  Cache count({1000, 1000, 2});
  for (const char* k : {"a", "b", "c"}) count.add(k, std::make_shared<int>(0), 1, 1);
  EXPECT_EQ(count.size(), 2u);
  EXPECT_FALSE(count.find("a"));
}

TEST(DatasetCache, KeepsTheNewestEvenOverBudgetAndHoldersKeepEvicted) {
  Cache c({100, 100});
  c.add("small", std::make_shared<int>(1), 10, 10);
  std::shared_ptr<int> held = c.find("small");
  c.add("huge", std::make_shared<int>(2), 1000, 1000);  // the evaluation that built it uses it next
  EXPECT_EQ(c.size(), 1u);
  EXPECT_TRUE(c.find("huge"));
  EXPECT_FALSE(c.find("small"));
  EXPECT_EQ(*held, 1);  // an evaluation still holding an evicted data set keeps it alive
}

}  // namespace
}  // namespace kf
