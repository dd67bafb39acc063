// Where a campaign starts: stored results for the shape, the nearest stored shapes, other
// devices and the family's defaults, in turns; `--seeding defaults|none` narrows that.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "campaign/seeding.hpp"
#include "test_dir.hpp"

namespace fs = std::filesystem;
using namespace kf;

namespace {

const DeviceKey kH100{"NVIDIA H100 80GB HBM3", 90, 132, "580.65"};
const DeviceKey kL4{"NVIDIA L4", 89, 58, "580.65"};

struct SeedingFixture : ::testing::Test {
  fs::path dir;
  Family family;
  std::optional<Store> store;

  void SetUp() override {
    dir = fresh_test_dir("kforge_seeding");
    family = load_family(fs::path(KFORGE_TEST_DIR) / "families/toy/toy.json");
    store.emplace((dir / "results.db").string());
  }
  void TearDown() override {
    store.reset();
    fs::remove_all(dir);
  }
  Shape shape(const std::string& text) { return parse_shape(family, text); }
  static Config cfg(int64_t block, int64_t vec, const std::string& mode) {
    return {{"BLOCK", block}, {"VEC", vec}, {"MODE", mode}};
  }
  void record(const Config& c, const Shape& s, const DeviceKey& d, double us) {
    EvaluationRecord e;
    e.family = family.name;
    e.config = c;
    e.shape = s;
    e.device = d;
    e.status = Status::Ok;
    TimingStats t;
    t.median_us = us;
    e.timing = t;
    store->add_evaluation(e);
  }
  std::vector<Config> seeds(const Shape& s, Seeding how) {
    const SearchSpace space = make_space(family, s, DeviceLimits::for_arch("sm_90"));
    return seed_configs(*store, family, s, kH100, space, how);
  }
};

TEST_F(SeedingFixture, StoredShapeThenNearestShapeThenOtherDevicesThenDefaultsThenFartherShapes) {
  const Shape target = shape("N=4096,dtype=f16");
  record(cfg(256, 4, "unrolled"), shape("N=1048576,dtype=f16"), kH100, 1.0);  // far: 2^8 away
  record(cfg(64, 1, "plain"), shape("N=8192,dtype=f16"), kH100, 2.0);         // near: 2^1 away
  record(cfg(64, 2, "plain"), target, kL4, 3.0);                             // same shape, other GPU
  record(cfg(256, 2, "unrolled"), target, kH100, 5.0);                       // same shape and GPU
  record(family.defaults.at(0), target, kH100, 9.0);                         // the default, measured here too
  record(cfg(64, 4, "plain"), shape("N=4096,dtype=f32"), kH100, 0.5);        // other dtype: no relation
  const auto s = seeds(target, Seeding::store);
  const std::vector<Config> expected = {cfg(256, 2, "unrolled"), cfg(64, 1, "plain"),
                                        cfg(64, 2, "plain"), family.defaults.at(0),
                                        cfg(256, 4, "unrolled")};
  EXPECT_EQ(s, expected);
}

TEST_F(SeedingFixture, SourcesTakeTurnsSoTheDefaultsReachAFirstGeneration) {
  const Shape target = shape("N=4096,dtype=f16");
  const Shape near = shape("N=8192,dtype=f16");
  record(cfg(64, 1, "plain"), near, kH100, 1.0);
  record(cfg(64, 2, "plain"), near, kH100, 2.0);
  record(cfg(64, 4, "plain"), near, kH100, 3.0);
  record(cfg(256, 4, "unrolled"), shape("N=65536,dtype=f16"), kH100, 1.0);
  const auto s = seeds(target, Seeding::store);
  const std::vector<Config> expected = {cfg(64, 1, "plain"), family.defaults.at(0),
                                        cfg(256, 4, "unrolled"), cfg(64, 2, "plain"),
                                        cfg(64, 4, "plain")};
  EXPECT_EQ(s, expected);
}

TEST_F(SeedingFixture, ConfigsInvalidForTheShapeAreDroppedAndNoneRepeats) {
  const Shape odd = shape("N=4097,dtype=f16");  // N % VEC == 0 leaves VEC = 1 only
  record(cfg(128, 1, "plain"), shape("N=4099,dtype=f16"), kH100, 1.0);
  record(cfg(128, 2, "plain"), shape("N=4098,dtype=f16"), kH100, 1.0);  // VEC 2: invalid at 4097
  record(cfg(128, 1, "plain"), odd, kL4, 1.0);                          // the same config again
  EXPECT_EQ(seeds(odd, Seeding::store), std::vector<Config>{cfg(128, 1, "plain")});  // default (VEC 2) dropped
}

TEST_F(SeedingFixture, DefaultsOnlyAndNone) {
  const Shape target = shape("N=4096,dtype=f16");
  record(cfg(256, 2, "unrolled"), target, kH100, 5.0);
  EXPECT_EQ(seeds(target, Seeding::defaults), family.defaults);
  EXPECT_TRUE(seeds(target, Seeding::none).empty());
  EXPECT_EQ(parse_seeding("none"), Seeding::none);
  EXPECT_THROW(parse_seeding("warm"), std::invalid_argument);
}

}  // namespace

namespace {

TEST_F(SeedingFixture, AReSearchedShapeTriesTheDefaultsItNeverMeasuredFirst) {
  const Shape target = shape("N=4096,dtype=f16");
  const Config def = family.defaults.at(0);
  record(cfg(64, 1, "plain"), shape("N=8192,dtype=f16"), kH100, 1.0);  // the nearest shape's winner
  record(cfg(256, 4, "unrolled"), target, kH100, 4.0);                // searched here before, not the default
  // the default it never measured leads; then the turns as before (which put it after the nearest winner)
  EXPECT_EQ(seeds(target, Seeding::store), (std::vector<Config>{def, cfg(256, 4, "unrolled"), cfg(64, 1, "plain")}));
  // once measured, the turns alone
  record(def, target, kH100, 5.0);
  EXPECT_EQ(seeds(target, Seeding::store), (std::vector<Config>{cfg(256, 4, "unrolled"), cfg(64, 1, "plain"), def}));
  // results on another device only: a new shape here, the turns alone
  const Shape other = shape("N=2048,dtype=f16");
  record(cfg(128, 4, "plain"), other, kL4, 1.0);
  EXPECT_EQ(seeds(other, Seeding::store).front(), cfg(256, 4, "unrolled"));  // N=4096's winner, the nearest
}

TEST_F(SeedingFixture, AConfigStoredBeforeAParameterExistedTakesItsFirstValue) {
  const Shape target = shape("N=4096,dtype=f16");
  const Config old = {{"BLOCK", int64_t{256}}, {"VEC", int64_t{2}}};  // recorded before MODE existed
  EXPECT_EQ(complete_stored_config(family, old), cfg(256, 2, "plain"));
  record(old, target, kH100, 1.0);
  record(family.defaults.at(0), target, kH100, 9.0);  // (measured, so it does not lead)
  EXPECT_EQ(seeds(target, Seeding::store).front(), cfg(256, 2, "plain"));
}

}  // namespace

// Stored shapes leave out the dims at their defaults (sdpa_fwd's Hkv and Skv): the distance is between the
// shapes with every dim filled in, so two square attention shapes are neighbours, and a grouped-query shape is
// near the square one it grew from.
TEST(ShapeDistance, DimsAtTheirDefaultsCountAsGiven) {
  const Family sdpa = load_family(fs::path(KFORGE_SOURCE_DIR) / "search_spaces" / "sdpa_fwd.json");
  const Shape square = parse_shape(sdpa, "B=8,H=32,S=1024,D=128,causal=1,dtype=bf16");
  const Shape longer = parse_shape(sdpa, "B=8,H=32,S=4096,D=128,causal=1,dtype=bf16");
  const Shape gqa = parse_shape(sdpa, "B=8,H=32,Hkv=8,S=1024,D=128,causal=1,dtype=bf16");
  ASSERT_EQ(square.count("Hkv"), 0u);  // left out at its default
  EXPECT_DOUBLE_EQ(shape_distance(sdpa, square, longer), 4.0);  // log2(4096 / 1024) over S and over Skv
  EXPECT_DOUBLE_EQ(shape_distance(sdpa, square, gqa), 2.0);     // log2(32 / 8) over Hkv
  EXPECT_TRUE(std::isinf(shape_distance(sdpa, square, parse_shape(sdpa, "B=8,H=32,S=1024,D=128,causal=0,dtype=bf16"))));
}

// gemm's in_dtype and b_layout are left out at their defaults too: two f16 shapes with B [K][N] are neighbours.
TEST(ShapeDistance, GemmShapesAtTheDefaultInputTypeAreNeighbours) {
  const Family gemm = load_family(fs::path(KFORGE_SOURCE_DIR) / "search_spaces" / "gemm.json");
  const Shape a = parse_shape(gemm, "M=4096,N=4096,K=4096,dtype=f16");
  ASSERT_EQ(a.count("in_dtype"), 0u);
  EXPECT_DOUBLE_EQ(shape_distance(gemm, a, parse_shape(gemm, "M=1024,N=4096,K=4096,dtype=f16")), 2.0);
  EXPECT_DOUBLE_EQ(shape_distance(gemm, a, parse_shape(gemm, "M=4096,N=4096,K=4096,dtype=f16,in_dtype=f16")), 0.0);
  EXPECT_TRUE(std::isinf(shape_distance(gemm, a, parse_shape(gemm, "M=4096,N=4096,K=4096,dtype=f16,b_layout=nk"))));
}
