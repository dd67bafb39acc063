// NVRTC compilation of variants to cubins, a persistent cubin cache, and a thread pool.
#pragma once
#include <cstdint>
#include <filesystem>
#include <future>
#include <memory>
#include <optional>
#include <string>

#include "family/render.hpp"

namespace kf {

struct KernelInfo {
  int registers = 0;
  int smem_static = 0;  // bytes of static shared memory
  int stack_frame = 0;  // bytes
  int spill_stores = 0;
  int spill_loads = 0;
  double compile_ms = 0;
};

struct CompiledKernel {
  std::string hash;  // variant hash
  std::string arch;  // full target, e.g. "sm_90" or "sm_90a"
  bool ok = false;
  std::string log;   // NVRTC log (errors, or ptxas -v output)
  std::filesystem::path cubin_path;  // in the cache; empty when !ok
  KernelInfo info;
  bool from_cache = false;
};

// Cubins and their metadata on disk, keyed by (variant hash, arch); survives runs.
// Writes are atomic (temp file + rename), so a killed process never leaves a torn entry.
class CubinCache {
 public:
  explicit CubinCache(std::filesystem::path dir);
  std::optional<CompiledKernel> lookup(const std::string& hash, const std::string& arch) const;
  // Stores the cubin bytes and metadata; returns the kernel with cubin_path set.
  CompiledKernel put(CompiledKernel k, const std::string& cubin_bytes);
  const std::filesystem::path& dir() const { return dir_; }

 private:
  std::filesystem::path dir_;
};

// Compiles one variant for a base arch ("sm_90"; the variant's suffix is appended). Uses the
// cache when given. Compile errors come back as ok=false with the log, never as exceptions.
CompiledKernel compile_variant(const Variant& v, const std::string& base_arch, CubinCache* cache);

// NVRTC compilations this process has run (cache hits do not count): for tests and progress.
uint64_t nvrtc_compile_count();

// NVRTC on N threads. Futures resolve in any order; the pool drains on destruction.
class CompilePool {
 public:
  CompilePool(size_t threads, CubinCache* cache);
  ~CompilePool();
  std::future<CompiledKernel> submit(Variant v, std::string base_arch);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kf
