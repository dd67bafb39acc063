#include "gpu/buffer.hpp"

#include <utility>

#include "gpu/check.hpp"

namespace kf::gpu {

// A zero-byte buffer still gets a distinct valid pointer, so a kernel argument is never null.
DeviceBuffer::DeviceBuffer(size_t bytes) : bytes_(bytes) {
  check(cudaMalloc(&p_, bytes ? bytes : 1), "cudaMalloc");
}

DeviceBuffer::~DeviceBuffer() { release(); }

void DeviceBuffer::release() {
  if (p_) cudaFree(p_);  // errors ignored: see Stream::~Stream
  p_ = nullptr;
  bytes_ = 0;
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& o) noexcept
    : p_(std::exchange(o.p_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    release();
    p_ = std::exchange(o.p_, nullptr);
    bytes_ = std::exchange(o.bytes_, 0);
  }
  return *this;
}

void DeviceBuffer::upload(const void* host, size_t bytes, const Stream& s) {
  check(cudaMemcpyAsync(p_, host, bytes, cudaMemcpyHostToDevice, s.get()), "cudaMemcpyAsync(upload)");
}

void DeviceBuffer::download(void* host, size_t bytes, const Stream& s) const {
  check(cudaMemcpyAsync(host, p_, bytes, cudaMemcpyDeviceToHost, s.get()), "cudaMemcpyAsync(download)");
}

void DeviceBuffer::copy_from(const DeviceBuffer& src, size_t bytes, const Stream& s) {
  check(cudaMemcpyAsync(p_, src.p_, bytes, cudaMemcpyDeviceToDevice, s.get()), "cudaMemcpyAsync(copy)");
}

void DeviceBuffer::fill(unsigned char byte, const Stream& s) {
  check(cudaMemsetAsync(p_, byte, bytes_, s.get()), "cudaMemsetAsync");
}

}  // namespace kf::gpu
