// Where a guarded buffer lies in its allocation (eval/worker/guard_band.hpp says what the bands
// are for). Two layouts: between unmapped address space (the driver's virtual-memory API maps
// only the middle of a larger reservation), and the plain allocation used where the device or
// driver has no virtual-memory support. Arithmetic only, no CUDA, so it is unit-tested.
//
//   reservation:  [ unmapped | before band | buffer | after band | unmapped ]
//                            ^ map_offset  ^ buffer_offset()       ^ map_offset + map_bytes
//
// The mapped part is a whole number of granules, so it cannot end exactly at the buffer's
// guard: the slack goes into the before band, and the after band is kGuardBytes plus the
// rounding of the buffer to 256 bytes, so a write a little past the end changes the pattern and
// one further out hits unmapped memory and faults. The bands cover all of the mapped part
// outside the buffer, so no write into mapped memory goes unchecked.
#pragma once
#include <cstddef>

namespace kf {

struct GuardLayout {
  size_t reserve_bytes = 0;  // address space reserved; 0 for a plain allocation
  size_t map_offset = 0;     // start of the accessible part in the reservation
  size_t map_bytes = 0;      // the accessible part: before band, buffer, after band
  size_t before_bytes = 0;   // the band before the buffer (the buffer's offset in the accessible part)
  size_t buffer_bytes = 0;
  size_t after_bytes = 0;    // from the buffer's end to the accessible part's end

  size_t buffer_offset() const { return map_offset + before_bytes; }  // in the reservation
  size_t unmapped_after() const { return reserve_bytes ? reserve_bytes - map_offset - map_bytes : 0; }
};

// Alignment of the buffer's start (and of its padded end): more than TMA's 16 bytes, as much
// as cudaMalloc gives.
inline constexpr size_t kGuardAlign = 256;

// The buffer of `bytes` mapped between guard bands in granules of `granularity` (a power of two
// and a multiple of kGuardAlign), with unmapped address space of at least the buffer's size
// plus one granule on each side: a write up to that far past the after band (or before the
// before band) faults. Throws std::invalid_argument for a bad granularity and
// std::length_error for a size whose layout would overflow.
GuardLayout unmapped_guard_layout(size_t bytes, size_t granularity);

// The fallback: one allocation of kGuardBytes, the buffer, kGuardBytes. Throws std::length_error.
GuardLayout plain_guard_layout(size_t bytes);

}  // namespace kf
