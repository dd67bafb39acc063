// T4 "Open Autotuning Results" files: {"schema_version", "results": [{"configuration": {...},
// "invalidity": "correct" | "compile" | "runtime" | "timeout" | "correctness" | "constraints",
// "measurements": [{"name": "time", "value": ..., "unit": "ms"}], "times": {...}}]}.
#include <algorithm>
#include <cmath>

#include "importers/import.hpp"
#include "importers/tuner_values.hpp"

namespace kf {

namespace {

using json = nlohmann::ordered_json;

double unit_to_us(const std::string& unit) {
  if (unit.empty() || unit == "ms") return 1e3;  // Kernel Tuner writes "" for its ms times
  if (unit == "s") return 1e6;
  if (unit == "us") return 1.0;
  if (unit == "ns") return 1e-3;
  throw ImportError("unknown time unit '" + unit + "'");
}

std::optional<double> time_us_of(const json& result) {
  if (result.value("invalidity", std::string()) != "correct") return std::nullopt;
  auto m = result.find("measurements");
  if (m == result.end() || !m->is_array()) return std::nullopt;
  for (const auto& meas : *m) {
    if (meas.value("name", std::string()) != "time") continue;
    const json& v = meas.at("value");
    double value = 0;
    if (v.is_number()) {
      value = v.get<double>();
    } else if (v.is_array() && !v.empty() &&
               std::all_of(v.begin(), v.end(), [](const json& x) { return x.is_number(); })) {
      for (const auto& x : v) value += x.get<double>();  // repeated runs: their mean
      value /= static_cast<double>(v.size());
    } else {
      return std::nullopt;  // an error string in place of a time
    }
    if (!std::isfinite(value) || value < 0) return std::nullopt;
    return value * unit_to_us(meas.value("unit", std::string()));
  }
  return std::nullopt;
}

RecordedSpace import_results(const json& j, const std::string& name) {
  if (!j.is_object() || !j.contains("results") || !j.at("results").is_array())
    throw ImportError("not a T4 results file (needs a results array)");
  std::vector<ParamSpec> params;
  std::vector<RecordedPoint> points;
  for (const auto& r : j.at("results")) {
    const json& conf = r.at("configuration");
    if (!conf.is_object()) throw ImportError("a result's configuration is not an object");
    if (params.empty() && points.empty())
      for (const auto& [k, v] : conf.items()) params.push_back({k, {}});
    Config c;
    for (const auto& [k, v] : conf.items()) {
      auto p = std::find_if(params.begin(), params.end(), [&](const ParamSpec& s) { return s.name == k; });
      if (p == params.end()) throw ImportError("configuration has an unexpected parameter '" + k + "'");
      Value value = import_detail::tuner_value(v);
      if (std::find(p->values.begin(), p->values.end(), value) == p->values.end())
        p->values.push_back(value);
      c[k] = std::move(value);
    }
    const auto time = time_us_of(r);
    points.push_back({std::move(c), time, time ? "" : r.value("invalidity", std::string())});
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

RecordedSpace import_t4(const json& j, const std::string& name) {
  try {
    return import_results(j, name);
  } catch (const nlohmann::json::exception& e) {
    throw ImportError(std::string("malformed T4 results: ") + e.what());
  } catch (const std::invalid_argument& e) {
    throw ImportError(e.what());
  }
}

}  // namespace kf
