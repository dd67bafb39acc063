// Guard bands: every buffer the worker hands a kernel sits between two bands of a known byte
// pattern, and inputs have a host copy. After a launch the bands and inputs are compared with
// what they must hold, so a write past a buffer's end (or before its start) and a kernel that
// modifies its inputs fail the gate even when every output element is right. Beyond the bands
// lies unmapped address space where the driver allows it (eval/worker/guard_layout.hpp), so a
// write further out faults instead of landing unseen in another allocation. No CUDA here.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kf {

// The least band on each side of a buffer (a page); a multiple of 256 keeps the buffer as
// aligned as cudaMalloc's. A band may be longer (guard_layout.hpp).
inline constexpr size_t kGuardBytes = 4096;

enum class GuardSide { Before, After };

// The first `bytes` of a band's pattern: pseudo-random bytes (no zero or 0xFF runs a kernel
// would write by accident), different on the two sides; a shorter band's pattern is a prefix
// of a longer one's.
std::vector<unsigned char> guard_pattern(GuardSide side, size_t bytes);

// Where a band differs from its pattern: byte indices within the band.
struct ByteDamage {
  size_t first = 0, last = 0;  // first and last differing byte
  size_t changed = 0;          // how many differ
};
std::optional<ByteDamage> find_damage(const unsigned char* seen, const unsigned char* expected, size_t n);

// "out-of-bounds write: buffer y (4004 bytes, 4-byte elements): 8 bytes changed past its end,
// at byte offsets 4004..4011 (elements [1001]..[1002])". `d` indexes the band, which is
// band_bytes long; the offsets reported are relative to the buffer's start (negative before it).
std::string describe_guard_damage(GuardSide side, const ByteDamage& d, const std::string& buffer,
                                  size_t buffer_bytes, size_t element_bytes, size_t band_bytes);

// "input x was modified by the kernel: 4 of 4004 bytes changed, first at byte offset 8 (element [2])".
std::string describe_input_change(const ByteDamage& d, const std::string& buffer, size_t buffer_bytes,
                                  size_t element_bytes);

}  // namespace kf
