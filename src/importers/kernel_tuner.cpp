// Kernel Tuner cache files: {"device_name", "kernel_name", "problem_size", "tune_params_keys",
// "tune_params": {name: [values]}, "cache": {"v1,v2,...": {name: value, ..., "time": ms}}}.
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "importers/import.hpp"
#include "importers/recorded_time.hpp"
#include "importers/tuner_values.hpp"

namespace kf {

namespace {

using json = nlohmann::ordered_json;

// Kernel Tuner's stand-in for "no time" in some versions and derived tools.
constexpr double kErrorValue = 1e20;

// The entry's time in microseconds; nullopt for a failed entry (an error string, Kernel Tuner's error value).
// Any other number must be a measurement: 0, a negative, a denormal or an infinity is refused, naming the
// entry, rather than read as the fastest config of the space or as a failure it never reported.
std::optional<double> time_us_of(const std::string& key, const json& entry) {
  auto it = entry.find("time");
  if (it == entry.end() || !it->is_number()) return std::nullopt;  // an error string
  const double ms = it->get<double>();
  if (std::isfinite(ms) && ms >= kErrorValue) return std::nullopt;
  const std::string bad = import_detail::bad_recorded_time(ms * 1000.0);
  if (!bad.empty())
    throw ImportError("cache entry '" + key + "': time " + import_detail::time_text(ms) + " ms is " + bad +
                      " (not a measurement)");
  return ms * 1000.0;
}

// Kernel Tuner marks a failed entry with an error string: "__error__" in current versions,
// the time itself in older ones.
std::string failure_of(const json& entry) {
  for (const char* field : {"__error__", "time"})
    if (auto it = entry.find(field); it != entry.end() && it->is_string()) return it->get<std::string>();
  return "";
}

// The config of an entry: its key is the values' Python spellings joined by commas, in tune_params_keys
// order; an entry's own fields, where present, must say the same (a key read in another order than it was
// written would give each time to another config).
Config entry_config(const std::string& key, const json& entry, const std::vector<ParamSpec>& params) {
  Config c;
  std::vector<std::string> parts;
  {
    std::stringstream ss(key);
    for (std::string part; std::getline(ss, part, ',');) parts.push_back(part);
    if (!key.empty() && key.back() == ',') parts.push_back("");
  }
  if (parts.size() != params.size())
    throw ImportError("cache entry '" + key + "': its key has " + std::to_string(parts.size()) + " values for " +
                      std::to_string(params.size()) + " parameters (tune_params_keys)");
  for (size_t i = 0; i < params.size(); ++i) {
    const auto& p = params[i];
    auto it = entry.find(p.name);
    if (it != entry.end()) {
      c[p.name] = import_detail::tuner_value(*it);
      if (to_string(c[p.name]) != parts[i])
        throw ImportError("cache entry '" + key + "': its key gives '" + p.name + "' the value '" + parts[i] +
                          "' but its field says '" + to_string(c[p.name]) + "'");
      continue;
    }
    bool found = false;
    for (const auto& v : p.values) {
      if (to_string(v) == parts[i]) {
        c[p.name] = v;
        found = true;
        break;
      }
    }
    if (!found)
      throw ImportError("cache entry '" + key + "': '" + parts[i] + "' is not a value of '" + p.name + "'");
  }
  return c;
}

RecordedSpace import_cache(const json& j, const std::string& name) {
  if (!j.is_object() || !j.contains("tune_params") || !j.contains("cache"))
    throw ImportError("not a Kernel Tuner cache (needs tune_params and cache)");
  const json& tp = j.at("tune_params");
  if (!tp.is_object()) throw ImportError("tune_params is not an object");
  std::vector<std::string> names;
  if (j.contains("tune_params_keys")) {
    // Kernel Tuner writes list(tune_params): the same names. Any other list would key the cache by other
    // parameters than the domains describe (an empty one gives every entry the same config).
    std::set<std::string> listed;
    for (const auto& k : j.at("tune_params_keys")) {
      names.push_back(k.get<std::string>());
      if (!tp.contains(names.back()))
        throw ImportError("tune_params_keys names '" + names.back() + "', which tune_params lacks");
      if (!listed.insert(names.back()).second)
        throw ImportError("tune_params_keys names '" + names.back() + "' twice");
    }
    for (const auto& [k, v] : tp.items())
      if (!listed.count(k)) throw ImportError("tune_params_keys lacks '" + k + "', a parameter of tune_params");
  } else {
    for (const auto& [k, v] : tp.items()) names.push_back(k);
  }
  if (names.empty()) throw ImportError("tune_params names no parameter");
  std::vector<ParamSpec> params;
  for (const auto& n : names) {
    if (!tp.contains(n) || !tp.at(n).is_array() || tp.at(n).empty())
      throw ImportError("tune_params has no values for '" + n + "'");
    ParamSpec p{n, {}};
    for (const auto& v : tp.at(n)) {
      Value kv = import_detail::tuner_value(v);
      bool dup = false;
      for (const auto& have : p.values) dup = dup || have == kv;
      if (!dup) p.values.push_back(std::move(kv));
    }
    params.push_back(std::move(p));
  }
  const json& cache = j.at("cache");
  if (!cache.is_object()) throw ImportError("cache is not an object");
  std::vector<RecordedPoint> points;
  points.reserve(cache.size());
  std::map<std::string, std::string> key_of;  // config -> the entry that recorded it
  for (const auto& [key, entry] : cache.items()) {
    if (!entry.is_object()) throw ImportError("cache entry '" + key + "' is not an object");
    points.push_back({entry_config(key, entry, params), time_us_of(key, entry), failure_of(entry)});
    const auto [at, fresh] = key_of.emplace(to_string(points.back().config), key);
    if (!fresh)
      throw ImportError("cache entries '" + at->second + "' and '" + key + "' are the same config " + at->first);
  }
  nlohmann::json info = {{"format", "kernel_tuner_cache"}};
  for (const char* field : {"device_name", "kernel_name", "problem_size", "schema_version", "objective"})
    if (j.contains(field)) info[field] = nlohmann::json::parse(j.at(field).dump());
  std::string space_name = name;
  if (space_name.empty()) {
    space_name = j.value("kernel_name", std::string("kernel"));
    if (j.contains("device_name") && !j.at("device_name").get<std::string>().empty())
      space_name += " on " + j.at("device_name").get<std::string>();
  }
  return RecordedSpace(std::move(params), std::move(points), space_name, info);
}

}  // namespace

RecordedSpace import_kernel_tuner_cache(const json& j, const std::string& name) {
  try {
    return import_cache(j, name);
  } catch (const nlohmann::json::exception& e) {
    throw ImportError(std::string("malformed Kernel Tuner cache: ") + e.what());
  } catch (const std::invalid_argument& e) {
    throw ImportError(e.what());
  }
}

}  // namespace kf
