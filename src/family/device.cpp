// Device limits: the names expressions see as device.*, and a table of known architectures
// so that spaces can be checked and kernels compiled on a machine without a GPU.
#include <array>

#include "family/family.hpp"

namespace kf {

std::string DeviceLimits::arch() const { return "sm_" + std::to_string(cc()); }

DeviceLimits DeviceLimits::for_arch(const std::string& arch) {
  // "sm_90a" has the limits of "sm_90": the suffix only unlocks instructions.
  std::string base = arch;
  if (base.size() > 3 && base.back() == 'a') base.pop_back();

  DeviceLimits d;
  d.smem_per_block = 48 * 1024;
  d.max_threads = 1024;
  d.regs_per_block = 65536;
  d.regs_per_sm = 65536;
  if (base == "sm_90") {  // H100 SXM
    d.name = "H100 (sm_90)";
    d.cc_major = 9, d.cc_minor = 0;
    d.sm_count = 132;
    d.smem_optin = 232448;
    d.smem_per_sm = 233472;
    d.l2_bytes = 50LL * 1024 * 1024;
  } else if (base == "sm_89") {  // L4
    d.name = "L4 (sm_89)";
    d.cc_major = 8, d.cc_minor = 9;
    d.sm_count = 58;
    d.smem_optin = 101376;
    d.smem_per_sm = 102400;
    d.l2_bytes = 48LL * 1024 * 1024;
  } else if (base == "sm_86") {  // A10
    d.name = "A10 (sm_86)";
    d.cc_major = 8, d.cc_minor = 6;
    d.sm_count = 72;
    d.smem_optin = 101376;
    d.smem_per_sm = 102400;
    d.l2_bytes = 6LL * 1024 * 1024;
  } else if (base == "sm_80") {  // A100
    d.name = "A100 (sm_80)";
    d.cc_major = 8, d.cc_minor = 0;
    d.sm_count = 108;
    d.smem_optin = 166912;
    d.smem_per_sm = 167936;
    d.l2_bytes = 40LL * 1024 * 1024;
  } else {
    throw SpecError("unknown architecture '" + arch + "' (known: sm_80, sm_86, sm_89, sm_90)");
  }
  return d;
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
