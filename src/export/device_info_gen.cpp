#include "export/device_info_gen.hpp"

#include <sstream>

namespace kf::exporter {

const std::vector<std::string>& device_fields() {
  static const std::vector<std::string> fields = {"cc", "sm_count", "smem_optin", "smem_per_block", "smem_per_sm",
                                                  "max_threads", "regs_per_block", "regs_per_sm", "l2_bytes"};
  return fields;
}

std::string device_info_decl() {
  std::string o =
      "#ifndef KFORGE_DEVICE_INFO_DEFINED\n#define KFORGE_DEVICE_INFO_DEFINED\n"
      "/* Device limits a supported-shape rule may read (the spec's device.* names). */\n"
      "typedef struct kforge_device_info {\n";
  for (const auto& f : device_fields()) o += "  long long " + f + ";\n";
  return o + "} kforge_device_info;\n#endif\n";
}

std::string device_query_code() {
  return R"CXX(// The current device's limits, read once per device (a launch must stay cheap).
cudaError_t kfx_query(int d, kforge_device_info& i) {
  const cudaDeviceAttr attrs[] = {cudaDevAttrComputeCapabilityMajor, cudaDevAttrComputeCapabilityMinor,
                                  cudaDevAttrMultiProcessorCount, cudaDevAttrMaxSharedMemoryPerBlockOptin,
                                  cudaDevAttrMaxSharedMemoryPerBlock, cudaDevAttrMaxSharedMemoryPerMultiprocessor,
                                  cudaDevAttrMaxThreadsPerBlock, cudaDevAttrMaxRegistersPerBlock,
                                  cudaDevAttrMaxRegistersPerMultiprocessor, cudaDevAttrL2CacheSize};
  int v[10] = {0};
  for (int k = 0; k < 10; ++k) {
    const cudaError_t e = cudaDeviceGetAttribute(&v[k], attrs[k], d);
    if (e != cudaSuccess) return e;
  }
  i.cc = v[0] * 10 + v[1];
  i.sm_count = v[2];
  i.smem_optin = v[3];
  i.smem_per_block = v[4];
  i.smem_per_sm = v[5];
  i.max_threads = v[6];
  i.regs_per_block = v[7];
  i.regs_per_sm = v[8];
  i.l2_bytes = v[9];
  return cudaSuccess;
}

constexpr int kfx_kDevices = 64;
std::mutex kfx_mutex;
kforge_device_info kfx_info[kfx_kDevices];
bool kfx_known[kfx_kDevices];
long long kfx_smem_allowed[kfx_kDevices];  // dynamic smem opted in so far, per device

cudaError_t kfx_current_device(int& d, kforge_device_info& i) {
  cudaError_t e = cudaGetDevice(&d);
  if (e != cudaSuccess) return e;
  if (d < 0 || d >= kfx_kDevices) return kfx_query(d, i);
  std::lock_guard<std::mutex> lock(kfx_mutex);
  if (!kfx_known[d]) {
    e = kfx_query(d, kfx_info[d]);
    if (e != cudaSuccess) return e;
    kfx_known[d] = true;
  }
  i = kfx_info[d];
  return cudaSuccess;
}

// More than 48 KiB of dynamic shared memory needs an opt-in per kernel and device.
template <typename Kernel>
cudaError_t kfx_allow_smem(Kernel kernel, int d, unsigned smem) {
  if (smem <= 48u * 1024u) return cudaSuccess;
  if (d >= 0 && d < kfx_kDevices) {
    std::lock_guard<std::mutex> lock(kfx_mutex);
    if (kfx_smem_allowed[d] >= static_cast<long long>(smem)) return cudaSuccess;
    const cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
    if (e == cudaSuccess) kfx_smem_allowed[d] = smem;
    return e;
  }
  return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
}
)CXX";
}

std::string target_limits_code(const KernelModel& m) {
  const DeviceLimits& d = m.limits;
  std::ostringstream o;
  o << "// Limits of the export target (" << d.name << ", " << m.arch << "): used by " << m.name
    << "_supports when it is given no device.\n";
  o << "const kforge_device_info kfx_target = {" << d.cc() << ", " << d.sm_count << ", " << d.smem_optin << ", "
    << d.smem_per_block << ", " << d.smem_per_sm << ", " << d.max_threads << ", " << d.regs_per_block << ", "
    << d.regs_per_sm << ", " << d.l2_bytes << "};\n";
  return o.str();
}

}  // namespace kf::exporter
