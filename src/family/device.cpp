// Device limits: the names expressions see as device.*, and a table of known architectures
// so that spaces can be checked and kernels compiled on a machine without a GPU.
#include <array>

#include "family/family.hpp"

namespace kf {

std::string DeviceLimits::arch() const { return "sm_" + std::to_string(cc()); }

namespace {

// The architectures kforge knows without a GPU: one representative part each.
struct KnownArch {
  const char* arch;
  const char* name;
  int cc_major, cc_minor, sm_count;
  int64_t smem_optin, smem_per_sm, l2_bytes;
};
constexpr KnownArch kKnownArchs[] = {
    {"sm_120", "RTX 5090 (sm_120)", 12, 0, 170, 101376, 102400, 96LL * 1024 * 1024},
    {"sm_100", "B200 (sm_100)", 10, 0, 148, 232448, 233472, 126LL * 1024 * 1024},
    {"sm_90", "H100 (sm_90)", 9, 0, 132, 232448, 233472, 50LL * 1024 * 1024},  // H100 SXM
    {"sm_89", "L4 (sm_89)", 8, 9, 58, 101376, 102400, 48LL * 1024 * 1024},
    {"sm_86", "A10 (sm_86)", 8, 6, 72, 101376, 102400, 6LL * 1024 * 1024},
    {"sm_80", "A100 (sm_80)", 8, 0, 108, 166912, 167936, 40LL * 1024 * 1024},
};

}  // namespace

DeviceLimits DeviceLimits::for_arch(const std::string& arch) {
  // "sm_90a" has the limits of "sm_90": the suffix only unlocks instructions.
  std::string base = arch;
  if (base.size() > 3 && base.back() == 'a') base.pop_back();
  for (const auto& k : kKnownArchs) {
    if (base != k.arch) continue;
    DeviceLimits d;
    d.smem_per_block = 48 * 1024;
    d.max_threads = 1024;
    d.regs_per_block = 65536;
    d.regs_per_sm = 65536;
    d.name = k.name;
    d.cc_major = k.cc_major, d.cc_minor = k.cc_minor;
    d.sm_count = k.sm_count;
    d.smem_optin = k.smem_optin;
    d.smem_per_sm = k.smem_per_sm;
    d.l2_bytes = k.l2_bytes;
    return d;
  }
  throw SpecError("unknown architecture '" + arch + "' (known: sm_80, sm_86, sm_89, sm_90, sm_100, sm_120)");
}

void DeviceLimits::add_to(Scope& scope) const {
  scope["device.cc"] = int64_t{cc()};
  scope["device.sm_count"] = int64_t{sm_count};
  scope["device.smem_optin"] = smem_optin;
  scope["device.smem_per_block"] = smem_per_block;
  scope["device.max_threads"] = int64_t{max_threads};
  scope["device.regs_per_block"] = int64_t{regs_per_block};
  scope["device.l2_bytes"] = l2_bytes;
}

}  // namespace kf
