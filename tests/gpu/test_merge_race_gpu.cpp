// The key-range groups' merge (docs/experiments/key_range_merge_race.md): with group 0 made late on
// purpose the gate still passes (the named barrier orders the merge), and without the barrier it fails
// (the gate would catch the race racecheck suspects, were it real). Skips where there is no GPU.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>

#include "compile/compiler.hpp"
#include "eval/client/worker_client.hpp"
#include "family/render.hpp"
#include "gpu/device.hpp"

namespace fs = std::filesystem;
using namespace kf;

namespace {

const fs::path kSpec = fs::path(KFORGE_TEST_DIR) / ".." / "search_spaces" / "sdpa_fwd.json";

// The S512 mission winner (wgmma, key ranges on TMA rings) and a mma.sync key-range config.
Config wgmma_range() {
  return parse_assignment(
      "BLOCK_M=64,BLOCK_N=128,EXP2=f32,KV_LOAD=tma,KV_MCAST=1,KV_MERGE=gmem,KV_SPLITS=1,KV_WAIT=joint,LANE_ADDR=0,"
      "LAYOUT=swizzled,LAZY_RESCALE=0,LOAD_ORDER=after_qk,MIN_BLOCKS=1,MMA=wgmma,PIPE_QK=0,P_EARLY=1,Q_IN=regs,"
      "Q_LOAD=cp_async,STAGES=3,VEC=8,WARPS=8,WARPS_N=2,WG_PINGPONG=0,WN_KEYS=range,WS=0,PERSIST=0");
}
Config mma_range() {
  Config c = wgmma_range();
  c["MMA"] = std::string("mma");
  c["KV_LOAD"] = std::string("cp_async");
  c["LOAD_ORDER"] = std::string("first");
  c["LANE_ADDR"] = int64_t{1};
  return c;
}

class MergeRaceGpu : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (auto why = gpu::device_unavailable(0)) GTEST_SKIP() << *why;
    dev_ = gpu::open_device(0);
    if (dev_.cc() != 90) GTEST_SKIP() << "the key-range configs need sm_90 (wgmma, TMA)";
    family_ = load_family(kSpec);
    shape_ = parse_shape(family_, "B=2,H=8,S=512,D=64,causal=0,dtype=f16");
    cache_ = std::make_unique<CubinCache>(fs::temp_directory_path() /
                                          ("kforge-gpu-test-cubins-" + std::to_string(getuid())));
  }

  // Gates config with extra defines (KF_<NAME>; a variant hash of their own) on the worker.
  EvalResult gate(const Config& c, const Assignment& defines) {
    const Variant v = render_variant(family_, c, shape_, defines);
    const CompiledKernel k = compile_variant(v, dev_.arch(), cache_.get());
    EXPECT_TRUE(k.ok) << k.log;
    const CompiledKernel ref = compile_variant(render_reference(family_, shape_), dev_.arch(), cache_.get());
    EvalRequest req;
    req.id = 1;
    req.spec_path = kSpec.string();
    req.config = c;
    req.shape = shape_;
    req.cubin_path = k.cubin_path.string();
    req.ref_cubin_path = ref.cubin_path.string();
    req.time = false;
    WorkerClient worker({KFORGE_BINARY, "worker", "--device", "0"}, 120);
    return worker.evaluate(req);
  }

  DeviceLimits dev_;
  Family family_;
  Shape shape_;
  std::unique_ptr<CubinCache> cache_;
};

Config config_named(const std::string& name) { return name == "wgmma" ? wgmma_range() : mma_range(); }

}  // namespace

TEST_P(MergeRaceGpu, LateGroupZeroStillMergesCorrectly) {
  const Config c = config_named(GetParam());
  ASSERT_FALSE(violated_constraint(family_, c, shape_, dev_)) << "the test config left the space";
  const EvalResult r = gate(c, {{"TEST_MERGE_LATE", int64_t{200000}}});
  EXPECT_EQ(to_string(r.status), "ok") << r.error;
}

TEST_P(MergeRaceGpu, DroppedBarrierFailsTheGate) {
  const Config c = config_named(GetParam());
  const EvalResult r = gate(c, {{"TEST_MERGE_LATE", int64_t{200000}}, {"TEST_MERGE_NO_BARRIER", int64_t{1}}});
  EXPECT_EQ(to_string(r.status), "wrong_result") << r.error;
}

INSTANTIATE_TEST_SUITE_P(KeyRange, MergeRaceGpu, ::testing::Values("wgmma", "mma"));
