#include "util/hash.hpp"

#include <cstdint>
#include <cstdio>

namespace kf {

std::string content_hash(std::string_view data) {
  uint64_t a = 0xcbf29ce484222325ULL;  // FNV offset basis
  uint64_t b = 0x84222325cbf29ce4ULL;  // a second, different lane
  for (unsigned char ch : data) {
    a = (a ^ ch) * 0x100000001b3ULL;
    b = (b ^ static_cast<unsigned char>(ch + 0x5b)) * 0x100000001b3ULL;
    b ^= b >> 29;
  }
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(a),
                static_cast<unsigned long long>(b));
  return buf;
}

}  // namespace kf
