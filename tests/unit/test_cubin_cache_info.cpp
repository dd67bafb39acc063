// The cubin cache's seal covers the resource info stored beside the cubin: registers, shared
// memory and spills decide which configs launch and are recorded with every evaluation, so an
// edited info is a miss and the kernel is compiled again. Runs without a GPU (NVRTC only).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include <nlohmann/json.hpp>

#include "compile/compiler.hpp"
#include "util/hash.hpp"

namespace fs = std::filesystem;
using namespace kf;

namespace {

const char* kSource = R"(
extern "C" __global__ void scale(const float* x, float* y, int n) {
  __shared__ float tile[128];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  tile[threadIdx.x % 128] = i < n ? x[i] : 0.f;
  __syncthreads();
  if (i < n) y[i] = 2.f * tile[threadIdx.x % 128];
}
)";

Variant scale_variant() {
  Variant v;
  v.family = "test";
  v.source = kSource;
  v.entry = "scale";
  v.hash = content_hash(std::string("cubin-cache-info\n") + kSource);
  return v;
}

nlohmann::json read_json(const fs::path& p) {
  std::ifstream in(p);
  return nlohmann::json::parse(in);
}

}  // namespace

TEST(CubinCacheInfo, AnEditedInfoIsRecompiled) {
  std::random_device rd;
  const fs::path dir = fs::temp_directory_path() / ("kforge-test-cache-info-" + std::to_string(rd()));
  fs::remove_all(dir);
  CubinCache cache(dir);
  const Variant v = scale_variant();
  const CompiledKernel first = compile_variant(v, "sm_90", &cache);
  ASSERT_TRUE(first.ok) << first.log;
  const fs::path meta = dir / (v.hash + "-sm_90.json");
  const nlohmann::json good = read_json(meta);
  ASSERT_TRUE(cache.lookup(v.hash, "sm_90", "scale"));  // the untouched entry is a hit

  for (const char* field : {"registers", "smem_static", "stack_frame", "spill_stores", "spill_loads", "compile_ms"}) {
    SCOPED_TRACE(field);
    nlohmann::json edited = good;
    nlohmann::json& value = edited["info"][field];
    value = value.is_number_integer() ? nlohmann::json(value.get<int64_t>() + 7) : nlohmann::json(value.get<double>() + 7);
    std::ofstream(meta, std::ios::trunc) << edited.dump(2);
    EXPECT_FALSE(cache.lookup(v.hash, "sm_90", "scale")) << "an edited " << field << " was trusted";
    const uint64_t before = nvrtc_compile_count();
    const CompiledKernel again = compile_variant(v, "sm_90", &cache);
    EXPECT_EQ(nvrtc_compile_count(), before + 1);
    EXPECT_FALSE(again.from_cache);
    EXPECT_EQ(again.info.registers, first.info.registers);
    EXPECT_EQ(again.info.smem_static, first.info.smem_static);
    EXPECT_EQ(read_json(meta)["info"]["registers"], good["info"]["registers"]);  // the entry is repaired
    EXPECT_TRUE(cache.lookup(v.hash, "sm_90", "scale"));
  }
  fs::remove_all(dir);
}

// A failed compile is cached with its info too (all zero); the seal covers it the same way.
TEST(CubinCacheInfo, AnEditedInfoOfAFailedCompileIsRecompiled) {
  std::random_device rd;
  const fs::path dir = fs::temp_directory_path() / ("kforge-test-cache-info-failed-" + std::to_string(rd()));
  fs::remove_all(dir);
  CubinCache cache(dir);
  Variant v = scale_variant();
  v.source = "extern \"C\" __global__ void scale(float* y) { y[0] = not_declared; }\n";
  v.hash = content_hash("cubin-cache-info-failed\n" + v.source);
  ASSERT_FALSE(compile_variant(v, "sm_90", &cache).ok);
  const fs::path meta = dir / (v.hash + "-sm_90.json");
  ASSERT_TRUE(cache.lookup(v.hash, "sm_90", "scale"));
  nlohmann::json edited = read_json(meta);
  edited["info"]["registers"] = 32;
  std::ofstream(meta, std::ios::trunc) << edited.dump(2);
  EXPECT_FALSE(cache.lookup(v.hash, "sm_90", "scale"));
  fs::remove_all(dir);
}
