// RAII device memory.
#pragma once
#include <cstddef>

#include "gpu/stream.hpp"

namespace kf::gpu {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes);  // throws CudaError (cudaErrorMemoryAllocation)
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& o) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* get() const { return p_; }
  size_t bytes() const { return bytes_; }

  // Stream-ordered copies and fills; `bytes` defaults to the whole buffer.
  void upload(const void* host, size_t bytes, const Stream& s);
  void download(void* host, size_t bytes, const Stream& s) const;
  void copy_from(const DeviceBuffer& src, size_t bytes, const Stream& s);
  void fill(unsigned char byte, const Stream& s);

 private:
  void release();
  void* p_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace kf::gpu
