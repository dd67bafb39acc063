// Checks shared by spec loading and by shapes/configs given on the command line. Internal to
// family/: each throws SpecError with the bare problem, and the caller adds where it was found.
#pragma once
#include <string>
#include <vector>

#include "family/family.hpp"

namespace kf::detail {

// "a, b, c"
std::string join(const std::vector<std::string>& names, const char* sep = ", ");

// A value of dimension d, normalized (an enum value given as a number becomes its text).
Value check_dim_value(const DimSpec& d, const Value& v);
// A value of parameter p, normalized the same way.
Value check_param_value(const ParamSpec& p, const Value& v);

// The shape checks without the "shape '...': " prefix.
Shape check_shape(const Family& f, const Shape& s);
Config check_config(const Family& f, const Config& c);

}  // namespace kf::detail
