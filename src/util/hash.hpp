#pragma once
#include <string>
#include <string_view>

namespace kf {
// 128-bit content hash (two FNV-1a 64 lanes) as 32 hex digits. Not cryptographic: it names
// cache entries and variants, where an accidental collision is what matters.
std::string content_hash(std::string_view data);
}  // namespace kf
