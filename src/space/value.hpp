// Values of tuning parameters and problem dimensions, and named assignments of them.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace kf {

// A parameter or dimension value: an integer, a real (only ever produced by expressions),
// or a categorical string such as "mma" or "f16".
using Value = std::variant<int64_t, double, std::string>;

// name -> value. A Config assigns the family's tuning parameters, a Shape its problem
// dimensions. Ordered, so the canonical text of an assignment is deterministic.
using Assignment = std::map<std::string, Value>;
using Config = Assignment;
using Shape = Assignment;
// Names visible to an expression: params, dims and device limits in one flat map.
using Scope = std::map<std::string, Value>;

std::string to_string(const Value& v);
// "A=1,B=mma" in key order: the canonical key used for hashing and storage.
std::string to_string(const Assignment& a);
// Parses "A=1,B=mma" (integers become int64, anything else a string). Throws std::invalid_argument.
Assignment parse_assignment(const std::string& text);

bool is_int(const Value& v);
bool is_string(const Value& v);
// Numeric view of a value; throws std::invalid_argument for strings.
double as_double(const Value& v);
int64_t as_int(const Value& v);  // truncates reals; throws for strings

nlohmann::json to_json(const Value& v);
nlohmann::json to_json(const Assignment& a);
Value value_from_json(const nlohmann::json& j);  // throws std::invalid_argument
Assignment assignment_from_json(const nlohmann::json& j);

}  // namespace kf
