#include "gpu/vmm.hpp"

#include <map>
#include <mutex>
#include <stdexcept>
#include <utility>

#include <cudaTypedefs.h>  // the PFN_ types; types only, from <cuda.h>

#include "gpu/check.hpp"

namespace kf::gpu {

// A driver error that breaks the context is reported as the runtime's code of the same number,
// so the worker exits on it as it does on a runtime error (is_sticky). The two enums agree on
// every such code:
static_assert(int(CUDA_ERROR_ILLEGAL_ADDRESS) == int(cudaErrorIllegalAddress) &&
                  int(CUDA_ERROR_LAUNCH_FAILED) == int(cudaErrorLaunchFailure) &&
                  int(CUDA_ERROR_MISALIGNED_ADDRESS) == int(cudaErrorMisalignedAddress) &&
                  int(CUDA_ERROR_ASSERT) == int(cudaErrorAssert) &&
                  int(CUDA_ERROR_HARDWARE_STACK_ERROR) == int(cudaErrorHardwareStackError) &&
                  int(CUDA_ERROR_ILLEGAL_INSTRUCTION) == int(cudaErrorIllegalInstruction) &&
                  int(CUDA_ERROR_INVALID_ADDRESS_SPACE) == int(cudaErrorInvalidAddressSpace) &&
                  int(CUDA_ERROR_INVALID_PC) == int(cudaErrorInvalidPc) &&
                  int(CUDA_ERROR_LAUNCH_TIMEOUT) == int(cudaErrorLaunchTimeout) &&
                  int(CUDA_ERROR_ECC_UNCORRECTABLE) == int(cudaErrorECCUncorrectable) &&
                  int(CUDA_ERROR_NVLINK_UNCORRECTABLE) == int(cudaErrorNvlinkUncorrectable) &&
                  int(CUDA_ERROR_CONTAINED) == int(cudaErrorContained) &&
                  int(CUDA_ERROR_TENSOR_MEMORY_LEAK) == int(cudaErrorTensorMemoryLeak) &&
                  int(CUDA_ERROR_CONTEXT_IS_DESTROYED) == int(cudaErrorContextIsDestroyed) &&
                  int(CUDA_ERROR_UNKNOWN) == int(cudaErrorUnknown),
              "the driver's and the runtime's codes for context-breaking errors differ");

namespace {

struct Driver {
  PFN_cuGetErrorName_v6000 error_name = nullptr;
  PFN_cuDeviceGet_v2000 device_get = nullptr;
  PFN_cuDeviceGetAttribute_v2000 device_attribute = nullptr;
  PFN_cuMemGetAllocationGranularity_v10020 granularity = nullptr;
  PFN_cuMemAddressReserve_v10020 address_reserve = nullptr;
  PFN_cuMemAddressFree_v10020 address_free = nullptr;
  PFN_cuMemCreate_v10020 create = nullptr;
  PFN_cuMemRelease_v10020 release = nullptr;
  PFN_cuMemMap_v10020 map = nullptr;
  PFN_cuMemUnmap_v10020 unmap = nullptr;
  PFN_cuMemSetAccess_v10020 set_access = nullptr;
  std::string missing;  // why the functions are unusable; empty when all were found
};

template <typename Fn>
void look_up(Fn& fn, const char* symbol, unsigned version, std::string& missing) {
  if (!missing.empty()) return;
  void* p = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  const cudaError_t e = cudaGetDriverEntryPointByVersion(symbol, &p, version, cudaEnableDefault, &found);
  if (e != cudaSuccess) {
    missing = std::string("cudaGetDriverEntryPointByVersion(") + symbol + "): " + error_text(e);
    cudaGetLastError();
  } else if (found != cudaDriverEntryPointSuccess || !p) {
    missing = std::string("the CUDA driver has no ") + symbol;
  } else {
    fn = reinterpret_cast<Fn>(p);
  }
}

// Looked up once per process: the driver does not change under a running worker.
const Driver& driver() {
  static const Driver d = [] {
    Driver r;
    look_up(r.error_name, "cuGetErrorName", 6000, r.missing);
    look_up(r.device_get, "cuDeviceGet", 2000, r.missing);
    look_up(r.device_attribute, "cuDeviceGetAttribute", 2000, r.missing);
    look_up(r.granularity, "cuMemGetAllocationGranularity", 10020, r.missing);
    look_up(r.address_reserve, "cuMemAddressReserve", 10020, r.missing);
    look_up(r.address_free, "cuMemAddressFree", 10020, r.missing);
    look_up(r.create, "cuMemCreate", 10020, r.missing);
    look_up(r.release, "cuMemRelease", 10020, r.missing);
    look_up(r.map, "cuMemMap", 10020, r.missing);
    look_up(r.unmap, "cuMemUnmap", 10020, r.missing);
    look_up(r.set_access, "cuMemSetAccess", 10020, r.missing);
    return r;
  }();
  return d;
}

std::string driver_error_text(CUresult r) {
  const char* name = nullptr;
  if (!driver().error_name || driver().error_name(r, &name) != CUDA_SUCCESS || !name) name = "an unknown CUresult";
  return std::string(name) + " (" + std::to_string(static_cast<int>(r)) + ")";
}

// Throws for a failed driver call: out of memory as cudaMalloc reports it, a context-breaking
// error as the runtime's sticky code, anything else as a one-line runtime_error.
void call(CUresult r, const char* what) {
  if (r == CUDA_SUCCESS) return;
  if (r == CUDA_ERROR_OUT_OF_MEMORY) throw CudaError(cudaErrorMemoryAllocation, what);
  const auto as_runtime = static_cast<cudaError_t>(r);
  if (is_sticky(as_runtime)) throw CudaError(as_runtime, what);
  throw std::runtime_error(std::string(what) + " returned " + driver_error_text(r));
}

// The driver's handle of the runtime's current device, with that device's primary context made
// current on this thread (the driver's calls act on the current context; cudaSetDevice makes it
// current, as every runtime call would).
CUdevice current_device() {
  int ordinal = 0;
  check(cudaGetDevice(&ordinal), "cudaGetDevice");
  check(cudaSetDevice(ordinal), "cudaSetDevice");
  CUdevice dev = 0;
  call(driver().device_get(&dev, ordinal), "cuDeviceGet");
  return dev;
}

CUmemAllocationProp device_memory(CUdevice dev) {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = dev;
  return prop;
}

struct Support {
  std::optional<size_t> granularity;
  std::string why;
};

// A refusal (other than a broken context) means no support: the caller falls back.
Support query_support(CUdevice dev) try {
  const Driver& d = driver();
  int supported = 0;
  call(d.device_attribute(&supported, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, dev),
       "cuDeviceGetAttribute(VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED)");
  if (!supported) return {std::nullopt, "the device does not support virtual memory management"};
  const CUmemAllocationProp prop = device_memory(dev);
  size_t g = 0;
  call(d.granularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM), "cuMemGetAllocationGranularity");
  if (g == 0 || (g & (g - 1)) != 0 || g % 256 != 0)
    return {std::nullopt, "the allocation granularity " + std::to_string(g) + " is not a power of two multiple of 256"};
  return {g, ""};
} catch (const CudaError& e) {
  if (e.sticky()) throw;
  return {std::nullopt, e.what()};
} catch (const std::runtime_error& e) {
  return {std::nullopt, e.what()};
}

}  // namespace

std::optional<size_t> vmm_granularity(std::string& why) {
  const Driver& d = driver();
  if (!d.missing.empty()) {
    why = d.missing;
    return std::nullopt;
  }
  const CUdevice dev = current_device();
  static std::mutex mu;
  static std::map<CUdevice, Support> known;  // a failed query throws and is not kept
  std::lock_guard<std::mutex> lock(mu);
  auto it = known.find(dev);
  if (it == known.end()) it = known.emplace(dev, query_support(dev)).first;
  why = it->second.why;
  return it->second.granularity;
}

VmmRegion::VmmRegion(size_t reserve_bytes, size_t map_offset, size_t map_bytes, size_t granularity) {
  const Driver& d = driver();
  if (!d.missing.empty()) throw std::runtime_error("virtual memory management: " + d.missing);
  if (granularity == 0 || map_bytes == 0 || map_offset % granularity || map_bytes % granularity ||
      reserve_bytes % granularity || map_offset > reserve_bytes || map_bytes > reserve_bytes - map_offset)
    throw std::invalid_argument("virtual memory region: " + std::to_string(map_bytes) + " bytes mapped at " +
                                std::to_string(map_offset) + " do not fit a reservation of " +
                                std::to_string(reserve_bytes) + " in granules of " + std::to_string(granularity));
  const CUdevice dev = current_device();
  try {
    CUdeviceptr base = 0;
    call(d.address_reserve(&base, reserve_bytes, granularity, 0, 0), "cuMemAddressReserve");
    base_ = base;
    reserve_bytes_ = reserve_bytes;
    const CUmemAllocationProp prop = device_memory(dev);
    CUmemGenericAllocationHandle handle = 0;
    call(d.create(&handle, map_bytes, &prop, 0), "cuMemCreate");
    handle_ = handle;
    has_handle_ = true;
    call(d.map(base_ + map_offset, map_bytes, 0, handle_, 0), "cuMemMap");
    map_offset_ = map_offset;
    map_bytes_ = map_bytes;
    // A new mapping is inaccessible until access is granted, and only this range gets it.
    CUmemAccessDesc access{};
    access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    access.location.id = dev;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    call(d.set_access(base_ + map_offset_, map_bytes_, &access, 1), "cuMemSetAccess");
  } catch (...) {
    release();
    throw;
  }
}

VmmRegion::~VmmRegion() { release(); }

void* VmmRegion::mapped() const {
  return map_bytes_ ? reinterpret_cast<void*>(static_cast<uintptr_t>(base_ + map_offset_)) : nullptr;
}

// Errors are ignored, as in DeviceBuffer's release: after a sticky error every call fails, and
// the process is about to exit.
void VmmRegion::release() noexcept {
  if (!base_) return;  // nothing held (and no driver needed: a CPU-only process gets here too)
  const Driver& d = driver();
  if (map_bytes_) {
    // cudaFree waits for the device before it frees; unmapping memory a kernel still uses must
    // not be any less safe.
    cudaDeviceSynchronize();
    cudaGetLastError();
    d.unmap(base_ + map_offset_, map_bytes_);
  }
  if (has_handle_) d.release(handle_);
  if (base_) d.address_free(base_, reserve_bytes_);
  base_ = 0;
  reserve_bytes_ = 0;
  handle_ = 0;
  has_handle_ = false;
  map_offset_ = 0;
  map_bytes_ = 0;
}

VmmRegion::VmmRegion(VmmRegion&& o) noexcept
    : base_(std::exchange(o.base_, 0)),
      reserve_bytes_(std::exchange(o.reserve_bytes_, 0)),
      handle_(std::exchange(o.handle_, 0)),
      has_handle_(std::exchange(o.has_handle_, false)),
      map_offset_(std::exchange(o.map_offset_, 0)),
      map_bytes_(std::exchange(o.map_bytes_, 0)) {}

VmmRegion& VmmRegion::operator=(VmmRegion&& o) noexcept {
  if (this != &o) {
    release();
    base_ = std::exchange(o.base_, 0);
    reserve_bytes_ = std::exchange(o.reserve_bytes_, 0);
    handle_ = std::exchange(o.handle_, 0);
    has_handle_ = std::exchange(o.has_handle_, false);
    map_offset_ = std::exchange(o.map_offset_, 0);
    map_bytes_ = std::exchange(o.map_bytes_, 0);
  }
  return *this;
}

}  // namespace kf::gpu
