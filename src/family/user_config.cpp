#include "family/user_config.hpp"
#include "util/text.hpp"

#include <cctype>

namespace kf {

namespace {

}  // namespace

Config parse_user_config(const Family& f, const std::string& text) {
  const Config given = parse_assignment(text);
  Config c;
  if (!f.defaults.empty()) c = f.defaults.front();
  for (const auto& p : f.params)
    if (!c.count(p.name) && !p.values.empty()) c.emplace(p.name, p.values.front());
  for (const auto& [name, value] : given) c[name] = value;
  return validate_config(f, c);  // an unknown name or a value outside its domain fails here
}

void check_defines(const Family& f, const Assignment& defines) {
  for (const auto& [name, value] : defines) {
    if (!is_identifier(name))
      throw SpecError("define '" + name + "' is not an identifier (letters, digits, '_')");
    const std::string key = to_upper(name);
    for (const auto& p : f.params)
      if (to_upper(p.name) == key)
        throw SpecError("define '" + name + "' is a parameter of " + f.name + ": give it in --config");
    for (const auto& d : f.dims)
      if (to_upper(d.name) == key) throw SpecError("define '" + name + "' is a dimension of " + f.name);
    if (const auto* s = std::get_if<std::string>(&value); s && !is_identifier(*s))
      throw SpecError("define '" + name + "': value '" + *s + "' is neither an integer nor an identifier");
  }
}

Assignment parse_defines(const Family& f, const std::vector<std::string>& args) {
  Assignment out;
  for (const auto& a : args)
    for (auto& [name, value] : parse_assignment(a))
      if (!out.emplace(name, value).second) throw SpecError("define '" + name + "' given twice");
  check_defines(f, out);
  return out;
}

UserVariant parse_user_variant(const Family& f, const std::string& text, const std::function<Config()>& best) {
  UserVariant v;
  v.text = text;
  const size_t semi = text.find(';');
  if (semi != std::string::npos) v.defines = parse_defines(f, {text.substr(semi + 1)});
  const std::string config_text = trim(text.substr(0, semi));
  const size_t comma = config_text.find(',');
  if (trim(config_text.substr(0, comma)) != "best") {
    v.config = parse_user_config(f, config_text);
    return v;
  }
  Config c = best();
  if (comma != std::string::npos)
    for (const auto& [name, value] : parse_assignment(config_text.substr(comma + 1))) c[name] = value;
  v.config = validate_config(f, c);
  return v;
}

}  // namespace kf
