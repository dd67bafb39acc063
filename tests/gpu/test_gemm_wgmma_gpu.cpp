// The gemm family's Hopper path (MMA=wgmma) through the worker's gate on an sm_90 GPU: the spec's wgmma
// defaults and a few structural variants (one or two consumer warpgroups, plain and persistent grids,
// both raster orders, every wgmma width, the shallowest and deepest rings) at 4096^3, at an odd shape
// (M, N and K tails: 257 x 136 x 1032), multicast and split-K clusters among them and at a small one, f16 and f32 out; and on the problems models pose
// (bf16 in and out, B stored [N][K] as a layer's weights). Every gate also runs the
// spec's gate cases the config admits (short_k 100 x 72 x 24, tiny 1 x 8 x 8, odd_m_ktail). The 4096^3
// gates are timed too and the TFLOP/s printed (informational; nothing is asserted about speed).
// Skips where there is no GPU or it is not sm_90.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "compile/compiler.hpp"
#include "eval/client/worker_client.hpp"
#include "family/family.hpp"
#include "family/render.hpp"
#include "gpu/device.hpp"

namespace fs = std::filesystem;
using namespace kf;

namespace {

const fs::path kSpec = fs::path(KFORGE_TEST_DIR) / ".." / "search_spaces" / "gemm.json";

// A wgmma config: the first default with `change` applied ("K=V,...").
Config wgmma_config(const Family& f, const std::string& change) {
  Config c;
  for (const auto& d : f.defaults)
    if (std::get<std::string>(d.at("MMA")) == "wgmma") {
      c = d;
      break;
    }
  if (!change.empty())
    for (const auto& [name, value] : parse_assignment(change)) c[name] = value;
  return c;
}

struct Case {
  std::string name;    // gtest-safe
  std::string change;  // over the first wgmma default; "default<i>": the i-th wgmma default
};

class GemmWgmmaGpu : public ::testing::TestWithParam<Case> {
 protected:
  static void SetUpTestSuite() {
    if (auto why = gpu::device_unavailable(0)) {
      skip_ = *why;
      return;
    }
    dev_ = gpu::open_device(0);
    if (dev_.cc() != 90) {
      skip_ = "the wgmma path needs sm_90 (wgmma, TMA); device 0 is " + dev_.arch();
      return;
    }
    family_ = std::make_unique<Family>(load_family(kSpec));
    cache_ = std::make_unique<CubinCache>(fs::temp_directory_path() /
                                          ("kforge-gpu-test-cubins-" + std::to_string(getuid())));
    // a gate with its timing takes seconds: a hang (a ring barrier never completing) is cut short
    worker_ = std::make_unique<WorkerClient>(std::vector<std::string>{KFORGE_BINARY, "worker", "--device", "0"}, 30);
  }
  static void TearDownTestSuite() {
    worker_.reset();
    cache_.reset();
    family_.reset();
  }
  void SetUp() override {
    if (!skip_.empty()) GTEST_SKIP() << skip_;
  }

  Config config_of(const Case& c) const {
    if (c.change.rfind("default", 0) == 0) {
      const size_t want = std::stoul(c.change.substr(7));
      size_t i = 0;
      for (const auto& d : family_->defaults)
        if (std::get<std::string>(d.at("MMA")) == "wgmma" && i++ == want) return d;
      ADD_FAILURE() << "no wgmma default " << want;
      return {};
    }
    return wgmma_config(*family_, c.change);
  }

  // Gates (and with `time`, times) config c at shape text s on the worker.
  EvalResult gate(const Config& c, const std::string& s, bool time) {
    const Shape shape = parse_shape(*family_, s);
    EXPECT_FALSE(violated_constraint(*family_, c, shape, dev_)) << to_string(c) << " at " << s << ": left the space";
    const Variant v = render_variant(*family_, c, shape);
    EXPECT_EQ(v.arch_suffix, "a");
    const CompiledKernel k = compile_variant(v, dev_.arch(), cache_.get());
    EXPECT_TRUE(k.ok) << k.log.substr(0, 2000);
    EXPECT_EQ(k.info.spill_stores, 0) << to_string(c);
    const CompiledKernel ref = compile_variant(render_reference(*family_, shape), dev_.arch(), cache_.get());
    EXPECT_TRUE(ref.ok) << ref.log.substr(0, 2000);
    EvalRequest req;
    req.id = ++id_;
    req.spec_path = kSpec.string();
    req.config = c;
    req.shape = shape;
    req.cubin_path = k.cubin_path.string();
    req.ref_cubin_path = ref.cubin_path.string();
    req.seed = 7;
    req.time = time;
    req.timing.warmup_ms = 20;
    req.timing.min_reps = 5;
    req.timing.max_reps = 30;
    req.timing.max_ms = 400;
    req.timing.graph_ms = 2.0;
    const EvalResult r = worker_->evaluate(req);
    if (r.timing && r.timing->median_us > 0) {
      const double flops = 2.0 * std::get<int64_t>(shape.at("M")) * std::get<int64_t>(shape.at("N")) *
                           std::get<int64_t>(shape.at("K"));
      const double tflops = flops / (r.timing->median_us * 1e-6) / 1e12;
      std::printf("[ gemm wgmma ] %s %s: %.1f us, %.1f TFLOP/s, %d regs, max_abs %.3g\n", to_string(c).c_str(),
                  s.c_str(), r.timing->median_us, tflops, k.info.registers, r.max_abs);
    }
    return r;
  }

  static inline std::string skip_;
  static inline DeviceLimits dev_;
  static inline std::unique_ptr<Family> family_;
  static inline std::unique_ptr<CubinCache> cache_;
  static inline std::unique_ptr<WorkerClient> worker_;
  static inline int64_t id_ = 0;
};

}  // namespace

TEST_P(GemmWgmmaGpu, PassesTheGateAt4096Cubed) {
  const Config c = config_of(GetParam());
  const EvalResult r = gate(c, "M=4096,N=4096,K=4096,dtype=f16", true);
  EXPECT_EQ(to_string(r.status), "ok") << to_string(c) << ": " << r.error;
  EXPECT_GE(r.gate_shapes, 3) << "4096^3 and the gate cases short_k, tiny, odd_m_ktail";
}

TEST_P(GemmWgmmaGpu, PassesTheGateWithTailsInEveryDimension) {
  const Config c = config_of(GetParam());
  const EvalResult r = gate(c, "M=257,N=136,K=1032,dtype=f16", false);
  EXPECT_EQ(to_string(r.status), "ok") << to_string(c) << ": " << r.error;
}

TEST_P(GemmWgmmaGpu, PassesTheGateSmallWithF32Out) {
  const Config c = config_of(GetParam());
  // fewer tiles than SMs (persistent grids shrink to the tile count), K one k-tile and a half
  const EvalResult r = gate(c, "M=200,N=264,K=96,dtype=f32", false);
  EXPECT_EQ(to_string(r.status), "ok") << to_string(c) << ": " << r.error;
}

// The problems models pose: bf16 in and out, B as stored weights ([N][K], torch's x @ W.T), and the mixes.
TEST_P(GemmWgmmaGpu, PassesTheGateOnModelShapes) {
  const Config c = config_of(GetParam());
  for (const char* s : {"M=4096,N=4096,K=4096,dtype=bf16,in_dtype=bf16,b_layout=nk",
                        "M=257,N=136,K=1032,dtype=bf16,in_dtype=bf16,b_layout=nk",
                        "M=200,N=264,K=96,dtype=f32,in_dtype=bf16",
                        "M=257,N=136,K=1032,dtype=f16,b_layout=nk"}) {
    const EvalResult r = gate(c, s, std::string(s).rfind("M=4096", 0) == 0);
    EXPECT_EQ(to_string(r.status), "ok") << to_string(c) << " at " << s << ": " << r.error;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Configs, GemmWgmmaGpu,
    ::testing::Values(Case{"Default0", "default0"}, Case{"Default1", "default1"}, Case{"Default2", "default2"},
                      Case{"Default3", "default3"}, Case{"Default4", "default4"}, Case{"Default5", "default5"},
                      Case{"Default6", "default6"}, Case{"Default7", "default7"},
                      // 64-wide wgmma, the deepest ring, column bands, plain row-major order
                      Case{"N64Stages6RasterN", "BLOCK_N=64,STAGES=6,RASTER=n,GROUP=4"},
                      Case{"N192Group1", "BLOCK_N=192,STAGES=4,GROUP=1"},
                      // 128 x 192 per consumer warpgroup: 192 accumulator registers after setmaxnreg
                      Case{"M256N192TwoStages", "BLOCK_M=256,BLOCK_N=192,STAGES=2"},
                      // one consumer warpgroup, 64 rows, 64 columns: the smallest tile
                      Case{"OneConsumerM64N64", "BLOCK_M=64,BLOCK_N=64,CONSUMERS=1,STAGES=3,PERSIST=1"},
                      // multicast clusters: B's half-boxes of 32 rows (n or k), a plain grid, one consumer
                      Case{"ClusterN64", "BLOCK_N=64,STAGES=6,CLUSTER=2"},
                      Case{"ClusterN192Plain", "BLOCK_N=192,CLUSTER=2,PERSIST=0,GROUP=1"},
                      Case{"ClusterOneConsumer", "BLOCK_M=64,BLOCK_N=128,CONSUMERS=1,STAGES=6,CLUSTER=2,RASTER=n"},
                      // split K over a cluster (one consumer warpgroup): 64 x 256 partials, and eight CTAs,
                      // some of whose runs of k-tiles are empty at K = 1032 (17 k-tiles) and K = 24
                      Case{"SplitK2", "BLOCK_M=64,CONSUMERS=1,STAGES=5,PERSIST=0,SPLIT_K=2"},
                      Case{"SplitK8", "BLOCK_M=64,BLOCK_N=64,CONSUMERS=1,STAGES=6,PERSIST=0,SPLIT_K=8"}),
    [](const ::testing::TestParamInfo<Case>& i) { return i.param.name; });
