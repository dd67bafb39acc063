#include "gpu/energy_meter.hpp"

#include <cuda_runtime.h>
#include <dlfcn.h>

namespace kf::gpu {

namespace {
// The few NVML entry points used, by their documented C signatures (nvml.h is not needed to build):
// every one returns nvmlReturn_t, 0 being NVML_SUCCESS; nvmlDevice_t is an opaque pointer.
using InitFn = int (*)();
using HandleFn = int (*)(const char*, void**);
using ErrorFn = const char* (*)(int);

struct Nvml {
  void* lib = nullptr;
  InitFn init = nullptr;
  HandleFn by_pci = nullptr;
  ErrorFn error = nullptr;
  void* energy = nullptr;
  std::string why_not;
};

// Loaded and initialised once a process (NVML's init is reference counted; it is never shut down).
const Nvml& nvml() {
  static const Nvml n = [] {
    Nvml m;
    m.lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!m.lib) {
      m.why_not = "libnvidia-ml.so.1 not found";
      return m;
    }
    m.init = reinterpret_cast<InitFn>(dlsym(m.lib, "nvmlInit_v2"));
    m.by_pci = reinterpret_cast<HandleFn>(dlsym(m.lib, "nvmlDeviceGetHandleByPciBusId_v2"));
    m.error = reinterpret_cast<ErrorFn>(dlsym(m.lib, "nvmlErrorString"));
    m.energy = dlsym(m.lib, "nvmlDeviceGetTotalEnergyConsumption");
    if (!m.init || !m.by_pci || !m.energy) {
      m.why_not = "libnvidia-ml.so.1 lacks the energy counter's entry points";
      return m;
    }
    if (const int rc = m.init(); rc != 0)
      m.why_not = std::string("nvmlInit failed (") + (m.error ? m.error(rc) : std::to_string(rc).c_str()) + ")";
    return m;
  }();
  return n;
}
}  // namespace

EnergyMeter::EnergyMeter() {
  const Nvml& n = nvml();
  if (!n.why_not.empty()) {
    why_not_ = n.why_not;
    return;
  }
  int device = 0;
  char bus[32] = {};
  if (cudaGetDevice(&device) != cudaSuccess || cudaDeviceGetPCIBusId(bus, sizeof bus, device) != cudaSuccess) {
    cudaGetLastError();
    why_not_ = "the CUDA device's PCI bus id is unknown";
    return;
  }
  void* h = nullptr;
  if (const int rc = n.by_pci(bus, &h); rc != 0 || !h) {
    why_not_ = std::string("NVML does not know device ") + bus + (n.error ? std::string(" (") + n.error(rc) + ")" : "");
    return;
  }
  energy_ = reinterpret_cast<EnergyFn>(n.energy);
  unsigned long long mj = 0;
  if (const int rc = energy_(h, &mj); rc != 0) {
    why_not_ = std::string("this GPU has no energy counter") + (n.error ? std::string(" (") + n.error(rc) + ")" : "");
    energy_ = nullptr;
    return;
  }
  handle_ = h;
}

std::optional<uint64_t> EnergyMeter::read_mj() const {
  if (!handle_) return std::nullopt;
  unsigned long long mj = 0;
  if (energy_(handle_, &mj) != 0) return std::nullopt;
  return static_cast<uint64_t>(mj);
}

}  // namespace kf::gpu
