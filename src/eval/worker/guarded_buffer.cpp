#include "eval/worker/guarded_buffer.hpp"

#include <vector>

#include "gpu/check.hpp"

namespace kf {

GuardedBuffer::GuardedBuffer(size_t bytes, const gpu::Stream& s) : mem_(bytes + 2 * kGuardBytes), bytes_(bytes) {
  write_guards(s);
}

void* GuardedBuffer::get() const { return mem_.get() ? base() + kGuardBytes : nullptr; }

void GuardedBuffer::write_guards(const gpu::Stream& s) {
  // The patterns are static, so the asynchronous copies may outlive this call.
  const auto& before = guard_pattern(GuardSide::Before);
  const auto& after = guard_pattern(GuardSide::After);
  gpu::check(cudaMemcpyAsync(base(), before.data(), kGuardBytes, cudaMemcpyHostToDevice, s.get()),
             "cudaMemcpyAsync(guard)");
  gpu::check(cudaMemcpyAsync(base() + kGuardBytes + bytes_, after.data(), kGuardBytes, cudaMemcpyHostToDevice,
                             s.get()),
             "cudaMemcpyAsync(guard)");
}

void GuardedBuffer::upload(const void* host, size_t bytes, const gpu::Stream& s) {
  gpu::check(cudaMemcpyAsync(get(), host, bytes, cudaMemcpyHostToDevice, s.get()), "cudaMemcpyAsync(upload)");
}

void GuardedBuffer::download(void* host, size_t bytes, const gpu::Stream& s) const {
  gpu::check(cudaMemcpyAsync(host, get(), bytes, cudaMemcpyDeviceToHost, s.get()), "cudaMemcpyAsync(download)");
}

void GuardedBuffer::copy_from(const gpu::DeviceBuffer& src, size_t bytes, const gpu::Stream& s) {
  gpu::check(cudaMemcpyAsync(get(), src.get(), bytes, cudaMemcpyDeviceToDevice, s.get()), "cudaMemcpyAsync(copy)");
}

void GuardedBuffer::fill(unsigned char byte, const gpu::Stream& s) {
  gpu::check(cudaMemsetAsync(get(), byte, bytes_, s.get()), "cudaMemsetAsync");
}

std::optional<std::string> GuardedBuffer::check_guards(const std::string& name, size_t element_bytes,
                                                       const gpu::Stream& s) {
  if (!mem_.get()) return std::nullopt;
  std::vector<unsigned char> seen(2 * kGuardBytes);
  gpu::check(cudaMemcpyAsync(seen.data(), base(), kGuardBytes, cudaMemcpyDeviceToHost, s.get()),
             "cudaMemcpyAsync(guard)");
  gpu::check(cudaMemcpyAsync(seen.data() + kGuardBytes, base() + kGuardBytes + bytes_, kGuardBytes,
                             cudaMemcpyDeviceToHost, s.get()),
             "cudaMemcpyAsync(guard)");
  s.synchronize();
  std::optional<std::string> damage;
  for (GuardSide side : {GuardSide::Before, GuardSide::After}) {
    const unsigned char* band = seen.data() + (side == GuardSide::Before ? 0 : kGuardBytes);
    if (auto d = find_damage(band, guard_pattern(side).data(), kGuardBytes); d && !damage)
      damage = describe_guard_damage(side, *d, name, bytes_, element_bytes);
  }
  if (damage) write_guards(s);  // the next kernel on this (cached) buffer starts clean
  return damage;
}

}  // namespace kf
