// JSON conversion for the worker protocol. Readers are strict about what they need (a missing
// or mistyped required field is an error naming the field) and lenient about the rest
// (optional fields take the struct's defaults, unknown fields are ignored), so the two sides
// can grow independently.
#include "eval/protocol.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <type_traits>

#include "space/value.hpp"

namespace kf {

using nlohmann::json;

namespace {

[[noreturn]] void bad_message(const std::string& what) { throw std::invalid_argument(what); }

void expect_object(const json& j, const char* what) {
  if (!j.is_object()) bad_message(std::string("expected a JSON object for ") + what + ", got " + j.type_name());
}

// Converts one field value, or throws invalid_argument naming the field.
template <class T>
T convert(const json& v, const char* name) {
  auto bad = [&](const char* want) {
    bad_message(std::string("field '") + name + "': expected " + want + ", got " + v.type_name());
  };
  if constexpr (std::is_same_v<T, bool>) {
    if (!v.is_boolean()) bad("boolean");
    return v.get<bool>();
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (!v.is_string()) bad("string");
    return v.get<std::string>();
  } else if constexpr (std::is_floating_point_v<T>) {
    // nlohmann writes NaN and Inf as null; read it back as NaN so a wrong_result whose
    // error metric is not finite still round-trips.
    if (v.is_null()) return std::numeric_limits<T>::quiet_NaN();
    if (!v.is_number()) bad("number");
    return v.get<T>();
  } else {
    static_assert(std::is_integral_v<T>);
    if (!v.is_number_integer()) bad("integer");
    if (v.is_number_unsigned()) {
      auto u = v.get<uint64_t>();
      if (u > static_cast<uint64_t>(std::numeric_limits<T>::max())) bad("integer in range");
      return static_cast<T>(u);
    }
    auto i = v.get<int64_t>();
    if constexpr (std::is_unsigned_v<T>) {
      if (i < 0) bad("non-negative integer");
      if (static_cast<uint64_t>(i) > std::numeric_limits<T>::max()) bad("integer in range");
    } else {
      if (i < std::numeric_limits<T>::min() || i > std::numeric_limits<T>::max())
        bad("integer in range");
    }
    return static_cast<T>(i);
  }
}

template <class T>
T required(const json& j, const char* name) {
  auto it = j.find(name);
  if (it == j.end()) bad_message(std::string("missing field '") + name + "'");
  return convert<T>(*it, name);
}

// Reads an optional field into out, keeping out's default when the field is absent.
template <class T>
void optional_into(const json& j, const char* name, T& out) {
  auto it = j.find(name);
  if (it != j.end()) out = convert<T>(*it, name);
}

// Each message type carries "type"; a reader accepts a missing one (nested items) but not a
// different one, so a reply of the wrong kind is caught here too.
void check_type(const json& j, const char* type) {
  auto it = j.find("type");
  if (it == j.end()) return;
  if (!it->is_string() || it->get<std::string>() != type)
    bad_message(std::string("field 'type': expected \"") + type + "\", got " + it->dump());
}

// Rethrows a nested reader's error with the location prefixed ("timing: field 'reps': ...").
template <class F>
auto nested(const std::string& where, F&& read) -> decltype(read()) {
  try {
    return read();
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(where + ": " + e.what());
  }
}

// A Config or Shape field (space/value.hpp's encoding), errors prefixed with its name.
Assignment assignment_from(const json& j, const char* name) {
  auto it = j.find(name);
  if (it == j.end()) bad_message(std::string("missing field '") + name + "'");
  return nested(std::string("field '") + name + "'", [&] { return assignment_from_json(*it); });
}

// The fields of a struct, once for both directions: visit(name, member, required).
template <class T, class Visit>
void timing_option_fields(T& t, Visit&& visit) {
  visit("warmup_ms", t.warmup_ms, false);
  visit("min_reps", t.min_reps, false);
  visit("max_reps", t.max_reps, false);
  visit("max_ms", t.max_ms, false);
  visit("target_rel_ci", t.target_rel_ci, false);
  visit("graph_ms", t.graph_ms, false);
  visit("cold_l2", t.cold_l2, false);
  visit("energy_ms", t.energy_ms, false);
}

template <class T, class Visit>
void timing_stats_fields(T& t, Visit&& visit) {
  visit("median_us", t.median_us, true);  // the number everything else is about
  visit("p10_us", t.p10_us, false);
  visit("p90_us", t.p90_us, false);
  visit("ci_lo_us", t.ci_lo_us, false);
  visit("ci_hi_us", t.ci_hi_us, false);
  visit("reps", t.reps, false);
  visit("launches_per_rep", t.launches_per_rep, false);
  visit("plain_median_us", t.plain_median_us, false);
  visit("method", t.method, false);  // (absent: 1, the method every record before it used)
  visit("power_w", t.power_w, false);
  visit("energy_uj", t.energy_uj, false);
}

template <class T, class Visit>
void device_limits_fields(T& d, Visit&& visit) {
  // Results are keyed by the device's identity, so that part must be present.
  visit("name", d.name, true);
  visit("cc_major", d.cc_major, true);
  visit("cc_minor", d.cc_minor, true);
  visit("sm_count", d.sm_count, true);
  visit("smem_per_block", d.smem_per_block, false);
  visit("smem_optin", d.smem_optin, false);
  visit("smem_per_sm", d.smem_per_sm, false);
  visit("max_threads", d.max_threads, false);
  visit("regs_per_block", d.regs_per_block, false);
  visit("regs_per_sm", d.regs_per_sm, false);
  visit("l2_bytes", d.l2_bytes, false);
  visit("driver", d.driver, false);
}

template <class S, class Fields>
json fields_to_json(const S& s, Fields fields) {
  json j = json::object();
  fields(s, [&](const char* name, const auto& value, bool) { j[name] = value; });
  return j;
}

// A required field must be present; an optional one keeps the struct's default when absent.
template <class S, class Fields>
S fields_from_json(const json& j, const char* what, Fields fields) {
  expect_object(j, what);
  S s;
  fields(s, [&](const char* name, auto& value, bool is_required) {
    if (is_required)
      value = required<std::decay_t<decltype(value)>>(j, name);
    else
      optional_into(j, name, value);
  });
  return s;
}

// "items": a list of nested messages, each error prefixed with its index.
template <class Read>
auto items_from_json(const json& j, Read read) -> std::vector<decltype(read(j))> {
  auto it = j.find("items");
  if (it == j.end()) bad_message("missing field 'items'");
  if (!it->is_array()) bad_message(std::string("field 'items': expected array, got ") + it->type_name());
  std::vector<decltype(read(j))> out;
  for (size_t i = 0; i < it->size(); ++i)
    out.push_back(nested("items[" + std::to_string(i) + "]", [&] { return read((*it)[i]); }));
  return out;
}

template <class T>
json items_to_json(const std::vector<T>& items) {
  json out = json::array();
  for (const auto& item : items) out.push_back(to_json(item));
  return out;
}

}  // namespace

// --- TimingOptions, TimingStats ---------------------------------------------------------

json to_json(const TimingOptions& t) {
  return fields_to_json(t, [](const auto& s, auto&& v) { timing_option_fields(s, v); });
}

TimingOptions timing_options_from_json(const json& j) {
  return fields_from_json<TimingOptions>(j, "timing options", [](auto& s, auto&& v) { timing_option_fields(s, v); });
}

json to_json(const TimingStats& t) {
  return fields_to_json(t, [](const auto& s, auto&& v) { timing_stats_fields(s, v); });
}

TimingStats timing_stats_from_json(const json& j) {
  return fields_from_json<TimingStats>(j, "timing stats", [](auto& s, auto&& v) { timing_stats_fields(s, v); });
}

// --- EvalRequest -----------------------------------------------------------------------

json to_json(const EvalRequest& r) {
  return {{"type", "evaluate"},
          {"id", r.id},
          {"spec_path", r.spec_path},
          {"config", to_json(r.config)},
          {"shape", to_json(r.shape)},
          {"cubin_path", r.cubin_path},
          {"ref_cubin_path", r.ref_cubin_path},
          {"seed", r.seed},
          {"time", r.time},
          {"timing", to_json(r.timing)}};
}

EvalRequest eval_request_from_json(const json& j) {
  expect_object(j, "evaluate request");
  check_type(j, "evaluate");
  EvalRequest r;
  r.id = required<int64_t>(j, "id");
  r.spec_path = required<std::string>(j, "spec_path");
  r.config = assignment_from(j, "config");
  r.shape = assignment_from(j, "shape");
  r.cubin_path = required<std::string>(j, "cubin_path");
  r.ref_cubin_path = required<std::string>(j, "ref_cubin_path");
  optional_into(j, "seed", r.seed);
  optional_into(j, "time", r.time);
  if (auto it = j.find("timing"); it != j.end() && !it->is_null())
    r.timing = nested("timing", [&] { return timing_options_from_json(*it); });
  return r;
}

// --- EvalResult ------------------------------------------------------------------------

json to_json(const EvalResult& r) {
  json j = {{"type", "result"},
            {"id", r.id},
            {"status", to_string(r.status)},
            {"error", r.error},
            {"max_abs", r.max_abs},
            {"rel_l2", r.rel_l2},
            {"gate_shapes", r.gate_shapes}};
  j["timing"] = r.timing ? to_json(*r.timing) : json(nullptr);
  return j;
}

EvalResult eval_result_from_json(const json& j) {
  expect_object(j, "result");
  check_type(j, "result");
  EvalResult r;
  r.id = required<int64_t>(j, "id");
  auto status = required<std::string>(j, "status");
  r.status = nested("field 'status'", [&] { return status_from_string(status); });
  optional_into(j, "error", r.error);
  optional_into(j, "max_abs", r.max_abs);
  optional_into(j, "rel_l2", r.rel_l2);
  optional_into(j, "gate_shapes", r.gate_shapes);
  if (auto it = j.find("timing"); it != j.end() && !it->is_null())
    r.timing = nested("timing", [&] { return timing_stats_from_json(*it); });
  return r;
}

// --- DeviceLimits ----------------------------------------------------------------------

json to_json(const DeviceLimits& d) {
  return fields_to_json(d, [](const auto& s, auto&& v) { device_limits_fields(s, v); });
}

DeviceLimits device_limits_from_json(const json& j) {
  return fields_from_json<DeviceLimits>(j, "device", [](auto& s, auto&& v) { device_limits_fields(s, v); });
}

// --- TimeMany --------------------------------------------------------------------------

json to_json(const TimeManyRequest& r) {
  json j = {{"type", "time_many"}, {"id", r.id}, {"items", items_to_json(r.items)}, {"rounds", r.rounds},
            {"rewarm_ms", r.rewarm_ms}};
  if (r.until_decided) {
    j["until_decided"] = true;
    j["rule"] = {{"first_batch", r.rule.first_batch}, {"batch", r.rule.batch}, {"tie_rel", r.rule.tie_rel}};
    j["max_s"] = r.max_s;
  }
  return j;
}

TimeManyRequest time_many_request_from_json(const json& j) {
  expect_object(j, "time_many request");
  check_type(j, "time_many");
  TimeManyRequest r;
  r.id = required<int64_t>(j, "id");
  r.items = items_from_json(j, eval_request_from_json);
  optional_into(j, "rounds", r.rounds);
  optional_into(j, "rewarm_ms", r.rewarm_ms);
  optional_into(j, "until_decided", r.until_decided);
  optional_into(j, "max_s", r.max_s);
  if (auto it = j.find("rule"); it != j.end()) {
    nested("rule", [&] {
      expect_object(*it, "rule");
      optional_into(*it, "first_batch", r.rule.first_batch);
      optional_into(*it, "batch", r.rule.batch);
      optional_into(*it, "tie_rel", r.rule.tie_rel);
      return 0;
    });
  }
  return r;
}

json to_json(const TimeManyResult& r) {
  json j = {{"type", "times"}, {"id", r.id}, {"items", items_to_json(r.items)}};
  if (r.rounds > 0) j["rounds"] = r.rounds;
  if (r.stop != RoundStop::Continue) j["stop"] = to_string(r.stop);
  if (!r.round_us.empty()) j["round_us"] = r.round_us;
  return j;
}

TimeManyResult time_many_result_from_json(const json& j) {
  expect_object(j, "times result");
  check_type(j, "times");
  TimeManyResult r;
  r.id = required<int64_t>(j, "id");
  r.items = items_from_json(j, eval_result_from_json);
  optional_into(j, "rounds", r.rounds);
  std::string stop;
  optional_into(j, "stop", stop);
  r.stop = round_stop_from_string(stop);
  if (auto it = j.find("round_us"); it != j.end()) {
    nested("field 'round_us'", [&] {
      if (!it->is_array()) bad_message(std::string("expected array, got ") + it->type_name());
      for (const auto& per_item : *it) {
        if (!per_item.is_array()) bad_message(std::string("expected arrays, got ") + per_item.type_name());
        std::vector<double> us;
        for (const auto& v : per_item) us.push_back(convert<double>(v, "round_us"));
        r.round_us.push_back(std::move(us));
      }
      return 0;
    });
  }
  return r;
}

}  // namespace kf
