#include "eval/worker/guard_band.hpp"

#include <cinttypes>
#include <cstdio>
#include <cstring>

namespace kf {

namespace {

std::vector<unsigned char> make_pattern(uint32_t seed, size_t bytes) {
  std::vector<unsigned char> p(bytes);
  uint32_t x = seed;
  for (auto& b : p) {
    x = x * 1664525u + 1013904223u;  // LCG; the high byte is used, never 0x00 or 0xFF
    const auto v = static_cast<unsigned char>(x >> 24);
    b = v == 0x00 ? 0x5a : v == 0xff ? 0xa5 : v;
  }
  return p;
}

// Element index of a byte offset (floor division, so byte -1 is element [-1]).
long long element_of(long long byte, size_t element_bytes) {
  const auto e = static_cast<long long>(element_bytes ? element_bytes : 1);
  return byte >= 0 ? byte / e : -((-byte + e - 1) / e);
}

}  // namespace

std::vector<unsigned char> guard_pattern(GuardSide side, size_t bytes) {
  return make_pattern(side == GuardSide::Before ? 0x6b666f72u : 0x67756172u, bytes);
}

std::optional<ByteDamage> find_damage(const unsigned char* seen, const unsigned char* expected, size_t n) {
  std::optional<ByteDamage> d;
  if (n == 0 || std::memcmp(seen, expected, n) == 0) return d;  // the usual case, and bands reach 2 MiB
  for (size_t i = 0; i < n; ++i) {
    if (seen[i] == expected[i]) continue;
    if (!d) {
      d = ByteDamage{};
      d->first = i;
    }
    d->last = i;
    ++d->changed;
  }
  return d;
}

std::string describe_guard_damage(GuardSide side, const ByteDamage& d, const std::string& buffer,
                                  size_t buffer_bytes, size_t element_bytes, size_t band_bytes) {
  // Band byte i lies at buffer offset i - band_bytes before the buffer, buffer_bytes + i after it.
  const long long base = side == GuardSide::Before ? -static_cast<long long>(band_bytes)
                                                   : static_cast<long long>(buffer_bytes);
  const long long first = base + static_cast<long long>(d.first), last = base + static_cast<long long>(d.last);
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "out-of-bounds write: buffer %s (%zu bytes, %zu-byte elements): %zu bytes changed %s, at byte "
                "offsets %lld..%lld (elements [%lld]..[%lld])",
                buffer.c_str(), buffer_bytes, element_bytes, d.changed,
                side == GuardSide::Before ? "before its start" : "past its end", first, last,
                element_of(first, element_bytes), element_of(last, element_bytes));
  return buf;
}

std::string describe_input_change(const ByteDamage& d, const std::string& buffer, size_t buffer_bytes,
                                  size_t element_bytes) {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "input %s was modified by the kernel: %zu of %zu bytes changed, first at byte offset %zu "
                "(element [%zu])",
                buffer.c_str(), d.changed, buffer_bytes, d.first, d.first / (element_bytes ? element_bytes : 1));
  return buf;
}

}  // namespace kf
