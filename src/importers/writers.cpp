// Kernel Tuner cache and T4 writers; field meanings follow Kernel Tuner's own writers
// (util.store_cache, file_utils.get_t4_results).
#include "importers/writers.hpp"

#include <cmath>
#include <map>

namespace kf {

namespace {

using ojson = nlohmann::ordered_json;

// Kernel Tuner keys a config by str() of each value; integers and strings print the same way.
std::string python_spelling(const Value& v) {
  if (std::holds_alternative<double>(v)) {
    const double d = std::get<double>(v);
    if (std::floor(d) == d && std::fabs(d) < 1e15) return to_string(v) + ".0";
  }
  return to_string(v);
}

ojson value_json(const Value& v) {
  if (std::holds_alternative<int64_t>(v)) return std::get<int64_t>(v);
  if (std::holds_alternative<double>(v)) return std::get<double>(v);
  return std::get<std::string>(v);
}

std::string cache_key(const ResultTable& t, const Config& c) {
  std::string key;
  for (const auto& p : t.params) {
    auto it = c.find(p.name);
    if (it == c.end()) throw std::invalid_argument("result config lacks parameter '" + p.name + "'");
    key += (key.empty() ? "" : ",") + python_spelling(it->second);
  }
  return key;
}

bool better(const ResultRow& a, const ResultRow& b) {
  if (a.time_us && b.time_us) return *a.time_us < *b.time_us;
  return a.time_us.has_value() && !b.time_us.has_value();
}

// One row per config: the fastest ok result, else the newest failure. Sorted by cache key
// (std::map), so the file does not depend on evaluation order.
std::map<std::string, const ResultRow*> distinct_rows(const ResultTable& t) {
  std::map<std::string, const ResultRow*> out;
  for (const auto& r : t.rows) {
    if (r.status == Status::Interrupted) continue;
    const std::string key = cache_key(t, r.config);
    auto [it, fresh] = out.emplace(key, &r);
    if (!fresh && (better(r, *it->second) || (!it->second->time_us && !r.time_us))) it->second = &r;
  }
  return out;
}

}  // namespace

std::string kernel_tuner_error(Status s) {
  switch (s) {
    case Status::Ok: return "";
    case Status::Invalid: return "InvalidConfig";
    case Status::CompileError: return "CompilationFailedConfig";
    default: return "RuntimeFailedConfig";
  }
}

std::string t4_invalidity(Status s) {
  switch (s) {
    case Status::Ok: return "correct";
    case Status::Invalid: return "constraints";
    case Status::CompileError: return "compile";
    case Status::WrongResult: return "correctness";
    case Status::Timeout: return "timeout";
    default: return "runtime";
  }
}

ojson kernel_tuner_cache(const ResultTable& t) {
  ojson tune_params = ojson::object();
  ojson keys = ojson::array();
  for (const auto& p : t.params) {
    keys.push_back(p.name);
    ojson values = ojson::array();
    for (const auto& v : p.values) values.push_back(value_json(v));
    tune_params[p.name] = values;
  }
  ojson cache = ojson::object();
  for (const auto& [key, row] : distinct_rows(t)) {
    ojson entry = ojson::object();
    for (const auto& p : t.params) entry[p.name] = value_json(row->config.at(p.name));
    const std::string error = row->time_us ? "" : kernel_tuner_error(row->status == Status::Ok ? Status::RuntimeFault : row->status);
    if (error.empty()) {
      entry["time"] = *row->time_us / 1000.0;
      entry["times"] = ojson::array({*row->time_us / 1000.0});
    } else {
      entry["time"] = error;
      entry["__error__"] = error;
    }
    entry["compile_time"] = row->compile_ms;
    entry["verification_time"] = 0;
    entry["benchmark_time"] = row->benchmark_ms;
    entry["strategy_time"] = 0;
    entry["framework_time"] = 0;
    if (!row->timestamp.empty()) entry["timestamp"] = row->timestamp;
    cache[key] = std::move(entry);
  }
  ojson problem_size = ojson::array();
  for (int64_t d : t.problem_size) problem_size.push_back(d);
  return ojson{{"schema_version", "1.0.0"},
               {"device_name", t.device_name},
               {"kernel_name", t.kernel_name},
               {"problem_size", problem_size},
               {"tune_params_keys", keys},
               {"tune_params", tune_params},
               {"objective", "time"},
               {"kforge", ojson::parse(t.provenance.dump())},
               {"cache", cache}};
}

ojson t4_results(const ResultTable& t) {
  ojson results = ojson::array();
  for (const auto& [key, row] : distinct_rows(t)) {
    ojson configuration = ojson::object();
    for (const auto& p : t.params) configuration[p.name] = value_json(row->config.at(p.name));
    const bool ok = row->time_us.has_value();
    ojson r = ojson::object();
    if (!row->timestamp.empty()) r["timestamp"] = row->timestamp;
    r["configuration"] = std::move(configuration);
    r["objectives"] = ojson::array({"time"});
    ojson times = {{"compilation_time", row->compile_ms}, {"validation", 0},
                   {"framework", 0}, {"search_algorithm", 0}};
    if (ok) times["runtimes"] = ojson::array({*row->time_us / 1000.0});
    r["times"] = std::move(times);
    r["invalidity"] = ok ? std::string("correct") : t4_invalidity(row->status == Status::Ok ? Status::RuntimeFault : row->status);
    r["correctness"] = ok ? 1 : 0;
    r["measurements"] = ok ? ojson::array({{{"name", "time"}, {"value", *row->time_us / 1000.0}, {"unit", "ms"}}})
                           : ojson::array();
    results.push_back(std::move(r));
  }
  return ojson{{"schema_version", "1.0.0"}, {"results", std::move(results)}};
}

}  // namespace kf
