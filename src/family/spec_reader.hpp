// Reading a family spec's JSON (internal to family/): typed accessors that fail with
// "<file>:<json pointer>: <problem>", and the names an expression may read.
#pragma once
#include <filesystem>
#include <initializer_list>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "family/checks.hpp"
#include "util/text.hpp"  // is_identifier

namespace kf::detail {

// Ordered, because the order of params (enumeration) and derived (evaluation) matters.
using Json = nlohmann::ordered_json;

// Categorical values become part of #define names (KF_MMA_WMMA), so they must be name-like.
bool is_define_suffix(const std::string& s);
// JSON pointers: ptr/key (escaped) and ptr/index.
std::string child(const std::string& ptr, const std::string& key);
std::string child(const std::string& ptr, size_t index);
std::string type_name(const Json& j);  // "an integer", "a list", ...

// The names an expression may read, in the order they become visible.
class Names {
 public:
  void add(const std::string& n) {
    if (set_.insert(n).second) order_.push_back(n);
  }
  bool has(const std::string& n) const { return set_.count(n) != 0; }
  std::string list() const { return order_.empty() ? "none" : join(order_); }

 private:
  std::set<std::string> set_;
  std::vector<std::string> order_;
};

class SpecReader {
 public:
  explicit SpecReader(const std::filesystem::path& spec_path);

  [[noreturn]] void fail(const std::string& ptr, const std::string& problem) const;
  // A problem quotes what the spec says, which may be a 40 KB string: the error stays readable.
  static std::string cut_short(const std::string& problem);

  // Unknown fields are typos more often than not. Keys starting with '_' or '$' are comments.
  void check_keys(const Json& obj, const std::string& ptr, std::initializer_list<const char*> known) const;
  const Json& required(const Json& obj, const std::string& ptr, const char* key) const;
  const Json& object(const Json& j, const std::string& ptr) const;
  const Json& list(const Json& j, const std::string& ptr, bool non_empty = false) const;
  std::string string(const Json& j, const std::string& ptr, bool non_empty = true) const;
  double number(const Json& j, const std::string& ptr) const;
  int64_t integer(const Json& j, const std::string& ptr) const;
  std::string identifier(const Json& j, const std::string& ptr, const char* what) const;
  // An expression: a string (or a plain number, for convenience) that parses and reads only
  // names in `known`.
  Expr expr(const Json& j, const std::string& ptr, const Names& known) const;
  // A file named relative to the spec's folder.
  std::filesystem::path existing_file(const Json& j, const std::string& ptr) const;
  // {"NAME": int or string, ...}
  Assignment assignment(const Json& j, const std::string& ptr) const;

 protected:
  std::string file_;          // as given by the caller: what the user recognises in messages
  std::filesystem::path dir_;  // the spec's folder, absolute
};

}  // namespace kf::detail
