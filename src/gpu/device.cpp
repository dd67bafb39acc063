#include "gpu/device.hpp"

#include <cuda_runtime_api.h>

#include "gpu/check.hpp"

namespace kf::gpu {

std::optional<std::string> device_unavailable(int index) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    cudaGetLastError();  // clear it, so it does not resurface later
    return "no CUDA device available (" + error_text(e) + ")";
  }
  if (count == 0) return std::string("no CUDA device available (device count is 0)");
  if (index < 0 || index >= count)
    return "no CUDA device " + std::to_string(index) + " (this machine has " + std::to_string(count) + ")";
  return std::nullopt;
}

DeviceLimits describe_device(int index) {
  cudaDeviceProp p{};
  check(cudaGetDeviceProperties(&p, index), "cudaGetDeviceProperties");
  int driver = 0;
  check(cudaDriverGetVersion(&driver), "cudaDriverGetVersion");
  DeviceLimits d;
  d.name = p.name;
  d.cc_major = p.major;
  d.cc_minor = p.minor;
  d.sm_count = p.multiProcessorCount;
  d.smem_per_block = static_cast<int64_t>(p.sharedMemPerBlock);
  d.smem_optin = static_cast<int64_t>(p.sharedMemPerBlockOptin);
  d.smem_per_sm = static_cast<int64_t>(p.sharedMemPerMultiprocessor);
  d.max_threads = p.maxThreadsPerBlock;
  d.regs_per_block = p.regsPerBlock;
  d.regs_per_sm = p.regsPerMultiprocessor;
  d.l2_bytes = p.l2CacheSize;
  // cudaDriverGetVersion encodes 13.0 as 13000.
  d.driver = std::to_string(driver / 1000) + "." + std::to_string((driver % 1000) / 10);
  return d;
}

DeviceLimits open_device(int index) {
  check(cudaSetDevice(index), "cudaSetDevice");
  DeviceLimits d = describe_device(index);
  // Create the context now, so that its cost and its failures belong to start-up.
  check(cudaFree(nullptr), "cudaFree(context)");
  return d;
}

std::pair<size_t, size_t> memory_info() {
  size_t free_b = 0, total_b = 0;
  check(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo");
  return {free_b, total_b};
}

}  // namespace kf::gpu
