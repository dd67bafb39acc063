// Device memory mapped into the middle of a larger reservation of address space, through the
// driver's virtual-memory API (cuMemAddressReserve, cuMemCreate, cuMemMap, cuMemSetAccess), so
// the rest of the reservation stays unmapped and any access there faults. The worker's guarded
// buffers are placed this way (eval/worker/guarded_buffer.hpp). The driver's functions come
// through cudaGetDriverEntryPointByVersion, as the tensor-map encoder's do: the binary links
// only cudart_static and still starts where there is no driver.
#pragma once
#include <cstddef>
#include <optional>
#include <string>

namespace kf::gpu {

// The current device's allocation granularity for VmmRegion (2 MiB on current GPUs), looked up
// once per device. nullopt, with the reason in `why`, where the driver or the device has no
// virtual-memory management. Throws CudaError when the device's context is broken (sticky).
std::optional<size_t> vmm_granularity(std::string& why);

class VmmRegion {
 public:
  VmmRegion() = default;
  // Reserves reserve_bytes of address space, aligned to `granularity`, and maps map_bytes of new
  // memory of the current device at map_offset, readable and writable by that device; offsets
  // and sizes are multiples of the granularity (vmm_granularity). Throws CudaError
  // (cudaErrorMemoryAllocation when the device or its address space is full, a sticky code when
  // the context is broken), std::invalid_argument for a layout that does not fit, and
  // std::runtime_error for any other refusal, naming the driver call and its error.
  VmmRegion(size_t reserve_bytes, size_t map_offset, size_t map_bytes, size_t granularity);
  ~VmmRegion();
  VmmRegion(VmmRegion&& o) noexcept;
  VmmRegion& operator=(VmmRegion&& o) noexcept;
  VmmRegion(const VmmRegion&) = delete;
  VmmRegion& operator=(const VmmRegion&) = delete;

  void* mapped() const;  // start of the mapped part; null when default-constructed
  size_t mapped_bytes() const { return map_bytes_; }

 private:
  void release() noexcept;
  // Each is set once its step succeeded, so release() undoes exactly the steps taken.
  unsigned long long base_ = 0;    // the reservation (CUdeviceptr); 0: none
  size_t reserve_bytes_ = 0;
  unsigned long long handle_ = 0;  // the physical memory (CUmemGenericAllocationHandle)
  bool has_handle_ = false;
  size_t map_offset_ = 0, map_bytes_ = 0;  // map_bytes_ > 0: mapped
};

}  // namespace kf::gpu
