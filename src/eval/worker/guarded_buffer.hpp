// Device memory between two guard bands (eval/worker/guard_band.hpp): what a kernel gets is the
// middle; the bands are written at allocation and checked (and restored) on request.
#pragma once
#include <cstddef>
#include <optional>
#include <string>

#include "eval/worker/guard_band.hpp"
#include "gpu/buffer.hpp"
#include "gpu/stream.hpp"

namespace kf {

class GuardedBuffer {
 public:
  GuardedBuffer() = default;
  // Allocates bytes plus the bands and writes the bands (stream-ordered). Throws CudaError.
  GuardedBuffer(size_t bytes, const gpu::Stream& s);

  void* get() const;  // the buffer proper; null when default-constructed
  size_t bytes() const { return bytes_; }

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
  unsigned char* base() const { return static_cast<unsigned char*>(mem_.get()); }
  gpu::DeviceBuffer mem_;
  size_t bytes_ = 0;
};

}  // namespace kf
