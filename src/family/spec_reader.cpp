#include "family/spec_reader.hpp"

#include <algorithm>

namespace kf::detail {

namespace fs = std::filesystem;

bool is_define_suffix(const std::string& s) {
  return !s.empty() &&
         std::all_of(s.begin(), s.end(), [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_'; });
}

std::string child(const std::string& ptr, const std::string& key) {
  std::string escaped;
  for (char ch : key) {
    if (ch == '~') escaped += "~0";
    else if (ch == '/') escaped += "~1";
    else escaped += ch;
  }
  return ptr + "/" + escaped;
}
std::string child(const std::string& ptr, size_t index) { return ptr + "/" + std::to_string(index); }

std::string type_name(const Json& j) {
  if (j.is_number_integer()) return "an integer";
  if (j.is_number()) return "a number";
  if (j.is_string()) return "a string";
  if (j.is_boolean()) return "a boolean";
  if (j.is_null()) return "null";
  if (j.is_array()) return "a list";
  return "an object";
}

SpecReader::SpecReader(const fs::path& spec_path)
    : file_(spec_path.string()), dir_(fs::absolute(spec_path).lexically_normal().parent_path()) {}

void SpecReader::fail(const std::string& ptr, const std::string& problem) const {
  throw SpecError(file_ + (ptr.empty() ? "" : ":" + ptr) + ": " + cut_short(problem));
}

std::string SpecReader::cut_short(const std::string& problem) {
  constexpr size_t kMax = 400;
  return problem.size() <= kMax ? problem : problem.substr(0, kMax) + "... (cut short)";
}

void SpecReader::check_keys(const Json& obj, const std::string& ptr, std::initializer_list<const char*> known) const {
  for (const auto& [key, value] : obj.items()) {
    if (!key.empty() && (key[0] == '_' || key[0] == '$')) continue;
    if (std::none_of(known.begin(), known.end(), [&](const char* k) { return key == k; })) {
      std::vector<std::string> names(known.begin(), known.end());
      fail(child(ptr, key), "unknown field '" + key + "' (known: " + join(names) + ")");
    }
  }
}

const Json& SpecReader::required(const Json& obj, const std::string& ptr, const char* key) const {
  if (!obj.contains(key)) fail(ptr.empty() ? "/" + std::string(key) : ptr, std::string("missing field '") + key + "'");
  return obj[key];
}

const Json& SpecReader::object(const Json& j, const std::string& ptr) const {
  if (!j.is_object()) fail(ptr, "expected an object, got " + type_name(j));
  return j;
}

const Json& SpecReader::list(const Json& j, const std::string& ptr, bool non_empty) const {
  if (!j.is_array() || (non_empty && j.empty()))
    fail(ptr, std::string("expected a ") + (non_empty ? "non-empty " : "") + "list, got " +
                  (j.is_array() ? "an empty list" : type_name(j)));
  return j;
}

std::string SpecReader::string(const Json& j, const std::string& ptr, bool non_empty) const {
  if (!j.is_string()) fail(ptr, "expected a string, got " + type_name(j));
  std::string s = j.get<std::string>();
  if (non_empty && s.empty()) fail(ptr, "expected a non-empty string");
  return s;
}

double SpecReader::number(const Json& j, const std::string& ptr) const {
  if (!j.is_number()) fail(ptr, "expected a number, got " + type_name(j));
  return j.get<double>();
}

int64_t SpecReader::integer(const Json& j, const std::string& ptr) const {
  if (!j.is_number_integer() || (j.is_number_unsigned() && j.get<uint64_t>() > uint64_t{INT64_MAX}))
    fail(ptr, "expected an integer, got " + (j.is_number() ? j.dump() : type_name(j)));
  return j.get<int64_t>();
}

std::string SpecReader::identifier(const Json& j, const std::string& ptr, const char* what) const {
  std::string s = string(j, ptr);
  if (!is_identifier(s)) fail(ptr, std::string(what) + " '" + s + "' is not a valid name (letters, digits, '_')");
  return s;
}

Expr SpecReader::expr(const Json& j, const std::string& ptr, const Names& known) const {
  std::string text;
  if (j.is_string()) text = j.get<std::string>();
  else if (j.is_number()) text = j.dump();
  else fail(ptr, "expected an expression (a string), got " + type_name(j));
  Expr e;
  try {
    e = Expr::parse(text);
  } catch (const ExprError& err) {
    fail(ptr, err.what());
  }
  for (const auto& name : e.identifiers())
    if (!known.has(name)) fail(ptr, "unknown name '" + name + "' in '" + text + "' (known: " + known.list() + ")");
  return e;
}

fs::path SpecReader::existing_file(const Json& j, const std::string& ptr) const {
  const std::string rel = string(j, ptr);
  const fs::path p = (dir_ / rel).lexically_normal();
  std::error_code ec;  // a name too long for the file system is "not found" too, not an exception
  if (!fs::is_regular_file(p, ec)) fail(ptr, "file not found: " + p.string());
  return p;
}

Assignment SpecReader::assignment(const Json& j, const std::string& ptr) const {
  object(j, ptr);
  Assignment a;
  for (const auto& [name, value] : j.items()) {
    const std::string vptr = child(ptr, name);
    if (value.is_string()) a[name] = value.get<std::string>();
    else if (value.is_number_integer()) a[name] = integer(value, vptr);
    else fail(vptr, "expected an int or a string, got " + type_name(value));
  }
  return a;
}

}  // namespace kf::detail
