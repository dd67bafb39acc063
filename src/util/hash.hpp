#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace kf {
// 128-bit content hash (two FNV-1a 64 lanes) as 32 hex digits. Not cryptographic: it names
// cache entries and variants, where an accidental collision is what matters.
std::string content_hash(std::string_view data);

// SplitMix64's finalizer: a well-mixed 64-bit value from any 64-bit input, for deriving
// independent random streams from a user's seed (strategies, input buffers).
inline uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
}  // namespace kf
