// Shapes and configs given by users: parsing and validation against the family; suites and
// gate shapes.
#include <algorithm>
#include <optional>

#include "family/checks.hpp"

namespace kf {

namespace detail {

std::string join(const std::vector<std::string>& names, const char* sep) {
  std::string out;
  for (const auto& n : names) {
    if (!out.empty()) out += sep;
    out += n;
  }
  return out;
}

Value check_dim_value(const DimSpec& d, const Value& v) {
  if (d.is_enum) {
    // "causal=1" arrives as an integer from the command line; the enum value is the text "1".
    const std::string text = to_string(v);
    if (is_string(v) || is_int(v)) {
      if (std::find(d.choices.begin(), d.choices.end(), text) != d.choices.end()) return text;
    }
    throw SpecError(d.name + "=" + text + " is not one of " + join(d.choices));
  }
  if (!is_int(v)) throw SpecError("dimension '" + d.name + "' needs an integer, got '" + to_string(v) + "'");
  const int64_t x = std::get<int64_t>(v);
  if (x < d.min || x > d.max)
    throw SpecError(d.name + "=" + std::to_string(x) + " is out of range [" + std::to_string(d.min) + ", " +
                    std::to_string(d.max) + "]");
  return v;
}

Value check_param_value(const ParamSpec& p, const Value& v) {
  const std::string spelled = to_string(v);
  for (const auto& allowed : p.values) {
    if (allowed == v) return v;
    // A categorical value that looks like a number ("VARIANT=2") arrives as an integer.
    if (is_string(allowed) && is_int(v) && std::get<std::string>(allowed) == spelled) return allowed;
  }
  // (The domain is spelled only for the error: spelling it for every check was quadratic in a
  // long domain.)
  std::vector<std::string> domain;
  for (const auto& allowed : p.values) domain.push_back(to_string(allowed));
  throw SpecError(p.name + "=" + to_string(v) + " is not in the domain of " + p.name + " (" + join(domain) + ")");
}

Shape check_shape(const Family& f, const Shape& s) {
  std::vector<std::string> names;
  for (const auto& d : f.dims) names.push_back(d.name);
  for (const auto& [name, value] : s)
    if (!f.dim(name)) throw SpecError("unknown dimension '" + name + "' (dimensions: " + join(names) + ")");
  Shape out;
  Scope full;  // every dim, defaults filled in (a default reads only dims declared before it)
  for (const auto& d : f.dims) {
    auto it = s.find(d.name);
    std::optional<Value> fallback;
    if (!d.default_value.empty()) {
      try {
        fallback = d.default_value.eval(full);
      } catch (const ExprError& e) {
        throw SpecError("default of dimension '" + d.name + "' ('" + d.default_value.text() + "'): " + e.what());
      }
    }
    if (it == s.end() && !fallback)
      throw SpecError("missing dimension '" + d.name + "' (dimensions: " + join(names) + ")");
    const Value v = check_dim_value(d, it == s.end() ? *fallback : it->second);
    full[d.name] = v;
    if (!fallback || !(v == *fallback)) out.emplace(d.name, v);  // (at its default, the dim is left out)
  }
  for (const auto& c : f.shape_constraints) {
    bool holds = false;
    try {
      holds = c.expr.eval_bool(full);
    } catch (const ExprError& e) {
      throw SpecError("'" + c.text + "': " + e.what());
    }
    if (!holds) throw SpecError("'" + c.text + "' does not hold");
  }
  return out;
}

Config check_config(const Family& f, const Config& c) {
  std::vector<std::string> names;
  for (const auto& p : f.params) names.push_back(p.name);
  for (const auto& [name, value] : c)
    if (!f.param(name)) throw SpecError("unknown parameter '" + name + "' (parameters: " + join(names) + ")");
  Config out;
  for (const auto& p : f.params) {
    auto it = c.find(p.name);
    if (it == c.end()) throw SpecError("missing parameter '" + p.name + "'");
    out.emplace(p.name, check_param_value(p, it->second));
  }
  return out;
}

}  // namespace detail

Shape parse_shape(const Family& f, const std::string& text) {
  try {
    return detail::check_shape(f, parse_assignment(text));
  } catch (const std::exception& e) {  // std::invalid_argument from the syntax, SpecError from the checks
    throw SpecError("bad shape '" + text + "' for family " + f.name + ": " + e.what());
  }
}

Shape validate_shape(const Family& f, const Shape& s) {
  try {
    return detail::check_shape(f, s);
  } catch (const SpecError& e) {
    throw SpecError("bad shape '" + to_string(s) + "' for family " + f.name + ": " + e.what());
  }
}

Shape full_shape(const Family& f, const Shape& s) {
  Shape out = s;
  Scope scope(s.begin(), s.end());
  for (const auto& d : f.dims) {
    if (out.count(d.name) || d.default_value.empty()) continue;
    const Value v = d.default_value.eval(scope);
    out.emplace(d.name, v);
    scope[d.name] = v;
  }
  return out;
}

Config complete_stored_config(const Family& f, Config c) {
  for (const auto& p : f.params)
    if (!c.count(p.name)) c.emplace(p.name, p.values.front());
  return c;
}

Config validate_config(const Family& f, const Config& c) {
  try {
    return detail::check_config(f, c);
  } catch (const SpecError& e) {
    throw SpecError("bad config '" + to_string(c) + "' for family " + f.name + ": " + e.what());
  }
}

const std::vector<Shape>& suite_shapes(const Family& f, const std::string& suite) {
  auto it = f.suites.find(suite);
  if (it != f.suites.end()) return it->second;
  std::vector<std::string> names;
  for (const auto& [name, shapes] : f.suites) names.push_back(name);
  throw SpecError("family " + f.name + " has no suite '" + suite + "' (suites: " +
                  (names.empty() ? std::string("none") : detail::join(names)) + ")");
}

std::vector<std::pair<GateCase, Shape>> gate_shapes(const Family& f, const Shape& campaign_shape) {
  std::vector<std::pair<GateCase, Shape>> out;
  out.emplace_back(GateCase{"campaign", {}, 1.0}, campaign_shape);
  for (const auto& g : f.gate) {
    Shape s = campaign_shape;
    for (const auto& [name, value] : g.overrides) s[name] = value;
    try {
      out.emplace_back(g, detail::check_shape(f, s));
    } catch (const SpecError&) {
      // The case does not apply to this campaign shape (see family.hpp): skip it.
    }
  }
  return out;
}

}  // namespace kf
