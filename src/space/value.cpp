// Values and assignments: canonical text, parsing and JSON conversion.
#include "space/value.hpp"
#include "util/text.hpp"

#include <charconv>
#include <limits>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace kf {

namespace {


// An optional sign followed by decimal digits, fitting in int64.
bool parse_int64(const std::string& s, int64_t& out) {
  if (s.empty()) return false;
  const char* first = s.data();
  const char* last = s.data() + s.size();
  if (*first == '+') ++first;  // from_chars rejects a leading '+'
  if (first == last) return false;
  auto [ptr, ec] = std::from_chars(first, last, out);
  return ec == std::errc() && ptr == last;
}

}  // namespace

std::string to_string(const Value& v) {
  if (const auto* i = std::get_if<int64_t>(&v)) return std::to_string(*i);
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  // Shortest text that reads back to the same double; keep a '.' so it never looks like an int.
  const double d = std::get<double>(v);
  char buf[64];
  auto [ptr, ec] = std::to_chars(buf, buf + sizeof buf, d);
  std::string text(buf, ec == std::errc() ? ptr : buf);
  if (text.find_first_not_of("-0123456789") == std::string::npos) text += ".0";
  return text;
}

std::string to_string(const Assignment& a) {
  std::string out;
  for (const auto& [name, value] : a) {
    if (!out.empty()) out += ',';
    out += name;
    out += '=';
    out += to_string(value);
  }
  return out;
}

Assignment parse_assignment(const std::string& text) {
  Assignment out;
  if (trim(text).empty()) return out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    const std::string item = trim(std::string_view(text).substr(start, comma - start));
    const size_t eq = item.find('=');
    if (eq == std::string::npos)
      throw std::invalid_argument("expected NAME=VALUE, got '" + item + "' in '" + text + "'");
    const std::string name = trim(std::string_view(item).substr(0, eq));
    const std::string value = trim(std::string_view(item).substr(eq + 1));
    if (name.empty()) throw std::invalid_argument("missing name before '=' in '" + text + "'");
    if (value.empty())
      throw std::invalid_argument("missing value for '" + name + "' in '" + text + "'");
    int64_t number = 0;
    Value v = parse_int64(value, number) ? Value(number) : Value(value);
    if (!out.emplace(name, std::move(v)).second)
      throw std::invalid_argument("'" + name + "' given twice in '" + text + "'");
    start = comma + 1;
  }
  return out;
}

bool is_int(const Value& v) { return std::holds_alternative<int64_t>(v); }
bool is_string(const Value& v) { return std::holds_alternative<std::string>(v); }

double as_double(const Value& v) {
  if (const auto* i = std::get_if<int64_t>(&v)) return static_cast<double>(*i);
  if (const auto* d = std::get_if<double>(&v)) return *d;
  throw std::invalid_argument("expected a number, got '" + std::get<std::string>(v) + "'");
}

int64_t as_int(const Value& v) {
  if (const auto* i = std::get_if<int64_t>(&v)) return *i;
  if (const auto* d = std::get_if<double>(&v)) {
    // Out-of-range or NaN conversion is undefined behaviour in C++, so refuse it.
    if (!(*d >= -9.2233720368547758e18 && *d < 9.2233720368547758e18))
      throw std::invalid_argument("number " + to_string(v) + " does not fit in an integer");
    return static_cast<int64_t>(*d);
  }
  throw std::invalid_argument("expected a number, got '" + std::get<std::string>(v) + "'");
}

nlohmann::json to_json(const Value& v) {
  return std::visit([](const auto& x) { return nlohmann::json(x); }, v);
}

nlohmann::json to_json(const Assignment& a) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [name, value] : a) j[name] = to_json(value);
  return j;
}

Value value_from_json(const nlohmann::json& j) {
  if (j.is_number_integer() && !j.is_number_unsigned()) return j.get<int64_t>();
  if (j.is_number_unsigned()) {
    const auto u = j.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      throw std::invalid_argument("integer " + j.dump() + " is too large");
    return static_cast<int64_t>(u);
  }
  if (j.is_number_float()) return j.get<double>();
  if (j.is_string()) return j.get<std::string>();
  throw std::invalid_argument("expected a number or a string, got " + j.dump());
}

Assignment assignment_from_json(const nlohmann::json& j) {
  if (!j.is_object()) throw std::invalid_argument("expected an object, got " + j.dump());
  Assignment out;
  for (const auto& [name, value] : j.items()) out.emplace(name, value_from_json(value));
  return out;
}

}  // namespace kf
