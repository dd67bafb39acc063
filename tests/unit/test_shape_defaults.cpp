// Dimensions with defaults and shape constraints (docs/family_spec.md, "Adding a dimension"): sdpa_fwd's
// Hkv (K/V heads, default H) and Skv (keys, default S). A shape at the defaults keeps the key it had before
// the dims existed, so the shipped store's records still answer; a grouped-query or KV-cache shape is a
// new key; expressions always see every dim.
#include <gtest/gtest.h>

#include <filesystem>

#include "family/family.hpp"
#include "store/store.hpp"
#include "test_dir.hpp"

namespace kf {
namespace {

namespace fs = std::filesystem;

Family sdpa() { return load_family(fs::path(KFORGE_SOURCE_DIR) / "search_spaces" / "sdpa_fwd.json"); }

TEST(ShapeDefaults, ASquareShapeKeepsItsKey) {
  const Family f = sdpa();
  const std::string old_key = "B=2,D=64,H=8,S=256,causal=0,dtype=f16";
  EXPECT_EQ(to_string(parse_shape(f, "B=2,H=8,S=256,D=64,causal=0,dtype=f16")), old_key);
  // given at their defaults, Hkv and Skv are left out too: one shape, one key
  EXPECT_EQ(to_string(parse_shape(f, "B=2,H=8,Hkv=8,S=256,Skv=256,D=64,causal=0,dtype=f16")), old_key);
  const Shape full = full_shape(f, parse_shape(f, old_key));
  EXPECT_EQ(std::get<int64_t>(full.at("Hkv")), 8);
  EXPECT_EQ(std::get<int64_t>(full.at("Skv")), 256);
}

TEST(ShapeDefaults, GroupedQueryAndKvCacheShapesKeepTheirDims) {
  const Family f = sdpa();
  const Shape s = parse_shape(f, "B=1,H=32,Hkv=8,S=512,Skv=4096,D=128,causal=1,dtype=bf16");
  EXPECT_EQ(to_string(s), "B=1,D=128,H=32,Hkv=8,S=512,Skv=4096,causal=1,dtype=bf16");
  // only the dim that differs from its default is kept
  EXPECT_EQ(to_string(parse_shape(f, "B=1,H=32,Hkv=8,S=512,D=128,causal=1,dtype=bf16")),
            "B=1,D=128,H=32,Hkv=8,S=512,causal=1,dtype=bf16");
  // expressions see every dim: K's buffer is B * Hkv * Skv * D elements
  const Scope scope = make_reference_scope(f, s, DeviceLimits::for_arch("sm_90"));
  EXPECT_EQ(std::get<int64_t>(scope.at("Hkv")), 8);
  EXPECT_EQ(std::get<int64_t>(scope.at("Skv")), 4096);
  EXPECT_EQ(f.buffer("K")->count.eval_int(scope), 1LL * 8 * 4096 * 128);
  EXPECT_EQ(f.buffer("Q")->count.eval_int(scope), 1LL * 32 * 512 * 128);
}

TEST(ShapeDefaults, ShapeConstraintsAreOneLineErrors) {
  const Family f = sdpa();
  try {
    parse_shape(f, "B=1,H=32,Hkv=6,S=512,D=128,causal=0,dtype=f16");
    FAIL() << "H=32 over Hkv=6 accepted";
  } catch (const SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("'H % Hkv == 0' does not hold"), std::string::npos) << e.what();
  }
  try {  // causal with more queries than keys: rows with no key to see
    parse_shape(f, "B=1,H=8,S=512,Skv=256,D=64,causal=1,dtype=f16");
    FAIL() << "causal S > Skv accepted";
  } catch (const SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("'causal == 0 || S <= Skv' does not hold"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(parse_shape(f, "B=1,H=8,S=512,Skv=256,D=64,causal=0,dtype=f16"));
}

TEST(ShapeDefaults, GateCasesKeepGroupedQueryCampaignsCovered) {
  // Every gate case names Hkv and Skv, so a grouped-query campaign shape loses none of them.
  const Family f = sdpa();
  const auto cases = gate_shapes(f, parse_shape(f, "B=1,H=32,Hkv=8,S=1,Skv=4096,D=128,causal=1,dtype=bf16"));
  EXPECT_EQ(cases.size(), f.gate.size() + 1);
}

TEST(ShapeDefaults, TheShippedStoreStillAnswersForSquareShapes) {
  // The store migration is that there is none: the shapes stored before Hkv and Skv existed are read as
  // Hkv = H, Skv = S under their old keys.
  const Family f = sdpa();
  const fs::path db = fresh_test_dir("kf_shape_defaults") / "results.db";
  fs::copy_file(fs::path(KFORGE_SOURCE_DIR) / "results.db", db);
  fs::permissions(db, fs::perms::owner_write, fs::perm_options::add);
  Store store(db);
  int answered = 0;
  for (const Shape& s : suite_shapes(f, "mission")) answered += store.best("sdpa_fwd", s, std::nullopt).has_value() ? 1 : 0;
  EXPECT_EQ(answered, 4);
  for (const Shape& s : store.shapes("sdpa_fwd")) EXPECT_EQ(to_string(validate_shape(f, s)), to_string(s));
}

}  // namespace
}  // namespace kf
