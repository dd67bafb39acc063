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
  std::string entry; // the kernel the cubin must contain (not part of the variant hash)
  bool ok = false;
  std::string log;   // NVRTC log (errors, or ptxas -v output)
  std::filesystem::path cubin_path;  // in the cache; empty when !ok
  KernelInfo info;
  bool from_cache = false;
};

// Cubins and their metadata on disk, keyed by (variant hash, arch); survives runs.
// Writes are atomic (temp file + rename), so a killed process never leaves a torn entry.
// Each entry carries a seal, a content hash over its key (hash, arch, entry, NVRTC version),
// its verdict and the cubin's bytes: an entry copied under another key, or whose metadata was
// edited, is a miss, and so is a cubin that lacks the entry function. (The seal catches damage
// and mix-ups, not a writer who recomputes it: the cache folder must be the user's own.)
class CubinCache {
 public:
  explicit CubinCache(std::filesystem::path dir);
  std::optional<CompiledKernel> lookup(const std::string& hash, const std::string& arch,
                                       const std::string& entry) const;
  // Stores the cubin bytes and metadata; returns the kernel with cubin_path set.
  CompiledKernel put(CompiledKernel k, const std::string& cubin_bytes);
  const std::filesystem::path& dir() const { return dir_; }

 private:
  std::filesystem::path dir_;
};

// Compiles one variant for a base arch ("sm_90"; the variant's suffix is appended). Uses the
// cache when given. Compile errors come back as ok=false with the log, never as exceptions.
CompiledKernel compile_variant(const Variant& v, const std::string& base_arch, CubinCache* cache);

// The target a variant compiles for: base_arch plus the variant's suffix ("sm_90" + "a"), unless base_arch
// already ends with it (a target given as "sm_90a").
std::string target_arch_for(const std::string& base_arch, const std::string& suffix);

// NVRTC compilations this process has run (cache hits do not count): for tests and progress.
uint64_t nvrtc_compile_count();

// NVRTC on N threads. Futures resolve in any order; the pool drains on destruction.
class CompilePool {
 public:
  // Starts fewer threads (with a warning) when the system refuses some; throws
  // std::runtime_error when it refuses every one.
  CompilePool(size_t threads, CubinCache* cache);
  size_t threads() const;  // threads actually running
  ~CompilePool();
  std::future<CompiledKernel> submit(Variant v, std::string base_arch);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kf
