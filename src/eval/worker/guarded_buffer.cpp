#include "eval/worker/guarded_buffer.hpp"

#include <atomic>
#include <iostream>
#include <mutex>
#include <stdexcept>

#include "gpu/check.hpp"

namespace kf {

namespace {

std::atomic<bool> g_guard_pages{false};

// Once per process: without unmapped guard pages a write far past a buffer can land unseen.
void say_no_guard_pages(const std::string& why) {
  static std::once_flag once;
  std::call_once(once, [&] {
    std::cerr << "kforge worker: no unmapped guard pages around the gate's buffers (" << why
              << "); they get " << kGuardBytes << "-byte guard bands only, so a write far outside a buffer may "
              << "go unnoticed\n";
  });
}

}  // namespace

GuardedBuffer::GuardedBuffer(size_t bytes, const gpu::Stream& s) {
  std::string why;
  if (const auto granularity = gpu::vmm_granularity(why)) {
    try {
      layout_ = unmapped_guard_layout(bytes, *granularity);
      region_ = gpu::VmmRegion(layout_.reserve_bytes, layout_.map_offset, layout_.map_bytes, *granularity);
      g_guard_pages = true;
    } catch (const gpu::CudaError&) {
      throw;  // a full device or a broken context: the plain allocation would fare no better
    } catch (const std::runtime_error& e) {
      // Any other refusal of the driver's: the buffer still gets its bands, as without support.
      why = e.what();
    }
  }
  if (!region_.mapped()) {
    say_no_guard_pages(why);
    layout_ = plain_guard_layout(bytes);
    plain_ = gpu::DeviceBuffer(layout_.map_bytes);
  }
  before_pattern_ = guard_pattern(GuardSide::Before, layout_.before_bytes);
  after_pattern_ = guard_pattern(GuardSide::After, layout_.after_bytes);
  write_guards(s);
}

unsigned char* GuardedBuffer::base() const {
  return static_cast<unsigned char*>(region_.mapped() ? region_.mapped() : plain_.get());
}

void* GuardedBuffer::get() const { return base() ? base() + layout_.before_bytes : nullptr; }

void GuardedBuffer::write_guards(const gpu::Stream& s) {
  // The patterns live as long as the buffer, so the asynchronous copies may outlive this call.
  gpu::check(cudaMemcpyAsync(base(), before_pattern_.data(), before_pattern_.size(), cudaMemcpyHostToDevice,
                             s.get()),
             "cudaMemcpyAsync(guard)");
  gpu::check(cudaMemcpyAsync(static_cast<unsigned char*>(get()) + bytes(), after_pattern_.data(),
                             after_pattern_.size(), cudaMemcpyHostToDevice, s.get()),
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
  gpu::check(cudaMemsetAsync(get(), byte, bytes(), s.get()), "cudaMemsetAsync");
}

std::optional<std::string> GuardedBuffer::check_guards(const std::string& name, size_t element_bytes,
                                                       const gpu::Stream& s) {
  if (!base()) return std::nullopt;
  const size_t nb = before_pattern_.size(), na = after_pattern_.size();
  std::vector<unsigned char> seen(nb + na);
  gpu::check(cudaMemcpyAsync(seen.data(), base(), nb, cudaMemcpyDeviceToHost, s.get()), "cudaMemcpyAsync(guard)");
  gpu::check(cudaMemcpyAsync(seen.data() + nb, static_cast<unsigned char*>(get()) + bytes(), na,
                             cudaMemcpyDeviceToHost, s.get()),
             "cudaMemcpyAsync(guard)");
  s.synchronize();
  std::optional<std::string> damage;
  if (auto before = find_damage(seen.data(), before_pattern_.data(), nb))
    damage = describe_guard_damage(GuardSide::Before, *before, name, bytes(), element_bytes, nb);
  else if (auto after = find_damage(seen.data() + nb, after_pattern_.data(), na))
    damage = describe_guard_damage(GuardSide::After, *after, name, bytes(), element_bytes, na);
  if (damage) write_guards(s);  // the next kernel on this (cached) buffer starts clean
  return damage;
}

bool guard_pages_in_use() { return g_guard_pages; }

std::string fault_hint(cudaError_t e, bool guard_pages) {
  if (e == cudaErrorIllegalAddress && guard_pages)
    return "(likely a write or read outside every buffer: the kernel's buffers lie between guard bands and "
           "unmapped pages)";
  return "";
}

}  // namespace kf
