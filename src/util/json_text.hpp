// Reading JSON files given by users (specs, imports, baselines) with errors of one line that
// say where: the file, the line and column, and the JSON pointer of the field being read
// (nlohmann's own messages give no field, and a number overflow such as 1e400 not even a line).
#pragma once
#include <cstddef>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>

#include <nlohmann/json.hpp>

namespace kf {

// One line, starting with the file's name.
struct JsonFileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// s on one line (line breaks become spaces) and at most max_chars long ("... (cut short)"): an
// error that quotes a file's text (a key, a value) stays readable.
std::string one_line(std::string s, size_t max_chars = 400);

// The whole file, refused when it is larger than max_bytes ("<file>: the file is larger than N
// MiB (<limit_doc>)", limit_doc naming where the bound is documented) or cannot be read. `name`
// is the file as errors name it (default: path).
std::string read_bounded(const std::filesystem::path& path, size_t max_bytes, const std::string& limit_doc,
                         const std::string& name = "");

// How deep lists and objects may nest. The parser does not recurse, but copying, printing
// and comparing a tree do, once per level: 100,000 nested lists overflow the stack there.
// Real files nest a handful of levels.
inline constexpr size_t kMaxJsonDepth = 256;

// "nested deeper than 256 levels at line L, column C (at /a/0)", or "" when text nests less
// (text need not be valid JSON otherwise).
std::string json_nesting_problem(const std::string& text);

// Why text is not JSON, with where: "parse error at line 3, column 7 (at /params/BLOCK): ..." or
// "number overflow parsing '1e400' at line 2, column 12 (at /cache/1,2/time)", or nesting too
// deep; "" for valid JSON.
std::string json_problem(const std::string& text);

// Parses text into an ordered_json in time linear in its size (nlohmann's own parser searches
// an object's keys once per key: a Kernel Tuner cache of 100,000 entries took half a minute);
// keys keep their order, a repeated key its first place and its last value, as nlohmann does.
// nullopt for invalid JSON (json_problem says why). Nesting is not checked.
std::optional<nlohmann::ordered_json> parse_ordered(const std::string& text);

// Parses text (an ordered_json with parse_ordered); throws JsonFileError "<file>: invalid JSON:
// <json_problem>".
template <class J>
J parse_json_file_text(const std::string& text, const std::string& file) {
  if (std::string deep = json_nesting_problem(text); !deep.empty())
    throw JsonFileError(file + ": invalid JSON: " + deep);
  if constexpr (std::is_same_v<J, nlohmann::ordered_json>) {
    if (auto j = parse_ordered(text)) return std::move(*j);
  } else {
    J j = J::parse(text, nullptr, false);
    if (!j.is_discarded()) return j;
  }
  throw JsonFileError(file + ": invalid JSON: " + json_problem(text));
}

}  // namespace kf
