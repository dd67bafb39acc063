// compile_variant: NVRTC to a cubin, resource usage from the ptxas report (ELF as fallback).
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <chrono>
#include <regex>
#include <vector>

#include <nvrtc.h>

#include "compile/compiler.hpp"
#include "compile/cubin_elf.hpp"
#include "compile/ptxas_report.hpp"

namespace kf {

namespace {

std::atomic<uint64_t> g_nvrtc_compiles{0};

// Destroys the program on every path out of compile_variant.
struct Program {
  nvrtcProgram p = nullptr;
  ~Program() {
    if (p) nvrtcDestroyProgram(&p);
  }
};

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

CompiledKernel failure(CompiledKernel k, const std::string& why) {
  k.ok = false;
  if (!k.log.empty() && k.log.back() != '\n') k.log += '\n';
  k.log += why;
  return k;
}

// Without a cache the cubin still needs a file (workers load it by path). A fixed, shared
// name (/tmp/kforge-cubins-<uid>) could be pre-created by another user and was never cleaned:
// instead a folder of this process's own, made by mkdtemp (a fresh name, mode 0700) and
// removed when the process exits (a process killed outright leaves it behind).
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "kforge-cubins-XXXXXX").string();
    if (!::mkdtemp(pattern.data()))
      throw std::runtime_error("cannot create a private temporary folder " + pattern + ": " +
                               std::strerror(errno));
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

CubinCache& scratch_cache() {
  static ScratchDir dir;  // constructed first, so destroyed after the cache
  static CubinCache cache(dir.path());
  return cache;
}

std::string program_log(nvrtcProgram p) {
  size_t n = 0;
  if (nvrtcGetProgramLogSize(p, &n) != NVRTC_SUCCESS || n == 0) return "";
  std::string log(n, '\0');
  if (nvrtcGetProgramLog(p, log.data()) != NVRTC_SUCCESS) return "";
  while (!log.empty() && log.back() == '\0') log.pop_back();
  return log;
}

}  // namespace

uint64_t nvrtc_compile_count() { return g_nvrtc_compiles.load(); }

std::string target_arch_for(const std::string& base_arch, const std::string& suffix) {
  const bool has_suffix = !suffix.empty() && base_arch.size() > suffix.size() &&
                          base_arch.compare(base_arch.size() - suffix.size(), suffix.size(), suffix) == 0;
  return has_suffix ? base_arch : base_arch + suffix;
}

CompiledKernel compile_variant(const Variant& v, const std::string& base_arch, CubinCache* cache) {
  CompiledKernel k;
  k.hash = v.hash;
  k.arch = target_arch_for(base_arch, v.arch_suffix);
  k.entry = v.entry;
  CubinCache& store = cache ? *cache : scratch_cache();
  if (cache) {
    if (auto hit = cache->lookup(k.hash, k.arch, k.entry)) return *hit;
  }

  static const std::regex arch_re(R"(sm_\d+[a-z]?)");
  if (!std::regex_match(k.arch, arch_re))
    return store.put(failure(k, "kforge: bad target architecture '" + k.arch + "'"), "");

  std::vector<std::string> opts;
  bool has_std = false;
  bool has_verbose = false;
  for (const std::string& o : v.options) {
    // The target is kforge's choice (one variant compiles for several devices).
    if (starts_with(o, "--gpu-architecture") || starts_with(o, "-arch"))
      return store.put(failure(k, "kforge: option '" + o + "' is not allowed (the target is set per device)"), "");
    has_std = has_std || starts_with(o, "--std") || starts_with(o, "-std");
    has_verbose = has_verbose || o == "--ptxas-options=-v" || o == "--ptxas-options=--verbose";
    opts.push_back(o);
  }
  opts.push_back("--gpu-architecture=" + k.arch);
  opts.push_back(std::string("-I") + KFORGE_CUDA_INCLUDE);
  if (!has_std) opts.push_back("--std=c++17");
  // NVRTC forwards this to ptxas and appends its resource report to the program log.
  if (!has_verbose) opts.push_back("--ptxas-options=-v");
  std::vector<const char*> argv;
  for (const std::string& o : opts) argv.push_back(o.c_str());

  const auto t0 = std::chrono::steady_clock::now();
  Program prog;
  const std::string name = (v.family.empty() ? std::string("variant") : v.family) + ".cu";
  nvrtcResult rc = nvrtcCreateProgram(&prog.p, v.source.c_str(), name.c_str(), 0, nullptr, nullptr);
  if (rc != NVRTC_SUCCESS) return failure(k, std::string("nvrtcCreateProgram: ") + nvrtcGetErrorString(rc));
  ++g_nvrtc_compiles;
  rc = nvrtcCompileProgram(prog.p, static_cast<int>(argv.size()), argv.data());
  k.log = program_log(prog.p);
  if (rc != NVRTC_SUCCESS) {
    k = failure(k, std::string("nvrtcCompileProgram: ") + nvrtcGetErrorString(rc));
    // Only a verdict on the source and options is worth remembering; an internal or
    // out-of-memory failure may not repeat.
    const bool deterministic = rc == NVRTC_ERROR_COMPILATION || rc == NVRTC_ERROR_INVALID_OPTION;
    return deterministic ? store.put(k, "") : k;
  }
  size_t size = 0;
  rc = nvrtcGetCUBINSize(prog.p, &size);
  std::string cubin(size, '\0');
  if (rc == NVRTC_SUCCESS) rc = nvrtcGetCUBIN(prog.p, cubin.data());
  if (rc != NVRTC_SUCCESS || size == 0)
    return failure(k, std::string("nvrtcGetCUBIN: ") + nvrtcGetErrorString(rc));
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();

  auto info = parse_ptxas_report(k.log, v.entry);
  if (!info) info = parse_cubin_resources(cubin, v.entry);
  if (!info)
    return store.put(failure(k, "kforge: entry function '" + v.entry +
                                    "' not found in the compiled code (is it extern \"C\" __global__?)"),
                     "");
  k.info = *info;
  k.info.compile_ms = ms;
  k.ok = true;
  return store.put(k, cubin);
}

}  // namespace kf
