// Shell quoting for the commands kforge prints as hints ("resume with: kforge --db ... resume 3"),
// so a hint can be pasted into a shell as it is, whatever the paths in it hold.
#pragma once
#include <string>

namespace kf {

// The word unchanged when it holds only characters no POSIX shell treats specially (letters,
// digits and _ @ % + = : , . / -), else single-quoted with each ' written as '\''.
// The empty word is ''.
std::string shell_quote(const std::string& word);

}  // namespace kf
