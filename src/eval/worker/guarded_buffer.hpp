// Device memory between two guard bands (eval/worker/guard_band.hpp): what a kernel gets is the
// middle; the bands are written at allocation and checked (and restored) on request. Where the
// device supports virtual memory management, the bands lie between unmapped address space
// (eval/worker/guard_layout.hpp, gpu/vmm.hpp), so a write beyond a band faults.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "eval/worker/guard_band.hpp"
#include "eval/worker/guard_layout.hpp"
#include "gpu/buffer.hpp"
#include "gpu/stream.hpp"
#include "gpu/vmm.hpp"

namespace kf {

class GuardedBuffer {
 public:
  GuardedBuffer() = default;
  // Allocates bytes plus the bands, between unmapped address space where the device allows it
  // (said once on stderr where it does not), and writes the bands (stream-ordered). Throws
  // CudaError (cudaErrorMemoryAllocation when the device is full), std::runtime_error.
  GuardedBuffer(size_t bytes, const gpu::Stream& s);

  void* get() const;  // the buffer proper (256-byte aligned); null when default-constructed
  size_t bytes() const { return layout_.buffer_bytes; }
  size_t device_bytes() const { return layout_.map_bytes; }  // device memory held, bands included
  const GuardLayout& layout() const { return layout_; }

  // Stream-ordered; each touches the buffer proper only.
  void upload(const void* host, size_t bytes, const gpu::Stream& s);
  void download(void* host, size_t bytes, const gpu::Stream& s) const;
  void copy_from(const gpu::DeviceBuffer& src, size_t bytes, const gpu::Stream& s);
  void fill(unsigned char byte, const gpu::Stream& s);

  // Reads both bands (waits for s). Returns the first damaged band's description (naming
  // `name`), after restoring the bands, or nullopt when both are intact.
  std::optional<std::string> check_guards(const std::string& name, size_t element_bytes, const gpu::Stream& s);

 private:
  void write_guards(const gpu::Stream& s);
  unsigned char* base() const;  // the accessible part: before band, buffer, after band
  GuardLayout layout_;
  // What the bands must hold. Declared before the memory so that they outlive it: the memory's
  // release waits for the device, and with it for any copy of a pattern still in flight.
  std::vector<unsigned char> before_pattern_, after_pattern_;
  gpu::VmmRegion region_;  // between unmapped address space,
  gpu::DeviceBuffer plain_;  // or, without virtual memory management, a plain allocation
};

// True once a buffer of this process was placed between unmapped address space.
bool guard_pages_in_use();

// What a sticky error most likely means, as a parenthesis to append to its message, or "" when
// nothing can be said: with the buffers between unmapped pages (guard_pages), an illegal
// address is most likely an access outside every buffer.
std::string fault_hint(cudaError_t e, bool guard_pages);

}  // namespace kf
