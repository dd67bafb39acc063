// tensor_map arguments on a GPU (sm_90 or newer: TMA). The evaluator gates and times a kernel
// that reads its input only through a map (tma_fixture: a 3-d view with 128-byte swizzle)
// against a plain reference; a map encoded unlike the kernel expects gives wrong output; a
// map the rules refuse makes the config invalid with the reason; and the driver's own refusal
// is reported with cuTensorMapEncodeTiled's return code.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <functional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "compile/compiler.hpp"
#include "eval/worker/evaluator.hpp"
#include "eval/worker/tensor_map_encode.hpp"
#include "family/render.hpp"
#include "gpu/device.hpp"

namespace kf {
namespace {

namespace fs = std::filesystem;
using OJson = nlohmann::ordered_json;

const fs::path kDir = fs::path(KFORGE_TEST_DIR) / "families" / "tma_fixture";

class TensorMapGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto why = gpu::device_unavailable(0)) GTEST_SKIP() << *why;
    dev = gpu::open_device(0);
    if (dev.cc() < 90) GTEST_SKIP() << "TMA needs sm_90 or newer; device 0 is " << dev.arch();
    dir = fs::temp_directory_path() / ("kforge_gpu_tmap_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  void TearDown() override {
    if (!dir.empty()) fs::remove_all(dir);
  }

  // A copy of the fixture spec with `change` applied, its templates copied beside it (a spec
  // reads templates from its own folder only).
  fs::path mutated(const std::string& name, const std::function<void(OJson&)>& change) {
    std::ifstream in(kDir / "tma_fixture.json");
    OJson j = OJson::parse(in);
    j["name"] = name;
    for (const char* f : {"tma_scale.cu", "reference.cu"})
      fs::copy_file(kDir / f, dir / f, fs::copy_options::overwrite_existing);
    change(j);
    const fs::path p = dir / (name + ".json");
    std::ofstream(p) << j.dump(2);
    return p;
  }

  EvalResult evaluate(const fs::path& spec, const std::string& config, const std::string& shape) {
    const Family f = load_family(spec);
    CubinCache cache(dir / "cubins");
    EvalRequest r;
    r.id = 1;
    r.spec_path = spec.string();
    r.config = parse_assignment(config);
    r.shape = parse_shape(f, shape);
    const CompiledKernel cand = compile_variant(render_variant(f, r.config, r.shape), dev.arch(), &cache);
    const CompiledKernel ref = compile_variant(render_reference(f, r.shape), dev.arch(), &cache);
    EXPECT_TRUE(cand.ok) << cand.log;
    EXPECT_TRUE(ref.ok) << ref.log;
    r.cubin_path = cand.cubin_path.string();
    r.ref_cubin_path = ref.cubin_path.string();
    r.seed = 5;
    r.timing.warmup_ms = 2;
    r.timing.max_ms = 100;
    r.timing.min_reps = 5;
    r.timing.max_reps = 20;
    r.timing.graph_ms = 0.5;
    Evaluator ev(dev);
    return ev.evaluate(r);
  }

  DeviceLimits dev;
  fs::path dir;
};

TEST_F(TensorMapGpu, KernelReadingThroughTheMapPassesTheGateAndIsTimed) {
  for (const auto& [config, shape] : std::vector<std::pair<std::string, std::string>>{
           {"BOX_R=16,THREADS=128", "B=2,R=64,C=256,dtype=f16"},
           {"BOX_R=32,THREADS=64", "B=3,R=100,C=200,dtype=f32"},
           {"BOX_R=8,THREADS=128", "B=1,R=1000,C=1000,dtype=f16"}}) {
    SCOPED_TRACE(config + " " + shape);
    const EvalResult r = evaluate(kDir / "tma_fixture.json", config, shape);
    EXPECT_EQ(r.status, Status::Ok) << r.error;
    EXPECT_EQ(r.gate_shapes, 2) << "the shape and the ragged gate case";
    EXPECT_EQ(r.max_abs, 0.0);
    ASSERT_TRUE(r.timing);
    EXPECT_GT(r.timing->median_us, 0);
  }
}

// The kernel un-swizzles 128-byte rows: a map encoded without the swizzle must fail the gate,
// so the spec's swizzle demonstrably reaches the descriptor.
TEST_F(TensorMapGpu, AnotherSwizzleThanTheKernelExpectsIsWrong) {
  const fs::path spec = mutated("tma_noswizzle", [](OJson& j) { j["args"][0]["swizzle"] = 0; });
  const EvalResult r = evaluate(spec, "BOX_R=16,THREADS=128", "B=2,R=64,C=256,dtype=f16");
  EXPECT_EQ(r.status, Status::WrongResult) << r.error;
}

TEST_F(TensorMapGpu, AMapTheRulesRefuseMakesTheConfigInvalid) {
  const fs::path spec = mutated("tma_widebox", [](OJson& j) { j["args"][0]["box"][0] = "box_c * 2"; });
  const EvalResult r = evaluate(spec, "BOX_R=16,THREADS=128", "B=2,R=64,C=256,dtype=f16");
  EXPECT_EQ(r.status, Status::Invalid) << r.error;
  EXPECT_EQ(r.error,
            "expression: tensor_map argument 0 (buffer X): box[0] = 128 f16 elements = 256 bytes, more than the "
            "128-byte swizzle span");
}

TEST_F(TensorMapGpu, TheDriversRefusalNamesItsCode) {
  const TensorMapGeometry g = tensor_map_geometry("tensor_map argument 0 (buffer X)", DType::F16, 1 << 20, {256, 64},
                                                  {64, 16}, 128);
  TensorMapBytes out;
  // Rules checked by kforge before encoding are not checked again: a misaligned address
  // reaches the driver, which refuses it.
  try {
    encode_tensor_map(out, g, reinterpret_cast<const void*>(uintptr_t{0x10000008}));
    FAIL() << "the driver encoded a misaligned map";
  } catch (const ExprError& e) {
    EXPECT_EQ(std::string(e.what()),
              "tensor_map argument 0 (buffer X): cuTensorMapEncodeTiled returned CUDA_ERROR_INVALID_VALUE (1)");
  }
  EXPECT_NO_THROW(encode_tensor_map(out, g, reinterpret_cast<const void*>(uintptr_t{0x10000000})));
}

// The shipped attention family's TMA ring passes its gate (the campaign shape plus the spec's odd-S,
// one-row and large-score cases) in each of its structures: one CTA's loads, a multicast cluster
// (causal, with query blocks past S that only load), split waits, split-KV on the ring, the row and
// key-group ping-pongs without a CTA barrier per tile, the polynomial exp2, and key groups over their own
// ranges of tiles (a TMA ring each, with and without turns), with Q by cp.async or by TMA; the producer
// warpgroup (WS) and the persistent CTAs on it (PERSIST).
constexpr const char* kProducerWarpgroup =
    "BLOCK_M=128,WARPS=8,STAGES=2,WG_PINGPONG=1,Q_LOAD=tma,Q_IN=smem,KV_WAIT=split,PIPE_QK=2,WS=1";
constexpr const char* kPersistent =
    "BLOCK_M=128,WARPS=8,STAGES=2,WG_PINGPONG=1,Q_LOAD=tma,Q_IN=smem,KV_WAIT=split,PIPE_QK=2,WS=1,PERSIST=1";
constexpr const char* kStreaming =
    "BLOCK_M=128,WARPS=8,STAGES=2,WG_PINGPONG=1,Q_LOAD=tma,Q_IN=smem,KV_WAIT=split,PIPE_QK=2,WS=1,PERSIST=2";
TEST_F(TensorMapGpu, AttentionTmaVariantsPassTheGate) {
  const fs::path spec = fs::path(KFORGE_TEST_DIR) / ".." / "search_spaces" / "sdpa_fwd.json";
  const Config base = parse_assignment(
      "BLOCK_M=64,BLOCK_N=128,WARPS=4,STAGES=2,MMA=wgmma,VEC=8,LAYOUT=swizzled,Q_IN=regs,KV_WAIT=joint,WARPS_N=1,"
      "WN_KEYS=tile,MIN_BLOCKS=1,KV_SPLITS=1,KV_MERGE=gmem,LAZY_RESCALE=0,P_EARLY=1,PIPE_QK=0,EXP2=f32,LANE_ADDR=0,"
      "LOAD_ORDER=after_qk,KV_LOAD=tma,KV_MCAST=1,WG_PINGPONG=0,Q_LOAD=cp_async,WS=0,PERSIST=0");
  for (const char* change : {"KV_MCAST=1", "KV_MCAST=2", "KV_MCAST=4,KV_WAIT=split", "KV_SPLITS=2,KV_MERGE=push",
                             "BLOCK_M=128,WARPS=8,STAGES=3,WG_PINGPONG=1", "WARPS=8,WARPS_N=2,STAGES=3,WG_PINGPONG=1",
                             "EXP2=poly", "Q_LOAD=tma", "WARPS=8,WARPS_N=2,WN_KEYS=range,Q_LOAD=tma",
                             "WARPS=8,WARPS_N=2,WN_KEYS=pingpong,STAGES=3,Q_LOAD=tma", kProducerWarpgroup,
                             kPersistent, kStreaming}) {
    Config c = base;
    for (const auto& [name, value] : parse_assignment(change)) c[name] = value;
    SCOPED_TRACE(to_string(c));
    const EvalResult r = evaluate(spec, to_string(c), "B=2,H=8,S=256,D=64,causal=1,dtype=f16");
    EXPECT_EQ(r.status, Status::Ok) << r.error;
  }
}

// Persistent CTAs over more work tiles than the device has SMs (the gate's own shapes give each CTA one): every
// CTA runs several, so PERSIST=1's per-work-tile restart and PERSIST=2's key loop across work tiles (its Q
// buffers alternating, O staged in the finished one) are checked against the reference, with odd S and causal
// masks at the work tiles' seams, D64 and D128, Q from smem and from registers.
TEST_F(TensorMapGpu, PersistentCtasOverManyWorkTilesPassTheGate) {
  const fs::path spec = fs::path(KFORGE_TEST_DIR) / ".." / "search_spaces" / "sdpa_fwd.json";
  const std::string ws = std::string(kProducerWarpgroup) +
                         ",BLOCK_N=128,MMA=wgmma,VEC=8,LAYOUT=swizzled,WARPS_N=1,WN_KEYS=tile,MIN_BLOCKS=1,KV_SPLITS=1,"
                         "KV_MERGE=gmem,LAZY_RESCALE=0,P_EARLY=1,EXP2=f32,LANE_ADDR=0,LOAD_ORDER=after_qk,KV_LOAD=tma,"
                         "KV_MCAST=1";
  for (const char* persist : {"PERSIST=1", "PERSIST=2", "PERSIST=2,Q_IN=regs"})
    for (const char* shape : {"B=3,H=50,S=300,D=128,causal=1,dtype=bf16", "B=2,H=80,S=517,D=128,causal=0,dtype=f16",
                              "B=2,H=90,S=640,D=64,causal=1,dtype=f16"}) {
      Config c = parse_assignment(ws);
      for (const auto& [name, value] : parse_assignment(persist)) c[name] = value;
      SCOPED_TRACE(to_string(c) + " " + shape);
      const EvalResult r = evaluate(spec, to_string(c), shape);
      EXPECT_EQ(r.status, Status::Ok) << r.error;
    }
}

// The SIMT and WMMA paths moved out of sdpa_fwd into the sdpa_basic family (the same kernels, without the
// scratch and tensor-map arguments): both of its defaults pass the gate, on a causal shape and a bf16 one.
TEST_F(TensorMapGpu, AttentionBasicPathsPassTheGate) {
  const fs::path spec = fs::path(KFORGE_TEST_DIR) / ".." / "search_spaces" / "sdpa_basic.json";
  for (const char* config : {"BLOCK_M=64,BLOCK_N=64,WARPS=4,STAGES=2,MMA=wmma,VEC=8,LAYOUT=padded,KV_WAIT=joint,MIN_BLOCKS=1",
                             "BLOCK_M=16,BLOCK_N=32,WARPS=4,STAGES=2,MMA=simt,VEC=8,LAYOUT=padded,KV_WAIT=split,MIN_BLOCKS=1"})
    for (const char* shape : {"B=2,H=8,S=256,D=64,causal=1,dtype=f16", "B=1,H=4,S=300,D=128,causal=0,dtype=bf16"}) {
      SCOPED_TRACE(std::string(config) + " " + shape);
      const EvalResult r = evaluate(spec, config, shape);
      EXPECT_EQ(r.status, Status::Ok) << r.error;
    }
}

}  // namespace
}  // namespace kf
