// Kernel Tuner cache files: {"device_name", "kernel_name", "problem_size", "tune_params_keys",
// "tune_params": {name: [values]}, "cache": {"v1,v2,...": {name: value, ..., "time": ms}}}.
#include <cmath>
#include <map>
#include <set>
#include <sstream>
#include <unordered_map>

#include "importers/import.hpp"
#include "importers/recorded_time.hpp"
#include "importers/tuner_values.hpp"

namespace kf {

namespace {

using ojson = nlohmann::ordered_json;

// Kernel Tuner's stand-in for "no time" in some versions and derived tools.
constexpr double kErrorValue = 1e20;

// The entry's time in microseconds; nullopt for a failed entry (an error string, Kernel Tuner's error value).
// Any other number must be a measurement: 0, a negative, a denormal or an infinity is refused, naming the
// entry, rather than read as the fastest config of the space or as a failure it never reported.
std::optional<double> time_us_of(const std::string& key, const ojson& entry) {
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
std::string failure_of(const ojson& entry) {
  for (const char* field : {"__error__", "time"})
    if (auto it = entry.find(field); it != entry.end() && it->is_string()) return it->get<std::string>();
  return "";
}

// The config of an entry: its key is the values' Python spellings joined by commas, in tune_params_keys
// order; an entry's own fields, where present, must say the same (a key read in another order than it was
// written would give each time to another config).
// `spelled`: per parameter, its values by their spelling in a key; `index`: parameters by name.
// (Look-ups, not searches: a cache of many entries and parameters stays linear.)
using Spellings = std::vector<std::unordered_map<std::string, Value>>;
Config entry_config(const std::string& key, const ojson& entry, const std::vector<ParamSpec>& params,
                    const Spellings& spelled, const std::unordered_map<std::string, size_t>& index) {
  Config c;
  std::vector<const ojson*> own(params.size(), nullptr);  // the entry's own fields, per parameter
  for (const auto& [field, value] : entry.items())
    if (auto it = index.find(field); it != index.end()) own[it->second] = &value;
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
    if (own[i]) {
      c[p.name] = import_detail::tuner_value(*own[i]);
      if (to_string(c[p.name]) != parts[i])
        throw ImportError("cache entry '" + key + "': its key gives '" + p.name + "' the value '" + parts[i] +
                          "' but its field says '" + to_string(c[p.name]) + "'");
      continue;
    }
    auto v = spelled[i].find(parts[i]);
    if (v == spelled[i].end())
      throw ImportError("cache entry '" + key + "': '" + parts[i] + "' is not a value of '" + p.name + "'");
    c[p.name] = v->second;
  }
  return c;
}

// A string field of the header (device_name, kernel_name), or `fallback` when absent.
std::string header_string(const ojson& j, const char* field, const std::string& fallback) {
  if (!j.contains(field)) return fallback;
  if (!j.at(field).is_string()) throw ImportError(std::string(field) + ": expected a string, got " + j.at(field).type_name());
  return j.at(field).get<std::string>();
}

RecordedSpace import_cache(const ojson& j, const std::string& name) {
  if (!j.is_object() || !j.contains("tune_params") || !j.contains("cache"))
    throw ImportError("not a Kernel Tuner cache (needs tune_params and cache)");
  const ojson& tp = j.at("tune_params");
  if (!tp.is_object()) throw ImportError("tune_params is not an object");
  std::vector<std::string> names;
  if (j.contains("tune_params_keys")) {
    const ojson& keys = j.at("tune_params_keys");
    if (!keys.is_array()) throw ImportError("tune_params_keys: expected a list of names, got " + std::string(keys.type_name()));
    for (size_t i = 0; i < keys.size(); ++i) {
      if (!keys[i].is_string())
        throw ImportError("tune_params_keys/" + std::to_string(i) + ": expected a name, got " + keys[i].type_name());
      names.push_back(keys[i].get<std::string>());
    }
    // Kernel Tuner writes list(tune_params): the same names. Any other list would key the cache by other
    // parameters than the domains describe (an empty one gives every entry the same config).
    std::set<std::string> listed(names.begin(), names.end());
    for (const auto& n : names)
      if (!tp.contains(n)) throw ImportError("tune_params_keys names '" + n + "', which tune_params lacks");
    for (const auto& [k, v] : tp.items())
      if (!listed.count(k)) throw ImportError("tune_params_keys lacks '" + k + "', a parameter of tune_params");
  } else {
    for (const auto& [k, v] : tp.items()) names.push_back(k);
  }
  if (names.empty()) throw ImportError("tune_params names no parameter");
  std::unordered_map<std::string, const ojson*> domains;
  for (const auto& [k, v] : tp.items()) domains.emplace(k, &v);
  std::vector<ParamSpec> params;
  Spellings spelled;
  std::unordered_map<std::string, size_t> index;
  for (const auto& n : names) {
    auto d = domains.find(n);
    if (d == domains.end() || !d->second->is_array() || d->second->empty())
      throw ImportError("tune_params has no values for '" + n + "'");
    if (!index.emplace(n, params.size()).second) throw ImportError("tune_params_keys names '" + n + "' twice");
    ParamSpec p{n, {}};
    std::set<Value> seen;  // a search per value would make a long domain quadratic
    spelled.emplace_back();
    for (const auto& v : *d->second) {
      Value kv = import_detail::tuner_value(v);
      if (!seen.insert(kv).second) continue;
      spelled.back().emplace(to_string(kv), kv);
      p.values.push_back(std::move(kv));
    }
    params.push_back(std::move(p));
  }
  const ojson& cache = j.at("cache");
  if (!cache.is_object()) throw ImportError("cache is not an object");
  std::vector<RecordedPoint> points;
  points.reserve(cache.size());
  std::map<std::string, std::string> key_of;  // config -> the entry that recorded it
  for (const auto& [key, entry] : cache.items()) {
    if (!entry.is_object()) throw ImportError("cache entry '" + key + "' is not an object");
    points.push_back({entry_config(key, entry, params, spelled, index), time_us_of(key, entry), failure_of(entry)});
    const auto [at, fresh] = key_of.emplace(to_string(points.back().config), key);
    if (!fresh)
      throw ImportError("cache entries '" + at->second + "' and '" + key + "' are the same config " + at->first);
  }
  nlohmann::json info = {{"format", "kernel_tuner_cache"}};
  for (const char* field : {"device_name", "kernel_name", "problem_size", "schema_version", "objective"})
    if (j.contains(field)) info[field] = nlohmann::json::parse(j.at(field).dump());
  std::string space_name = name;
  if (space_name.empty()) {
    space_name = header_string(j, "kernel_name", "kernel");
    if (const std::string device = header_string(j, "device_name", ""); !device.empty()) space_name += " on " + device;
  }
  return RecordedSpace(std::move(params), std::move(points), space_name, info);
}

}  // namespace

RecordedSpace import_kernel_tuner_cache(const ojson& j, const std::string& name) {
  try {
    return import_cache(j, name);
  } catch (const nlohmann::json::exception& e) {
    throw ImportError(std::string("malformed Kernel Tuner cache: ") + e.what());
  } catch (const std::invalid_argument& e) {
    throw ImportError(e.what());
  }
}

}  // namespace kf
