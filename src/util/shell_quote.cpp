#include "util/shell_quote.hpp"

#include <cctype>
#include <cstring>

namespace kf {

std::string shell_quote(const std::string& word) {
  const auto plain = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || (c != '\0' && std::strchr("_@%+=:,./-", c));
  };
  bool safe = !word.empty();
  for (char c : word) safe = safe && plain(c);
  if (safe) return word;
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace kf
