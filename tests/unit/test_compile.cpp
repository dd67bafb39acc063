// NVRTC compilation, resource report parsing and the cubin cache; runs without a GPU.
#include <gtest/gtest.h>

#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <future>
#include <random>
#include <sstream>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "compile/compiler.hpp"
#include "compile/cubin_elf.hpp"
#include "compile/ptxas_report.hpp"
#include "family/family.hpp"
#include "family/render.hpp"
#include "util/hash.hpp"

namespace fs = std::filesystem;
using namespace kf;

namespace {

// A WMMA tile product: 16x16x16 half inputs staged through 1024 bytes of static shared memory.
const char* kWmmaSource = R"(
#include <mma.h>
#include <cuda_fp16.h>
using namespace nvcuda;
extern "C" __global__ void wmma_tile(const half* a, const half* b, float* c) {
  __shared__ half sa[16 * 16];
  __shared__ half sb[16 * 16];
  for (int i = threadIdx.x; i < 256; i += 32) { sa[i] = a[i]; sb[i] = b[i]; }
  __syncwarp();
  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
  wmma::fill_fragment(fc, 0.0f);
  wmma::load_matrix_sync(fa, sa, 16);
  wmma::load_matrix_sync(fb, sb, 16);
  wmma::mma_sync(fc, fa, fb, fc);
  wmma::store_matrix_sync(c, fc, 16, wmma::mem_row_major);
}
)";

const char* kBrokenSource = R"(
extern "C" __global__ void broken(float* x) { x[threadIdx.x] = undefined_name; }
)";

// Many live accumulators under a tight register cap: ptxas must spill.
const char* kSpillSource = R"(
extern "C" __global__ void spiller(const float* x, float* y, int n) {
  float acc[48];
#pragma unroll
  for (int j = 0; j < 48; ++j) acc[j] = x[threadIdx.x + j];
  for (int i = 0; i < n; ++i) {
#pragma unroll
    for (int j = 0; j < 48; ++j) acc[j] = acc[j] * acc[(j + 7) % 48] + x[i * 48 + j];
  }
  float s = 0;
#pragma unroll
  for (int j = 0; j < 48; ++j) s += acc[j] * (j + 1);
  y[threadIdx.x] = s;
}
)";

Variant make_variant(const std::string& source, const std::string& entry,
                     std::vector<std::string> options = {}, std::string suffix = "") {
  Variant v;
  v.family = "test";
  v.source = source;
  v.entry = entry;
  v.options = std::move(options);
  v.arch_suffix = std::move(suffix);
  std::string key = source + "\n" + v.arch_suffix;
  for (const auto& o : v.options) key += "\n" + o;
  v.hash = content_hash(key);
  return v;
}

class CompileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::random_device rd;
    dir_ = fs::temp_directory_path() / ("kforge-test-compile-" + std::to_string(rd()));
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST(PtxasReport, ParsesTheEntrysBlockOnly) {
  const std::string log =
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Compiling entry function 'other' for 'sm_90'\n"
      "ptxas info    : Function properties for other\n"
      "ptxas         .     8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads\n"
      "ptxas info    : Used 99 registers, used 0 barriers, 8 bytes cumulative stack size\n"
      "ptxas info    : Compiling entry function 'k' for 'sm_90'\n"
      "ptxas info    : Function properties for k\n"
      "ptxas         .     16 bytes stack frame, 12 bytes spill stores, 20 bytes spill loads\n"
      "ptxas info    : Used 40 registers, used 1 barriers, 48 bytes cumulative stack size, 2048 bytes smem, 364 bytes cmem[0]\n"
      "ptxas info    : Compile time = 7.4 ms\n"
      "ptxas info    : Function properties for _Z1fPfi\n"
      "ptxas         .     32 bytes stack frame, 8 bytes spill stores, 8 bytes spill loads\n";
  auto info = parse_ptxas_report(log, "k");
  ASSERT_TRUE(info);
  EXPECT_EQ(info->registers, 40);
  EXPECT_EQ(info->smem_static, 2048);
  EXPECT_EQ(info->stack_frame, 48);  // cumulative, callees included
  EXPECT_EQ(info->spill_stores, 20);
  EXPECT_EQ(info->spill_loads, 28);
  auto other = parse_ptxas_report(log, "other");
  ASSERT_TRUE(other);
  EXPECT_EQ(other->registers, 99);
  EXPECT_EQ(other->smem_static, 0);
  EXPECT_FALSE(parse_ptxas_report(log, "missing"));
  EXPECT_FALSE(parse_ptxas_report("", "k"));
}

TEST(CubinElf, RejectsGarbage) {
  EXPECT_FALSE(parse_cubin_resources("", "k"));
  EXPECT_FALSE(parse_cubin_resources(std::string(200, '\x7f'), "k"));
  std::string fake = "\x7f" "ELF";
  fake.resize(64, '\0');
  fake[4] = 2;
  fake[5] = 1;
  EXPECT_FALSE(parse_cubin_resources(fake, "k"));
}

TEST_F(CompileTest, WmmaKernelForTwoArchitectures) {
  CubinCache cache(dir_);
  for (const std::string arch : {"sm_90", "sm_89"}) {
    SCOPED_TRACE(arch);
    const CompiledKernel k = compile_variant(make_variant(kWmmaSource, "wmma_tile"), arch, &cache);
    ASSERT_TRUE(k.ok) << k.log;
    EXPECT_EQ(k.arch, arch);
    EXPECT_FALSE(k.from_cache);
    EXPECT_GT(k.info.registers, 0);
    EXPECT_EQ(k.info.smem_static, 1024);
    EXPECT_EQ(k.info.spill_stores, 0);
    EXPECT_GT(k.info.compile_ms, 0.0);
    EXPECT_NE(k.log.find("Compiling entry function 'wmma_tile' for '" + arch + "'"), std::string::npos);
    ASSERT_TRUE(fs::exists(k.cubin_path));
    EXPECT_EQ(k.cubin_path, dir_ / (k.hash + "-" + arch + ".cubin"));
    // The ELF agrees with the ptxas report.
    auto elf = parse_cubin_resources(slurp(k.cubin_path), "wmma_tile");
    ASSERT_TRUE(elf);
    EXPECT_EQ(elf->registers, k.info.registers);
    EXPECT_EQ(elf->smem_static, k.info.smem_static);
    EXPECT_FALSE(parse_cubin_resources(slurp(k.cubin_path), "no_such_kernel"));
  }
}

TEST_F(CompileTest, ArchSuffixSelectsTheTarget) {
  CubinCache cache(dir_);
  const CompiledKernel k = compile_variant(make_variant(kWmmaSource, "wmma_tile", {}, "a"), "sm_90", &cache);
  ASSERT_TRUE(k.ok) << k.log;
  EXPECT_EQ(k.arch, "sm_90a");
  EXPECT_NE(k.log.find("for 'sm_90a'"), std::string::npos);
}

// `kforge export --arch sm_90a` of a variant whose suffix is "a": the target already carries it.
TEST_F(CompileTest, ATargetThatCarriesTheSuffixKeepsIt) {
  CubinCache cache(dir_);
  const CompiledKernel k = compile_variant(make_variant(kWmmaSource, "wmma_tile", {}, "a"), "sm_90a", &cache);
  ASSERT_TRUE(k.ok) << k.log;
  EXPECT_EQ(k.arch, "sm_90a");
}

// The same rule names the export's target (its manifest's nvcc lines once read compute_90aa).
TEST(TargetArch, TheSuffixIsAddedOnce) {
  EXPECT_EQ(target_arch_for("sm_90", "a"), "sm_90a");
  EXPECT_EQ(target_arch_for("sm_90a", "a"), "sm_90a");
  EXPECT_EQ(target_arch_for("sm_89", ""), "sm_89");
}

TEST_F(CompileTest, SpillsAndStackAreReported) {
  CubinCache cache(dir_);
  const CompiledKernel k =
      compile_variant(make_variant(kSpillSource, "spiller", {"--maxrregcount=24"}), "sm_90", &cache);
  ASSERT_TRUE(k.ok) << k.log;
  EXPECT_LE(k.info.registers, 24);
  EXPECT_GT(k.info.spill_stores, 0) << k.log;
  EXPECT_GT(k.info.spill_loads, 0) << k.log;
  EXPECT_GT(k.info.stack_frame, 0) << k.log;
  auto elf = parse_cubin_resources(slurp(k.cubin_path), "spiller");
  ASSERT_TRUE(elf);
  EXPECT_EQ(elf->registers, k.info.registers);
  EXPECT_EQ(elf->stack_frame, k.info.stack_frame);
}

TEST_F(CompileTest, BrokenKernelIsACompileErrorAndIsCached) {
  CubinCache cache(dir_);
  const Variant v = make_variant(kBrokenSource, "broken");
  for (const std::string arch : {"sm_90", "sm_89"}) {
    const CompiledKernel k = compile_variant(v, arch, &cache);
    EXPECT_FALSE(k.ok);
    EXPECT_NE(k.log.find("undefined_name"), std::string::npos) << k.log;
    EXPECT_TRUE(k.cubin_path.empty());
  }
  const uint64_t before = nvrtc_compile_count();
  const CompiledKernel again = compile_variant(v, "sm_90", &cache);
  EXPECT_EQ(nvrtc_compile_count(), before);
  EXPECT_TRUE(again.from_cache);
  EXPECT_FALSE(again.ok);
  EXPECT_NE(again.log.find("undefined_name"), std::string::npos);
}

TEST_F(CompileTest, MissingEntryIsACompileError) {
  CubinCache cache(dir_);
  const CompiledKernel k = compile_variant(make_variant(kWmmaSource, "not_there"), "sm_90", &cache);
  EXPECT_FALSE(k.ok);
  EXPECT_NE(k.log.find("not_there"), std::string::npos);
}

TEST_F(CompileTest, TargetOptionsAreRefused) {
  CubinCache cache(dir_);
  const CompiledKernel k =
      compile_variant(make_variant(kWmmaSource, "wmma_tile", {"--gpu-architecture=sm_80"}), "sm_90", &cache);
  EXPECT_FALSE(k.ok);
  EXPECT_NE(k.log.find("not allowed"), std::string::npos);
}

TEST_F(CompileTest, SecondCompileIsACacheHit) {
  CubinCache cache(dir_);
  const Variant v = make_variant(kWmmaSource, "wmma_tile");
  const CompiledKernel first = compile_variant(v, "sm_90", &cache);
  ASSERT_TRUE(first.ok);
  const uint64_t before = nvrtc_compile_count();
  const CompiledKernel second = compile_variant(v, "sm_90", &cache);
  EXPECT_EQ(nvrtc_compile_count(), before);  // no NVRTC call
  EXPECT_TRUE(second.from_cache);
  EXPECT_TRUE(second.ok);
  EXPECT_EQ(second.cubin_path, first.cubin_path);
  EXPECT_EQ(second.info.registers, first.info.registers);
  EXPECT_EQ(second.info.smem_static, first.info.smem_static);
  EXPECT_DOUBLE_EQ(second.info.compile_ms, first.info.compile_ms);
  EXPECT_EQ(second.log, first.log);
  // A new cache object on the same folder (a later run) sees the entry too.
  CubinCache reopened(dir_);
  EXPECT_TRUE(reopened.lookup(v.hash, "sm_90", "wmma_tile"));
  EXPECT_FALSE(reopened.lookup(v.hash, "sm_89", "wmma_tile"));
  // No temporaries are left behind.
  for (const auto& e : fs::directory_iterator(dir_))
    EXPECT_EQ(e.path().string().find(".tmp."), std::string::npos) << e.path();
}

TEST_F(CompileTest, CorruptEntriesAreMisses) {
  CubinCache cache(dir_);
  const Variant v = make_variant(kWmmaSource, "wmma_tile");
  const CompiledKernel first = compile_variant(v, "sm_90", &cache);
  ASSERT_TRUE(first.ok);
  const fs::path cubin = first.cubin_path;
  const fs::path meta = dir_ / (v.hash + "-sm_90.json");
  const std::string good_cubin = slurp(cubin);
  const std::string good_meta = slurp(meta);

  auto expect_recompile = [&](const char* what) {
    SCOPED_TRACE(what);
    EXPECT_FALSE(cache.lookup(v.hash, "sm_90", "wmma_tile"));
    const uint64_t before = nvrtc_compile_count();
    const CompiledKernel k = compile_variant(v, "sm_90", &cache);
    EXPECT_EQ(nvrtc_compile_count(), before + 1);
    EXPECT_TRUE(k.ok);
    EXPECT_FALSE(k.from_cache);
    EXPECT_EQ(slurp(cubin), good_cubin);
    EXPECT_TRUE(cache.lookup(v.hash, "sm_90", "wmma_tile"));  // repaired
  };

  fs::resize_file(cubin, good_cubin.size() / 2);
  expect_recompile("truncated cubin");

  std::string flipped = good_cubin;
  flipped[flipped.size() / 2] = static_cast<char>(flipped[flipped.size() / 2] ^ 0x5a);
  std::ofstream(cubin, std::ios::binary | std::ios::trunc) << flipped;
  expect_recompile("same-size damaged cubin");

  fs::remove(cubin);
  expect_recompile("missing cubin");

  std::ofstream(meta, std::ios::trunc) << good_meta.substr(0, good_meta.size() / 2);
  expect_recompile("truncated metadata");

  std::ofstream(meta, std::ios::trunc) << "{\"not\": \"an entry\"}";
  expect_recompile("foreign metadata");

  std::ofstream(meta, std::ios::trunc) << std::string("\0\0\0garbage", 10);
  expect_recompile("garbage metadata");
}

TEST_F(CompileTest, PoolCompilesConcurrently) {
  CubinCache cache(dir_);
  std::vector<std::future<CompiledKernel>> futures;
  {
    CompilePool pool(2, &cache);
    for (int i = 0; i < 4; ++i) {
      // Distinct sources, so each is a real compile.
      const std::string src = std::string(kWmmaSource) + "\n// variant " + std::to_string(i) + "\n";
      futures.push_back(pool.submit(make_variant(src, "wmma_tile"), "sm_90"));
    }
    futures.push_back(pool.submit(make_variant(kBrokenSource, "broken"), "sm_89"));
  }  // the destructor drains the queue
  for (size_t i = 0; i + 1 < futures.size(); ++i) {
    const CompiledKernel k = futures[i].get();
    EXPECT_TRUE(k.ok) << k.log;
    EXPECT_TRUE(fs::exists(k.cubin_path));
  }
  EXPECT_FALSE(futures.back().get().ok);
}

TEST_F(CompileTest, WithoutACacheTheCubinStillHasAFile) {
  const CompiledKernel k = compile_variant(make_variant(kWmmaSource, "wmma_tile"), "sm_89", nullptr);
  ASSERT_TRUE(k.ok) << k.log;
  EXPECT_FALSE(k.from_cache);
  EXPECT_TRUE(fs::exists(k.cubin_path));
}

// The worker's GPU tests rely on the vecadd test family: every variant they use must load,
// render and compile, which needs no GPU.
TEST_F(CompileTest, VecaddTestFamilyCompiles) {
  const Family f = load_family(fs::path(KFORGE_TEST_DIR) / "families" / "vecadd" / "vecadd.json");
  CubinCache cache(dir_);
  for (const std::string dtype : {"f32", "f16", "bf16"}) {
    const Shape s{{"N", int64_t{4096}}, {"dtype", dtype}};
    const CompiledKernel ref = compile_variant(render_reference(f, s), "sm_90", &cache);
    ASSERT_TRUE(ref.ok) << ref.log;
    for (const std::string bug : {"none", "wrong", "unwritten", "oob", "stateful"}) {
      const Config c{{"BLOCK", int64_t{128}}, {"VEC", int64_t{2}}, {"BUG", bug}, {"SMEM_KB", int64_t{64}}};
      const Variant v = render_variant(f, c, s);
      std::string upper = bug;
      for (char& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
      EXPECT_NE(v.source.find("#define KF_BUG_" + upper + " 1"), std::string::npos);
      const CompiledKernel k = compile_variant(v, "sm_90", &cache);
      EXPECT_TRUE(k.ok) << dtype << " " << bug << ": " << k.log;
    }
  }
  // The gate shapes the worker tests count on: campaign, odd, one, large_inputs.
  const auto cases = gate_shapes(f, Shape{{"N", int64_t{1} << 20}, {"dtype", std::string("f32")}});
  ASSERT_EQ(cases.size(), 4u);
  const DeviceLimits h100 = DeviceLimits::for_arch("sm_90");
  const Config vec4{{"BLOCK", int64_t{256}}, {"VEC", int64_t{4}}, {"BUG", std::string("none")}, {"SMEM_KB", int64_t{0}}};
  int admitted = 0;
  for (const auto& [gc, s] : cases) admitted += !violated_constraint(f, vec4, s, h100);
  EXPECT_EQ(admitted, 2);
}

// The guard-page GPU tests rely on the farwrite test family: every MODE must load, render with
// its define and compile, which needs no GPU.
TEST_F(CompileTest, FarwriteTestFamilyCompiles) {
  const Family f = load_family(fs::path(KFORGE_TEST_DIR) / "families" / "farwrite" / "farwrite.json");
  CubinCache cache(dir_);
  for (const int64_t n : {int64_t{4096}, int64_t{1} << 20}) {
    const Shape s{{"N", n}};
    const CompiledKernel ref = compile_variant(render_reference(f, s), "sm_90", &cache);
    ASSERT_TRUE(ref.ok) << ref.log;
    for (const std::string mode : {"ok", "after64k", "after1m", "before64k"}) {
      const Variant v = render_variant(f, Config{{"MODE", mode}}, s);
      std::string upper = mode;
      for (char& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
      EXPECT_NE(v.source.find("#define KF_MODE_" + upper + " 1"), std::string::npos);
      const CompiledKernel k = compile_variant(v, "sm_90", &cache);
      EXPECT_TRUE(k.ok) << mode << ": " << k.log;
    }
  }
}

// MMA=wgmma needs sm_90a: the attention spec's arch_suffix picks it, NVRTC compiles every wgmma
// default for it (both element types, causal and not, D 64 and 128), and on sm_89 no wgmma config
// is valid.
// The wgmma structural variants the defaults do not use (key groups over own tile ranges, with and
// without the warpgroup ping-pong; split-KV merged by st.async push or over DSMEM; split K/V waits
// with the loads issued after Q K^T; the TMA ring's options, row and key-group ping-pong, EXP2=poly)
// stay valid on sm_90 and compile for sm_90a; a ping-pong that loads before Q K^T is not valid.
TEST_F(CompileTest, AttentionWgmmaStructuralVariantsCompileForSm90a) {
  const Family f = load_family(fs::path(KFORGE_TEST_DIR) / ".." / "search_spaces" / "sdpa_fwd.json");
  const Shape shape = parse_shape(f, "B=2,H=8,S=512,D=64,causal=1,dtype=f16");
  const SearchSpace sm90 = make_space(f, shape, DeviceLimits::for_arch("sm_90"));
  Config base;
  for (const auto& c : f.defaults)
    if (std::get<std::string>(c.at("MMA")) == "wgmma" && std::get<int64_t>(c.at("BLOCK_M")) == 64) {
      base = c;
      break;
    }
  ASSERT_FALSE(base.empty());
  base["KV_WAIT"] = std::string("joint");
  base["LOAD_ORDER"] = std::string("first");
  base["KV_SPLITS"] = int64_t{1};
  base["KV_MERGE"] = std::string("gmem");
  base["STAGES"] = int64_t{2};
  const std::vector<std::map<std::string, Value>> changes = {
      {{"WARPS", int64_t{8}}, {"WARPS_N", int64_t{2}}, {"WN_KEYS", std::string("range")}},
      {{"WARPS", int64_t{8}}, {"WARPS_N", int64_t{2}}, {"WN_KEYS", std::string("pingpong")}},
      {{"KV_SPLITS", int64_t{2}}, {"KV_MERGE", std::string("push")}},
      {{"KV_SPLITS", int64_t{4}}, {"KV_MERGE", std::string("cluster")}},
      {{"KV_WAIT", std::string("split")}, {"LOAD_ORDER", std::string("after_qk")}},
      // the TMA ring: alone, multicast to a cluster, split waits, split-KV, PIPE_QK, row ping-pong
      {{"KV_LOAD", std::string("tma")}},
      {{"KV_LOAD", std::string("tma")}, {"KV_MCAST", int64_t{2}}},
      {{"KV_LOAD", std::string("tma")}, {"KV_WAIT", std::string("split")}, {"LOAD_ORDER", std::string("after_qk")}},
      {{"KV_LOAD", std::string("tma")}, {"KV_SPLITS", int64_t{2}}, {"KV_MERGE", std::string("push")}},
      {{"KV_LOAD", std::string("tma")}, {"STAGES", int64_t{3}}, {"PIPE_QK", int64_t{1}}},
      // FA3's intra-warpgroup overlap without the ping-pong (the defaults hold it with the ping-pong)
      {{"KV_LOAD", std::string("tma")}, {"STAGES", int64_t{3}}, {"PIPE_QK", int64_t{2}}},
      {{"KV_LOAD", std::string("tma")}, {"BLOCK_M", int64_t{128}}, {"WARPS", int64_t{8}}, {"STAGES", int64_t{3}},
       {"WG_PINGPONG", int64_t{1}}, {"LOAD_ORDER", std::string("after_qk")}},
      // key-group ping-pong (two key groups over BLOCK_M 64), the polynomial exp2
      {{"KV_LOAD", std::string("tma")}, {"WARPS", int64_t{8}}, {"WARPS_N", int64_t{2}}, {"STAGES", int64_t{3}},
       {"WG_PINGPONG", int64_t{1}}, {"LOAD_ORDER", std::string("after_qk")}},
      {{"KV_LOAD", std::string("tma")}, {"EXP2", std::string("poly")}},
      // key groups over their own ranges of tiles, each with its own TMA ring (with and without turns)
      {{"KV_LOAD", std::string("tma")}, {"WARPS", int64_t{8}}, {"WARPS_N", int64_t{2}}, {"WN_KEYS", std::string("range")},
       {"LOAD_ORDER", std::string("after_qk")}, {"Q_LOAD", std::string("tma")}},
      {{"KV_LOAD", std::string("tma")}, {"WARPS", int64_t{8}}, {"WARPS_N", int64_t{2}},
       {"WN_KEYS", std::string("pingpong")}, {"LOAD_ORDER", std::string("after_qk")}}};
  // Q by TMA needs the TMA ring
  Config q_tma = base;
  q_tma["Q_LOAD"] = std::string("tma");
  EXPECT_FALSE(sm90.valid(q_tma)) << to_string(q_tma);
  // the ping-pong's producer may refill a slot only after its own Q K^T (see TMA_PRODUCER in the template)
  Config early = base;
  for (const auto& [name, value] : changes[changes.size() - 4]) early[name] = value;
  early["LOAD_ORDER"] = std::string("first");
  EXPECT_FALSE(sm90.valid(early)) << to_string(early);
  CubinCache cache(dir_);
  CompilePool pool(2, &cache);
  std::vector<std::pair<std::string, std::future<CompiledKernel>>> jobs;
  for (const auto& change : changes) {
    Config c = base;
    for (const auto& [name, value] : change) c[name] = value;
    ASSERT_TRUE(sm90.valid(c)) << to_string(c);
    jobs.emplace_back(to_string(c), pool.submit(render_variant(f, c, shape), "sm_90"));
  }
  for (auto& [what, fut] : jobs) {
    const CompiledKernel k = fut.get();
    EXPECT_TRUE(k.ok) << what << ": " << k.log.substr(0, 600);
  }
}

// The SIMT and WMMA paths are the sdpa_basic family: sdpa_fwd's space no longer holds them, sm_89 keeps a
// real sdpa_fwd path (mma.sync on cp.async) among its valid defaults, and sdpa_basic's defaults compile for
// sm_90 and sm_89.
TEST_F(CompileTest, AttentionBasicFamilyHoldsTheSimtAndWmmaPaths) {
  const Family fwd = load_family(fs::path(KFORGE_TEST_DIR) / ".." / "search_spaces" / "sdpa_fwd.json");
  const Family basic = load_family(fs::path(KFORGE_TEST_DIR) / ".." / "search_spaces" / "sdpa_basic.json");
  ASSERT_NE(fwd.param("MMA"), nullptr);
  EXPECT_EQ(fwd.param("MMA")->values, (std::vector<Value>{std::string("mma"), std::string("wgmma")}));
  const Shape fwd_shape = parse_shape(fwd, "B=2,H=8,S=512,D=64,causal=1,dtype=f16");
  const SearchSpace fwd89 = make_space(fwd, fwd_shape, DeviceLimits::for_arch("sm_89"));
  int sm89_defaults = 0;
  for (const auto& c : fwd.defaults) {
    if (!fwd89.valid(c)) continue;
    ++sm89_defaults;
    EXPECT_EQ(std::get<std::string>(c.at("MMA")), "mma") << to_string(c);
    EXPECT_EQ(std::get<std::string>(c.at("KV_LOAD")), "cp_async") << to_string(c);
  }
  EXPECT_GE(sm89_defaults, 3);
  CubinCache cache(dir_);
  CompilePool pool(2, &cache);
  std::vector<std::pair<std::string, std::future<CompiledKernel>>> jobs;
  const Shape shape = parse_shape(basic, "B=2,H=8,S=512,D=64,causal=1,dtype=bf16");
  for (const std::string arch : {"sm_90", "sm_89"}) {
    const SearchSpace space = make_space(basic, shape, DeviceLimits::for_arch(arch));
    ASSERT_EQ(basic.defaults.size(), 2u);
    for (const auto& c : basic.defaults) {
      ASSERT_TRUE(space.valid(c)) << to_string(c) << " " << arch;
      jobs.emplace_back(to_string(c) + " " + arch, pool.submit(render_variant(basic, c, shape), arch));
    }
  }
  for (auto& [what, fut] : jobs) {
    const CompiledKernel k = fut.get();
    EXPECT_TRUE(k.ok) << what << ": " << k.log.substr(0, 600);
  }
}

// sm_89's path in sdpa_fwd (mma.sync, cp.async) compiles: every default valid there, for sm_89. The
// persistent CTAs' code is compiled on every path, so a wgmma-only helper in it breaks this one.
TEST_F(CompileTest, AttentionMmaDefaultsCompileForSm89) {
  const Family f = load_family(fs::path(KFORGE_TEST_DIR) / ".." / "search_spaces" / "sdpa_fwd.json");
  CubinCache cache(dir_);
  CompilePool pool(2, &cache);
  std::vector<std::pair<std::string, std::future<CompiledKernel>>> jobs;
  const Shape shape = parse_shape(f, "B=2,H=8,S=512,D=64,causal=1,dtype=f16");
  const SearchSpace sm89 = make_space(f, shape, DeviceLimits::for_arch("sm_89"));
  for (const auto& c : f.defaults) {
    if (!sm89.valid(c)) continue;
    jobs.emplace_back(to_string(c), pool.submit(render_variant(f, c, shape), "sm_89"));
  }
  ASSERT_GE(jobs.size(), 3u);
  for (auto& [what, fut] : jobs) {
    const CompiledKernel k = fut.get();
    EXPECT_TRUE(k.ok) << what << ": " << k.log.substr(0, 600);
  }
}

TEST_F(CompileTest, AttentionWgmmaDefaultsCompileForSm90a) {
  const Family f = load_family(fs::path(KFORGE_TEST_DIR) / ".." / "search_spaces" / "sdpa_fwd.json");
  CubinCache cache(dir_);
  CompilePool pool(2, &cache);
  std::vector<std::pair<std::string, std::future<CompiledKernel>>> jobs;
  const std::vector<Shape> shapes = {
      parse_shape(f, "B=2,H=8,S=512,D=64,causal=0,dtype=f16"),
      parse_shape(f, "B=2,H=16,S=4096,D=128,causal=1,dtype=bf16")};
  for (const auto& shape : shapes) {
    const SearchSpace sm90 = make_space(f, shape, DeviceLimits::for_arch("sm_90"));
    const SearchSpace sm89 = make_space(f, shape, DeviceLimits::for_arch("sm_89"));
    for (const auto& c : f.defaults) {
      if (std::get<std::string>(c.at("MMA")) != "wgmma") continue;
      EXPECT_FALSE(sm89.valid(c)) << to_string(c);
      if (!sm90.valid(c)) continue;
      const Variant v = render_variant(f, c, shape);
      EXPECT_EQ(v.arch_suffix, "a");
      jobs.emplace_back(to_string(c) + " " + to_string(shape), pool.submit(v, "sm_90"));
    }
  }
  ASSERT_GE(jobs.size(), 6u);
  for (auto& [what, fut] : jobs) {
    const CompiledKernel k = fut.get();
    EXPECT_TRUE(k.ok) << what << ": " << k.log.substr(0, 600);
    EXPECT_EQ(k.arch, "sm_90a") << what;
  }
}

// The gemm family's Hopper path: its defaults and structural variants (one or two consumer warpgroups, 64 or
// 128 rows each, every wgmma width, plain and persistent grids, both raster orders, rings of 2 to 6 slots, f16
// and f32 out) are valid on sm_90 only, render for sm_90a and compile there without spills: 128 x 192
// accumulators per consumer warpgroup (192 registers) fit in the 232 that setmaxnreg gives two consumers.
TEST_F(CompileTest, GemmWgmmaVariantsCompileForSm90aWithoutSpills) {
  const Family f = load_family(fs::path(KFORGE_TEST_DIR) / ".." / "search_spaces" / "gemm.json");
  const std::vector<Shape> shapes = {parse_shape(f, "M=4096,N=4096,K=4096,dtype=f16"),
                                     parse_shape(f, "M=257,N=136,K=1032,dtype=f32"),
                                     parse_shape(f, "M=4096,N=4096,K=4096,dtype=bf16,in_dtype=bf16,b_layout=nk")};
  std::vector<Config> configs;
  for (const auto& c : f.defaults)
    if (std::get<std::string>(c.at("MMA")) == "wgmma") configs.push_back(c);
  ASSERT_GE(configs.size(), 4u);
  // the first default is the Hopper path (seeding takes the defaults in order)
  ASSERT_TRUE(configs.front() == f.defaults.front());
  const Config base = configs.front();
  const std::vector<std::string> changes = {
      "BLOCK_N=64,STAGES=6,RASTER=n,GROUP=4", "BLOCK_N=128,PERSIST=0,GROUP=1", "BLOCK_N=192,STAGES=2",
      "BLOCK_M=256,BLOCK_N=192,STAGES=3", "BLOCK_M=256,BLOCK_N=64,STAGES=5,RASTER=n,GROUP=2",
      "CONSUMERS=1,BLOCK_M=64,BLOCK_N=64,STAGES=2", "CONSUMERS=1,BLOCK_M=64,BLOCK_N=192,STAGES=4",
      "CONSUMERS=1,BLOCK_M=128,BLOCK_N=192,STAGES=3,PERSIST=0", "CONSUMERS=1,BLOCK_M=128,BLOCK_N=64,STAGES=6"};
  for (const auto& change : changes) {
    Config c = base;
    for (const auto& [name, value] : parse_assignment(change)) c[name] = value;
    configs.push_back(c);
  }
  CubinCache cache(dir_);
  CompilePool pool(2, &cache);
  std::vector<std::pair<std::string, std::future<CompiledKernel>>> jobs;
  for (size_t i = 0; i < configs.size(); ++i) {
    const Config& c = configs[i];
    for (const auto& shape : shapes) {
      EXPECT_TRUE(make_space(f, shape, DeviceLimits::for_arch("sm_90")).valid(c)) << to_string(c) << " " << to_string(shape);
      EXPECT_FALSE(make_space(f, shape, DeviceLimits::for_arch("sm_89")).valid(c)) << to_string(c);
    }
    // f16 out, f32 out and the models' problem (bf16 in and out, B stored [N][K]) in turn
    const Shape& shape = shapes[i % 3];
    const Variant v = render_variant(f, c, shape);
    EXPECT_EQ(v.arch_suffix, "a");
    jobs.emplace_back(to_string(c) + " " + to_string(shape), pool.submit(v, "sm_90"));
  }
  for (auto& [what, fut] : jobs) {
    const CompiledKernel k = fut.get();
    EXPECT_TRUE(k.ok) << what << ": " << k.log.substr(0, 600);
    EXPECT_EQ(k.arch, "sm_90a") << what;
    EXPECT_EQ(k.info.spill_stores, 0) << what << ": " << k.log;
    EXPECT_EQ(k.info.spill_loads, 0) << what;
    // ptxas's Hopper warnings: setmaxnreg ignored (C7508), wgmma serialised (C7511)
    for (const char* warning : {"C7508", "C7511", "serialized"})
      EXPECT_EQ(k.log.find(warning), std::string::npos) << what << ": " << k.log;
    std::printf("[ gemm wgmma ] %s: %d registers\n", what.c_str(), k.info.registers);
  }
}

// The gemm family's pre-Hopper paths compile for sm_89 from the defaults valid there (the wgmma defaults are
// not), with the tensor-map parameters every variant now takes.
TEST_F(CompileTest, GemmPreHopperDefaultsCompileForSm89) {
  const Family f = load_family(fs::path(KFORGE_TEST_DIR) / ".." / "search_spaces" / "gemm.json");
  const Shape shape = parse_shape(f, "M=257,N=136,K=1032,dtype=f16");
  const SearchSpace sm89 = make_space(f, shape, DeviceLimits::for_arch("sm_89"));
  CubinCache cache(dir_);
  CompilePool pool(2, &cache);
  std::vector<std::pair<std::string, std::future<CompiledKernel>>> jobs;
  for (const auto& c : f.defaults) {
    if (!sm89.valid(c)) {
      EXPECT_EQ(std::get<std::string>(c.at("MMA")), "wgmma") << to_string(c);
      continue;
    }
    const Variant v = render_variant(f, c, shape);
    EXPECT_EQ(v.arch_suffix, "");
    jobs.emplace_back(to_string(c), pool.submit(v, "sm_89"));
  }
  ASSERT_GE(jobs.size(), 4u);
  for (auto& [what, fut] : jobs) {
    const CompiledKernel k = fut.get();
    EXPECT_TRUE(k.ok) << what << ": " << k.log.substr(0, 600);
  }
}

// An entry copied under another variant's name, its metadata's "hash" rewritten to match,
// used to be trusted (the checks compared the metadata with itself).
TEST_F(CompileTest, EntryCopiedUnderAnotherKeyIsNotTrusted) {
  CubinCache cache(dir_);
  const Variant a = make_variant(kWmmaSource, "wmma_tile");
  const Variant b = make_variant(std::string(kWmmaSource) + "\n// another variant\n", "wmma_tile");
  ASSERT_TRUE(compile_variant(a, "sm_90", &cache).ok);
  const std::string a_stem = a.hash + "-sm_90", b_stem = b.hash + "-sm_90";
  fs::copy_file(dir_ / (a_stem + ".cubin"), dir_ / (b_stem + ".cubin"));
  auto meta = nlohmann::json::parse(slurp(dir_ / (a_stem + ".json")));
  meta["hash"] = b.hash;
  std::ofstream(dir_ / (b_stem + ".json")) << meta.dump();
  EXPECT_FALSE(cache.lookup(b.hash, "sm_90", "wmma_tile"));
  const uint64_t before = nvrtc_compile_count();
  EXPECT_TRUE(compile_variant(b, "sm_90", &cache).ok);
  EXPECT_EQ(nvrtc_compile_count(), before + 1) << "b was compiled, not taken from a's entry";
}

// The entry name is not part of the variant hash: a misspelled entry used to pass on a warm cache.
TEST_F(CompileTest, MisspelledEntryFailsWithAWarmCache) {
  CubinCache cache(dir_);
  ASSERT_TRUE(compile_variant(make_variant(kWmmaSource, "wmma_tile"), "sm_90", &cache).ok);
  const CompiledKernel k = compile_variant(make_variant(kWmmaSource, "wmma_tlie"), "sm_90", &cache);
  EXPECT_FALSE(k.ok);
  EXPECT_NE(k.log.find("wmma_tlie"), std::string::npos) << k.log;
}

// Uncached compiles used the fixed, shared /tmp/kforge-cubins-<uid>.
TEST_F(CompileTest, UncachedCubinsGoToAPrivateFolder) {
  const CompiledKernel k = compile_variant(make_variant(kWmmaSource, "wmma_tile"), "sm_90", nullptr);
  ASSERT_TRUE(k.ok) << k.log;
  const fs::path folder = k.cubin_path.parent_path();
  EXPECT_NE(folder.filename().string(), "kforge-cubins-" + std::to_string(::getuid()));
  EXPECT_EQ(fs::status(folder).permissions() & fs::perms::all, fs::perms::owner_all);
}

// A pool that cannot start all its threads works with fewer; it used to abort the process
// ("terminate called without an active exception"). Run in a child under a memory limit.
TEST(CompilePoolStartup, RefusedThreadsDoNotAbort) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    long pages = 0;
    std::ifstream("/proc/self/statm") >> pages;
    rlimit lim{};
    lim.rlim_cur = lim.rlim_max = static_cast<rlim_t>(pages) * ::sysconf(_SC_PAGESIZE) + (256u << 20);
    ::setrlimit(RLIMIT_AS, &lim);
    try {
      CompilePool pool(2000, nullptr);
      ::_exit(pool.threads() >= 1 && pool.threads() < 2000 ? 0 : 3);
    } catch (const std::runtime_error&) {
      ::_exit(0);  // refusing every thread with a clean error is also fine
    }
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0);
}
