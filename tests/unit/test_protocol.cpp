#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "eval/protocol.hpp"
#include "core/vocabulary.hpp"

using nlohmann::json;
using namespace kf;

namespace {

// Expects f() to throw std::invalid_argument whose message contains needle.
template <class F>
void expect_invalid(F&& f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "no exception; expected one mentioning '" << needle << "'";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

EvalRequest sample_request() {
  EvalRequest r;
  r.id = 42;
  r.spec_path = "/specs/gemm.json";
  r.config = {{"BLOCK_M", int64_t{64}}, {"MMA", std::string("wmma")}, {"SCALE", 0.5}};
  r.shape = {{"M", int64_t{4096}}, {"dtype", std::string("f16")}};
  r.cubin_path = "/cache/a.cubin";
  r.ref_cubin_path = "/cache/ref.cubin";
  r.seed = 7;
  r.time = false;
  r.timing.min_reps = 3;
  r.timing.cold_l2 = true;
  return r;
}

EvalResult sample_result() {
  EvalResult r;
  r.id = 42;
  r.status = Status::WrongResult;
  r.error = "max_abs 3 > 0.05";
  r.max_abs = 3;
  r.rel_l2 = 0.25;
  r.gate_shapes = 3;
  TimingStats t;
  t.median_us = 12.5;
  t.p10_us = 12;
  t.p90_us = 13;
  t.ci_lo_us = 12.4;
  t.ci_hi_us = 12.6;
  t.reps = 20;
  t.launches_per_rep = 100;
  t.plain_median_us = 15;
  t.power_w = 412.5;
  t.energy_uj = 5156.25;
  r.timing = t;
  return r;
}

}  // namespace

TEST(Status, RoundTripsEveryValue) {
  const Status all[] = {Status::Ok,          Status::Invalid,      Status::CompileError,
                        Status::LaunchError, Status::WrongResult,  Status::RuntimeFault,
                        Status::Timeout,     Status::Interrupted};
  for (Status s : all) EXPECT_EQ(status_from_string(to_string(s)), s);
  EXPECT_EQ(to_string(Status::CompileError), "compile_error");
  EXPECT_EQ(to_string(Status::RuntimeFault), "runtime_fault");
  EXPECT_THROW(status_from_string("crashed"), std::invalid_argument);
  EXPECT_THROW(status_from_string("OK"), std::invalid_argument);
}

TEST(Protocol, EvalRequestRoundTrip) {
  EvalRequest r = sample_request();
  json j = to_json(r);
  EXPECT_EQ(j.at("type"), "evaluate");
  // Through text, as on the pipe.
  EvalRequest back = eval_request_from_json(json::parse(j.dump()));
  EXPECT_EQ(back.id, r.id);
  EXPECT_EQ(back.spec_path, r.spec_path);
  EXPECT_EQ(back.config, r.config);
  EXPECT_EQ(back.shape, r.shape);
  EXPECT_EQ(back.cubin_path, r.cubin_path);
  EXPECT_EQ(back.ref_cubin_path, r.ref_cubin_path);
  EXPECT_EQ(back.seed, r.seed);
  EXPECT_EQ(back.time, r.time);
  EXPECT_EQ(back.timing.min_reps, 3);
  EXPECT_TRUE(back.timing.cold_l2);
  EXPECT_EQ(back.timing.max_reps, TimingOptions{}.max_reps);
  // Integers stay integers, strings stay strings.
  EXPECT_TRUE(std::holds_alternative<int64_t>(back.config.at("BLOCK_M")));
  EXPECT_TRUE(std::holds_alternative<double>(back.config.at("SCALE")));
}

TEST(Protocol, EvalRequestOptionalFieldsDefault) {
  json j = {{"type", "evaluate"}, {"id", 1},  {"spec_path", "s.json"}, {"config", json::object()},
            {"shape", json::object()}, {"cubin_path", "a"}, {"ref_cubin_path", "b"}};
  EvalRequest r = eval_request_from_json(j);
  EXPECT_EQ(r.seed, 1u);
  EXPECT_TRUE(r.time);
  EXPECT_EQ(r.timing.max_ms, TimingOptions{}.max_ms);
  j["unknown_extra"] = 5;  // tolerated: newer peers may send more
  EXPECT_NO_THROW(eval_request_from_json(j));
}

TEST(Protocol, EvalRequestMissingFieldsAreNamed) {
  json full = to_json(sample_request());
  for (const char* field : {"id", "spec_path", "config", "shape", "cubin_path", "ref_cubin_path"}) {
    json j = full;
    j.erase(field);
    expect_invalid([&] { eval_request_from_json(j); }, std::string("'") + field + "'");
  }
}

TEST(Protocol, WrongTypesAreNamed) {
  json j = to_json(sample_request());
  j["id"] = "42";
  expect_invalid([&] { eval_request_from_json(j); }, "'id'");
  j = to_json(sample_request());
  j["seed"] = -1;
  expect_invalid([&] { eval_request_from_json(j); }, "'seed'");
  j = to_json(sample_request());
  j["timing"]["min_reps"] = "many";
  expect_invalid([&] { eval_request_from_json(j); }, "timing: field 'min_reps'");
  j = to_json(sample_request());
  j["config"]["BLOCK_M"] = json::array();
  expect_invalid([&] { eval_request_from_json(j); }, "field 'config'");
  j = to_json(sample_request());
  j["type"] = "result";
  expect_invalid([&] { eval_request_from_json(j); }, "'type'");
  expect_invalid([] { eval_request_from_json(json::array()); }, "object");
}

TEST(Protocol, EvalResultRoundTrip) {
  EvalResult r = sample_result();
  json j = to_json(r);
  EXPECT_EQ(j.at("type"), "result");
  EXPECT_EQ(j.at("status"), "wrong_result");
  EvalResult back = eval_result_from_json(json::parse(j.dump()));
  EXPECT_EQ(back.id, r.id);
  EXPECT_EQ(back.status, r.status);
  EXPECT_EQ(back.error, r.error);
  EXPECT_EQ(back.max_abs, r.max_abs);
  EXPECT_EQ(back.rel_l2, r.rel_l2);
  EXPECT_EQ(back.gate_shapes, r.gate_shapes);
  ASSERT_TRUE(back.timing);
  EXPECT_EQ(back.timing->median_us, 12.5);
  EXPECT_EQ(back.timing->p10_us, 12);
  EXPECT_EQ(back.timing->p90_us, 13);
  EXPECT_EQ(back.timing->ci_lo_us, 12.4);
  EXPECT_EQ(back.timing->ci_hi_us, 12.6);
  EXPECT_EQ(back.timing->reps, 20);
  EXPECT_EQ(back.timing->launches_per_rep, 100);
  EXPECT_EQ(back.timing->plain_median_us, 15);
  EXPECT_EQ(back.timing->power_w, 412.5);
  EXPECT_EQ(back.timing->energy_uj, 5156.25);
}

TEST(Protocol, EvalResultMinimalAndWithoutTiming) {
  EvalResult r = eval_result_from_json(json::parse(R"({"type":"result","id":3,"status":"ok"})"));
  EXPECT_EQ(r.id, 3);
  EXPECT_EQ(r.status, Status::Ok);
  EXPECT_TRUE(r.error.empty());
  EXPECT_FALSE(r.timing);
  r = eval_result_from_json(json::parse(R"({"id":3,"status":"timeout","timing":null})"));
  EXPECT_EQ(r.status, Status::Timeout);
  EXPECT_FALSE(r.timing);
  EvalResult none;
  EXPECT_TRUE(to_json(none).at("timing").is_null());
  EXPECT_FALSE(eval_result_from_json(to_json(none)).timing);
}

TEST(Protocol, EvalResultErrors) {
  expect_invalid([] { eval_result_from_json(json::parse(R"({"id":1})")); }, "'status'");
  expect_invalid([] { eval_result_from_json(json::parse(R"({"status":"ok"})")); }, "'id'");
  expect_invalid([] { eval_result_from_json(json::parse(R"({"id":1,"status":"meh"})")); },
                 "field 'status': unknown status 'meh'");
  expect_invalid([] { eval_result_from_json(json::parse(R"({"id":1,"status":"ok","timing":{}})")); },
                 "timing: missing field 'median_us'");
  expect_invalid([] { eval_result_from_json(json::parse(R"({"type":"hello","id":1,"status":"ok"})")); },
                 "'type'");
}

TEST(Protocol, NonFiniteMetricsSurvive) {
  // A wrong result can have NaN error metrics; JSON has no NaN, nlohmann writes null.
  EvalResult r;
  r.status = Status::WrongResult;
  r.max_abs = std::nan("");
  r.rel_l2 = std::numeric_limits<double>::infinity();
  EvalResult back = eval_result_from_json(json::parse(to_json(r).dump()));
  EXPECT_TRUE(std::isnan(back.max_abs));
  EXPECT_FALSE(std::isfinite(back.rel_l2));
}

TEST(Protocol, DeviceLimitsRoundTrip) {
  DeviceLimits d;
  d.name = "NVIDIA H100 80GB HBM3";
  d.cc_major = 9;
  d.cc_minor = 0;
  d.sm_count = 132;
  d.smem_per_block = 49152;
  d.smem_optin = 232448;
  d.smem_per_sm = 233472;
  d.max_threads = 1024;
  d.regs_per_block = 65536;
  d.regs_per_sm = 65536;
  d.l2_bytes = 52428800;
  d.driver = "13.0";
  DeviceLimits back = device_limits_from_json(json::parse(to_json(d).dump()));
  EXPECT_EQ(back.name, d.name);
  EXPECT_EQ(back.cc_major, 9);
  EXPECT_EQ(back.cc_minor, 0);
  EXPECT_EQ(back.sm_count, 132);
  EXPECT_EQ(back.smem_per_block, d.smem_per_block);
  EXPECT_EQ(back.smem_optin, d.smem_optin);
  EXPECT_EQ(back.smem_per_sm, d.smem_per_sm);
  EXPECT_EQ(back.max_threads, d.max_threads);
  EXPECT_EQ(back.regs_per_block, d.regs_per_block);
  EXPECT_EQ(back.regs_per_sm, d.regs_per_sm);
  EXPECT_EQ(back.l2_bytes, d.l2_bytes);
  EXPECT_EQ(back.driver, d.driver);
}

TEST(Protocol, DeviceLimitsIdentityRequired) {
  json j = to_json(DeviceLimits{});
  for (const char* field : {"name", "cc_major", "cc_minor", "sm_count"}) {
    json k = j;
    k.erase(field);
    expect_invalid([&] { device_limits_from_json(k); }, std::string("'") + field + "'");
  }
  json minimal = {{"name", "x"}, {"cc_major", 8}, {"cc_minor", 9}, {"sm_count", 4}};
  DeviceLimits d = device_limits_from_json(minimal);
  EXPECT_EQ(d.smem_optin, DeviceLimits{}.smem_optin);
  EXPECT_EQ(d.cc(), 89);
  minimal["cc_major"] = 1e12;
  expect_invalid([&] { device_limits_from_json(minimal); }, "'cc_major'");
}

TEST(Protocol, TimingOptionsRoundTrip) {
  TimingOptions t;
  t.warmup_ms = 5;
  t.min_reps = 2;
  t.max_reps = 9;
  t.max_ms = 100;
  t.target_rel_ci = 0.05;
  t.graph_ms = 1;
  t.cold_l2 = true;
  TimingOptions back = timing_options_from_json(json::parse(to_json(t).dump()));
  EXPECT_EQ(back.warmup_ms, 5);
  EXPECT_EQ(back.min_reps, 2);
  EXPECT_EQ(back.max_reps, 9);
  EXPECT_EQ(back.max_ms, 100);
  EXPECT_EQ(back.target_rel_ci, 0.05);
  EXPECT_EQ(back.graph_ms, 1);
  EXPECT_TRUE(back.cold_l2);
  EXPECT_EQ(timing_options_from_json(json::object()).max_reps, TimingOptions{}.max_reps);
  expect_invalid([] { timing_options_from_json(json::parse(R"({"cold_l2":1})")); }, "'cold_l2'");
}

TEST(Protocol, TimeManyRoundTrip) {
  TimeManyRequest req;
  req.id = 9;
  req.rounds = 3;
  req.items = {sample_request(), sample_request()};
  req.items[1].id = 43;
  json j = to_json(req);
  EXPECT_EQ(j.at("type"), "time_many");
  TimeManyRequest back = time_many_request_from_json(json::parse(j.dump()));
  EXPECT_EQ(back.id, 9);
  EXPECT_EQ(back.rounds, 3);
  ASSERT_EQ(back.items.size(), 2u);
  EXPECT_EQ(back.items[1].id, 43);
  EXPECT_EQ(back.items[0].config, req.items[0].config);

  TimeManyResult res;
  res.id = 9;
  res.items = {sample_result(), EvalResult{}};
  json k = to_json(res);
  EXPECT_EQ(k.at("type"), "times");
  TimeManyResult rback = time_many_result_from_json(json::parse(k.dump()));
  EXPECT_EQ(rback.id, 9);
  ASSERT_EQ(rback.items.size(), 2u);
  EXPECT_EQ(rback.items[0].status, Status::WrongResult);
  EXPECT_FALSE(rback.items[1].timing);
}

TEST(Protocol, TimeManyErrorsNameTheItem) {
  json j = to_json(TimeManyRequest{.id = 1, .items = {sample_request(), sample_request()}, .rounds = 2});
  j["items"][1].erase("cubin_path");
  expect_invalid([&] { time_many_request_from_json(j); }, "items[1]: missing field 'cubin_path'");
  expect_invalid([] { time_many_request_from_json(json::parse(R"({"id":1})")); }, "'items'");
  expect_invalid([] { time_many_result_from_json(json::parse(R"({"id":1,"items":{}})")); }, "'items'");
  expect_invalid([] { time_many_result_from_json(json::parse(R"({"type":"result","id":1,"items":[]})")); },
                 "'type'");
  EXPECT_EQ(time_many_request_from_json(json::parse(R"({"id":1,"items":[]})")).rounds,
            TimeManyRequest{}.rounds);
}
