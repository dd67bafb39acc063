// T4 "Open Autotuning Results" files: {"schema_version", "results": [{"configuration": {...},
// "invalidity": "correct" | "compile" | "runtime" | "timeout" | "correctness" | "constraints",
// "measurements": [{"name": "time", "value": ..., "unit": "ms"}], "times": {...}}]}.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "importers/import.hpp"
#include "importers/tuner_values.hpp"

namespace kf {

namespace {

using ojson = nlohmann::ordered_json;

double unit_to_us(const std::string& unit) {
  if (unit.empty() || unit == "ms") return 1e3;  // Kernel Tuner writes "" for its ms times
  if (unit == "s") return 1e6;
  if (unit == "us") return 1.0;
  if (unit == "ns") return 1e-3;
  throw ImportError("unknown time unit '" + unit + "'");
}

// A string field of an object, "" when absent; `where` names the object in the error.
std::string text_field(const ojson& obj, const char* field, const std::string& where) {
  auto it = obj.find(field);
  if (it == obj.end()) return "";
  if (!it->is_string()) throw ImportError(where + "/" + field + ": expected a string, got " + it->type_name());
  return it->get<std::string>();
}

std::optional<double> time_us_of(const ojson& result, const std::string& where) {
  if (text_field(result, "invalidity", where) != "correct") return std::nullopt;
  auto m = result.find("measurements");
  if (m == result.end() || !m->is_array()) return std::nullopt;
  for (size_t i = 0; i < m->size(); ++i) {
    const ojson& meas = (*m)[i];
    const std::string mwhere = where + "/measurements/" + std::to_string(i);
    if (!meas.is_object()) throw ImportError(mwhere + ": expected an object, got " + meas.type_name());
    if (text_field(meas, "name", mwhere) != "time") continue;
    if (!meas.contains("value")) throw ImportError(mwhere + ": the time has no value");
    const ojson& v = meas.at("value");
    double value = 0;
    if (v.is_number()) {
      value = v.get<double>();
    } else if (v.is_array() && !v.empty() &&
               std::all_of(v.begin(), v.end(), [](const ojson& x) { return x.is_number(); })) {
      for (const auto& x : v) value += x.get<double>();  // repeated runs: their mean
      value /= static_cast<double>(v.size());
    } else {
      return std::nullopt;  // an error string in place of a time
    }
    if (!std::isfinite(value) || value < 0) return std::nullopt;
    try {
      return value * unit_to_us(text_field(meas, "unit", mwhere));
    } catch (const ImportError& e) {
      throw ImportError(mwhere + "/unit: " + e.what());
    }
  }
  return std::nullopt;
}

RecordedSpace import_results(const ojson& j, const std::string& name) {
  if (!j.is_object() || !j.contains("results") || !j.at("results").is_array())
    throw ImportError("not a T4 results file (needs a results array)");
  std::vector<ParamSpec> params;
  std::vector<RecordedPoint> points;
  // Look-ups by name and by value, so that a file of many results and values stays linear.
  std::map<std::string, size_t> index;
  std::vector<std::set<Value>> seen;
  const ojson& results = j.at("results");
  for (size_t i = 0; i < results.size(); ++i) {
    const ojson& r = results[i];
    const std::string where = "results/" + std::to_string(i);
    if (!r.is_object()) throw ImportError(where + ": expected an object, got " + r.type_name());
    if (!r.contains("configuration")) throw ImportError(where + ": no configuration");
    const ojson& conf = r.at("configuration");
    if (!conf.is_object()) throw ImportError(where + "/configuration: expected an object, got " + conf.type_name());
    if (params.empty() && points.empty())
      for (const auto& [k, v] : conf.items()) {
        index.emplace(k, params.size());
        params.push_back({k, {}});
      }
    seen.resize(params.size());
    Config c;
    for (const auto& [k, v] : conf.items()) {
      auto p = index.find(k);
      if (p == index.end())
        throw ImportError(where + "/configuration: an unexpected parameter '" + k + "' (the first result has not)");
      Value value = import_detail::tuner_value(v);
      if (seen[p->second].insert(value).second) params[p->second].values.push_back(value);
      c[k] = std::move(value);
    }
    const auto time = time_us_of(r, where);
    points.push_back({std::move(c), time, time ? "" : text_field(r, "invalidity", where)});
  }
  if (points.empty()) throw ImportError("the results array is empty");
  for (auto& p : params) {
    bool ints = std::all_of(p.values.begin(), p.values.end(), [](const Value& v) { return is_int(v); });
    if (ints)
      std::sort(p.values.begin(), p.values.end(),
                [](const Value& a, const Value& b) { return std::get<int64_t>(a) < std::get<int64_t>(b); });
  }
  nlohmann::json info = {{"format", "t4"}};
  if (j.contains("schema_version")) info["schema_version"] = nlohmann::json::parse(j.at("schema_version").dump());
  if (j.contains("metadata")) info["metadata"] = nlohmann::json::parse(j.at("metadata").dump());
  return RecordedSpace(std::move(params), std::move(points), name.empty() ? "t4" : name, info);
}

}  // namespace

RecordedSpace import_t4(const ojson& j, const std::string& name) {
  try {
    return import_results(j, name);
  } catch (const nlohmann::json::exception& e) {
    throw ImportError(std::string("malformed T4 results: ") + e.what());
  } catch (const std::invalid_argument& e) {
    throw ImportError(e.what());
  }
}

}  // namespace kf
