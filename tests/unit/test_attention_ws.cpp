// sdpa_fwd's producer warpgroup (WS=1, kernel_templates/sdpa/producer.cuh) in the family's space: the spec
// admits it only with the structure the template needs (PIPE_QK=2 on a TMA ring with split waits and TMA for Q),
// BLOCK_N past 128 only with it and only as far as the registers go, two stages only with it; and the variants
// it admits compile for sm_90a without spilling (setmaxnreg gives the consumers 240 registers), the persistent
// CTAs on it (PERSIST 1 and 2) too.
#include <gtest/gtest.h>

#include <filesystem>
#include <future>
#include <random>

#include "compile/compiler.hpp"
#include "family/family.hpp"
#include "family/render.hpp"

namespace fs = std::filesystem;
using namespace kf;

namespace {

Family sdpa_fwd() { return load_family(fs::path(KFORGE_TEST_DIR) / ".." / "search_spaces" / "sdpa_fwd.json"); }

// The first default with the producer warpgroup (a campaign seed: BLOCK_N 176, two stages).
Config producer_default(const Family& f) {
  for (const auto& c : f.defaults)
    if (std::get<int64_t>(c.at("WS")) == 1) return c;
  return {};
}

Config with(Config c, const std::string& name, const Value& v) {
  c[name] = v;
  return c;
}

}  // namespace

TEST(AttentionProducerWarpgroup, TheSpaceAdmitsItOnlyWithTheStructureItNeeds) {
  const Family f = sdpa_fwd();
  const Shape d128 = parse_shape(f, "B=1,H=16,S=8192,D=128,causal=0,dtype=f16");
  const SearchSpace sm90 = make_space(f, d128, DeviceLimits::for_arch("sm_90"));
  const Config ws = producer_default(f);
  ASSERT_FALSE(ws.empty());
  ASSERT_EQ(std::get<int64_t>(ws.at("BLOCK_N")), 176);
  EXPECT_TRUE(sm90.valid(ws)) << to_string(ws);
  // K and V are released apart, Q comes from the producer too, and only the overlap loop releases slots
  EXPECT_FALSE(sm90.valid(with(ws, "KV_WAIT", std::string("joint"))));
  EXPECT_FALSE(sm90.valid(with(ws, "Q_LOAD", std::string("cp_async"))));
  EXPECT_FALSE(sm90.valid(with(ws, "PIPE_QK", int64_t{1})));
  // two CTAs per SM would cap every thread at 80 registers, under the consumers' 240 (ptxas refuses)
  EXPECT_FALSE(sm90.valid(with(ws, "MIN_BLOCKS", int64_t{2})));
  // persistent CTAs need the producer warpgroup, and O's staging rows of their own fit beside BLOCK_N 128
  // (with 176 they do not: Q 32 KB + two stages of K/V 176 KB + O 32 KB)
  EXPECT_TRUE(sm90.valid(with(with(ws, "BLOCK_N", int64_t{128}), "PERSIST", int64_t{1})));
  EXPECT_FALSE(sm90.valid(with(ws, "PERSIST", int64_t{1})));
  // PERSIST=2 keeps two Q buffers instead (64 KB), and stages O in the finished one: BLOCK_N 160 fits, 176 not
  EXPECT_TRUE(sm90.valid(with(with(ws, "BLOCK_N", int64_t{160}), "PERSIST", int64_t{2})));
  EXPECT_FALSE(sm90.valid(with(ws, "PERSIST", int64_t{2})));
  const Config plain128 = with(with(with(ws, "WS", int64_t{0}), "STAGES", int64_t{3}), "BLOCK_N", int64_t{128});
  EXPECT_TRUE(sm90.valid(plain128)) << to_string(plain128);
  EXPECT_FALSE(sm90.valid(with(plain128, "PERSIST", int64_t{1})));
  // D128: BLOCK_N 192 would need 256 fragment registers, more than the consumers' 240
  EXPECT_FALSE(sm90.valid(with(ws, "BLOCK_N", int64_t{192})));
  // without the producer warpgroup: BLOCK_N 32, 64 or 128 only, and three stages
  const Config plain = with(with(ws, "WS", int64_t{0}), "STAGES", int64_t{3});
  EXPECT_FALSE(sm90.valid(plain)) << "BLOCK_N 176 without WS";
  EXPECT_TRUE(sm90.valid(with(plain, "BLOCK_N", int64_t{128})));
  EXPECT_FALSE(sm90.valid(with(with(plain, "BLOCK_N", int64_t{128}), "STAGES", int64_t{2})));
  // D64 leaves registers for BLOCK_N 192; sm_89 has no wgmma
  const Shape d64 = parse_shape(f, "B=8,H=16,S=2048,D=64,causal=0,dtype=f16");
  EXPECT_TRUE(make_space(f, d64, DeviceLimits::for_arch("sm_90")).valid(with(ws, "BLOCK_N", int64_t{192})));
  EXPECT_FALSE(make_space(f, d128, DeviceLimits::for_arch("sm_89")).valid(ws));
}

TEST(AttentionProducerWarpgroup, VariantsCompileForSm90aWithoutSpills) {
  const Family f = sdpa_fwd();
  const Config ws = producer_default(f);
  ASSERT_FALSE(ws.empty());
  std::random_device rd;
  const fs::path dir = fs::temp_directory_path() / ("kforge-test-ws-" + std::to_string(rd()));
  CubinCache cache(dir);
  CompilePool pool(2, &cache);
  const std::vector<std::pair<std::string, Config>> cases = {
      {"B=1,H=16,S=8192,D=128,causal=0,dtype=f16", ws},
      {"B=2,H=16,S=4096,D=128,causal=1,dtype=bf16", with(ws, "BLOCK_N", int64_t{128})},
      {"B=8,H=16,S=2048,D=64,causal=0,dtype=f16", with(ws, "BLOCK_N", int64_t{192})},
      {"B=16,H=16,S=1024,D=128,causal=1,dtype=bf16", with(with(ws, "BLOCK_N", int64_t{128}), "PERSIST", int64_t{1})},
      {"B=16,H=16,S=1024,D=128,causal=0,dtype=f16", with(with(ws, "BLOCK_N", int64_t{128}), "PERSIST", int64_t{2})},
      {"B=4,H=16,S=1024,D=64,causal=1,dtype=bf16",
       with(with(with(ws, "BLOCK_N", int64_t{128}), "PERSIST", int64_t{2}), "Q_IN", std::string("regs"))}};
  std::vector<std::pair<std::string, std::future<CompiledKernel>>> jobs;
  for (const auto& [shape_text, config] : cases) {
    const Shape shape = parse_shape(f, shape_text);
    ASSERT_TRUE(make_space(f, shape, DeviceLimits::for_arch("sm_90")).valid(config)) << to_string(config);
    jobs.emplace_back(shape_text + " " + to_string(config), pool.submit(render_variant(f, config, shape), "sm_90"));
  }
  for (auto& [what, fut] : jobs) {
    const CompiledKernel k = fut.get();
    EXPECT_TRUE(k.ok) << what << ": " << k.log.substr(0, 600);
    EXPECT_EQ(k.info.spill_stores, 0) << what;
    EXPECT_EQ(k.info.spill_loads, 0) << what;
  }
  fs::remove_all(dir);
}
