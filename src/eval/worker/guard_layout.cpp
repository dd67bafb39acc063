#include "eval/worker/guard_layout.hpp"

#include <limits>
#include <stdexcept>
#include <string>

#include "eval/worker/guard_band.hpp"

namespace kf {

namespace {

// Sizes beyond this are refused before any rounding could wrap; no device holds 1/8 of the
// address space anyway.
constexpr size_t kMaxBytes = std::numeric_limits<size_t>::max() / 8;

size_t round_up(size_t n, size_t unit) { return (n + unit - 1) / unit * unit; }

void check_size(size_t bytes) {
  if (bytes > kMaxBytes)
    throw std::length_error("guarded buffer of " + std::to_string(bytes) + " bytes is larger than any device");
}

}  // namespace

GuardLayout unmapped_guard_layout(size_t bytes, size_t granularity) {
  if (granularity == 0 || (granularity & (granularity - 1)) != 0 || granularity % kGuardAlign != 0)
    throw std::invalid_argument("allocation granularity " + std::to_string(granularity) +
                                " is not a power of two multiple of " + std::to_string(kGuardAlign));
  check_size(bytes);
  GuardLayout l;
  l.buffer_bytes = bytes;
  const size_t padded = round_up(bytes, kGuardAlign);
  l.map_bytes = round_up(padded + 2 * kGuardBytes, granularity);
  l.after_bytes = kGuardBytes + (padded - bytes);
  l.before_bytes = l.map_bytes - padded - kGuardBytes;
  // Unmapped on each side: the buffer's size plus a granule, so that even an index off by a
  // whole buffer length lands there.
  l.map_offset = round_up(bytes, granularity) + granularity;
  l.reserve_bytes = 2 * l.map_offset + l.map_bytes;
  return l;
}

GuardLayout plain_guard_layout(size_t bytes) {
  check_size(bytes);
  GuardLayout l;
  l.buffer_bytes = bytes;
  l.before_bytes = kGuardBytes;
  l.after_bytes = kGuardBytes;
  l.map_bytes = bytes + 2 * kGuardBytes;
  return l;
}

}  // namespace kf
