// Small string helpers shared across the code (one definition each: the core also compiles as a unity
// build, where two files' private helpers of one name would collide).
#pragma once
#include <string>
#include <string_view>

namespace kf {

// s without leading and trailing blanks (space, tab, CR, LF).
std::string trim(std::string_view s);

// s with ASCII letters upper-cased.
std::string to_upper(std::string s);

// s up to its first newline.
std::string first_line(std::string s);

// A C identifier: a letter or '_' first, then letters, digits and '_'.
bool is_identifier(std::string_view s);

}  // namespace kf
