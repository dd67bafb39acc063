// Seeded mutations of JSON documents for the fuzz tests of specs (test_spec_fuzz.cpp) and
// imports (test_import_fuzz.cpp): structural ones on the parsed tree (delete, duplicate, retype,
// replace by an extreme value) and textual ones that no JSON tree can hold (a number overflow,
// nesting deeper than any recursion should follow, a file cut short).
#pragma once
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace json_mutate {

inline std::string escape_token(const std::string& key) {
  std::string out;
  for (char c : key) out += c == '~' ? std::string("~0") : c == '/' ? std::string("~1") : std::string(1, c);
  return out;
}

// JSON pointers of every node below the root.
inline void collect_pointers(const nlohmann::json& j, const std::string& at, std::vector<std::string>& out) {
  if (!at.empty()) out.push_back(at);
  if (j.is_object())
    for (const auto& [k, v] : j.items()) collect_pointers(v, at + "/" + escape_token(k), out);
  if (j.is_array())
    for (size_t i = 0; i < j.size(); ++i) collect_pointers(j[i], at + "/" + std::to_string(i), out);
}

// A placeholder string that expand_placeholders turns into text no tree can hold.
inline const char* const kDeep = "@@deep-nesting@@";
inline const char* const kOverflow = "@@number-overflow@@";

// One random mutation of j, in place; `extremes` are the values a node may be replaced by.
inline void mutate(nlohmann::json& j, std::mt19937_64& rng, const std::vector<nlohmann::json>& extremes) {
  std::vector<std::string> pointers;
  collect_pointers(j, "", pointers);
  if (pointers.empty()) return;
  const nlohmann::json::json_pointer at(pointers[rng() % pointers.size()]);
  nlohmann::json& parent = j[at.parent_pointer()];
  const std::string key = at.back();
  switch (rng() % 4) {
    case 0:  // delete
      if (parent.is_object()) parent.erase(key);
      else if (parent.is_array()) parent.erase(parent.begin() + static_cast<long>(std::stoul(key)));
      break;
    case 1:  // duplicate
      if (parent.is_array()) parent.push_back(j[at]);
      else if (parent.is_object()) parent[key + "_dup"] = j[at];
      break;
    case 2: {  // retype: a value of another JSON type
      const nlohmann::json& v = j[at];
      if (v.is_string()) j[at] = 7;
      else if (v.is_number()) j[at] = std::to_string(v.get<double>());
      else if (v.is_array()) j[at] = nlohmann::json::object();
      else if (v.is_object()) j[at] = nlohmann::json::array();
      else j[at] = "null";
      break;
    }
    default:
      j[at] = extremes[rng() % extremes.size()];
  }
}

// The text of j with the placeholders expanded: 1e400 (beyond a double) or a 30-digit integer
// (beyond an int64) for kOverflow, 100,000 nested lists for kDeep.
inline std::string expand_placeholders(std::string text, std::mt19937_64& rng) {
  const auto replace_all = [&](const std::string& from, const std::string& to) {
    for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
      text.replace(at, from.size(), to);
  };
  replace_all("\"" + std::string(kOverflow) + "\"", rng() % 2 ? "-1e400" : "123456789012345678901234567890");
  replace_all("\"" + std::string(kDeep) + "\"", std::string(100000, '[') + std::string(100000, ']'));
  return text;
}

// Textual mutations of a document's text: sometimes a number replaced by an overflowing one,
// sometimes the text cut short.
inline std::string mutate_text(std::string text, std::mt19937_64& rng) {
  if (rng() % 6 == 0) {
    std::vector<size_t> numbers;
    for (size_t i = 1; i < text.size(); ++i)
      if (std::isdigit(static_cast<unsigned char>(text[i])) && (text[i - 1] == ' ' || text[i - 1] == ':' || text[i - 1] == '['))
        numbers.push_back(i);
    if (!numbers.empty()) text.insert(numbers[rng() % numbers.size()], rng() % 2 ? "1e400" : "9e999, ");
  }
  if (rng() % 8 == 0) text.resize(rng() % (text.size() + 1));
  return text;
}

inline void expect_one_line(const std::string& msg, const std::string& what) {
  EXPECT_EQ(msg.find('\n'), std::string::npos) << what << ": " << msg.substr(0, 300);
  EXPECT_LT(msg.size(), 2000u) << what << ": " << msg.substr(0, 300);
}

}  // namespace json_mutate
