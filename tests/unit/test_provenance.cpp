// No path around the gate: a record another tool measured (`import --store`) and a config nobody gated
// (`export --config`) are never shown as best nor exported as a result; `export --config` gates the config on
// the local GPU first (here the stand-in worker, tests/fakes/fake_worker.py) or refuses in one line, and
// `--ungated` writes a manifest that says no gate ran.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "cli_run.hpp"
#include "export/export.hpp"
#include "family/render.hpp"
#include "family/user_config.hpp"
#include "test_dir.hpp"
#include "winner/current_results.hpp"

namespace fs = std::filesystem;
using namespace kf;

namespace {

const DeviceKey kFakeGpu{"Fake GPU", 90, 132, "fake"};  // what the stand-in worker says it is

struct NoPathAroundTheGate : ::testing::Test {
  fs::path dir;
  Family toy;
  Shape shape;
  const std::string shape_text = "N=4096,dtype=f16";

  void SetUp() override {
    dir = fresh_test_dir("kforge_provenance");
    toy = load_family(fs::path(KFORGE_TEST_DIR) / "families/toy/toy.json");
    shape = parse_shape(toy, shape_text);
  }
  void TearDown() override { fs::remove_all(dir); }

  // kforge on the toy family and this test's database; worker: the stand-in's mode ("" : none named).
  CliResult kforge(std::vector<std::string> args, const std::string& worker = "hello_error") {
    std::vector<std::string> all{"--db", (dir / "r.db").string(), "--cache-dir", (dir / "cache").string(),
                                 "--spec-dir", (fs::path(KFORGE_TEST_DIR) / "families/toy").string()};
    all.insert(all.end(), args.begin(), args.end());
    const std::string env = "KFORGE_FAKE_GPUS=1 KFORGE_WORKER=" +
                            sh_word("python3 -S " + std::string(KFORGE_TEST_DIR) + "/fakes/fake_worker.py " + worker + " 1");
    return run_kforge(all, dir, env);
  }
  nlohmann::json manifest(const std::string& out) {
    std::ifstream in(dir / out / "manifest.json");
    return nlohmann::json::parse(in);
  }
  // A Kernel Tuner cache of one toy config at `ms` milliseconds.
  fs::path cache_file(const std::string& ms) {
    const fs::path p = dir / "cache.json";
    std::ofstream(p) << R"({"device_name": "Attacker GPU", "kernel_name": "toy_scale",
      "tune_params_keys": ["BLOCK", "VEC", "MODE"],
      "tune_params": {"BLOCK": [64, 128, 256], "VEC": [1, 2, 4], "MODE": ["plain", "unrolled"]},
      "cache": {"64,2,plain": {"BLOCK": 64, "VEC": 2, "MODE": "plain", "time": )"
                     << ms << "}}}";
    return p;
  }
};

// The error is one line (progress and info lines of a gate attempt may come before it).
void expect_one_line(const CliResult& r) {
  size_t errors = 0;
  for (const auto& line : r.err_lines()) errors += line.rfind("kforge: ", 0) == 0;
  EXPECT_EQ(errors, 1u) << r.err;
  EXPECT_EQ(r.err_lines().back().rfind("kforge: ", 0), 0u) << r.err;
}

}  // namespace

// An imported 1 us record is data, not a result: `best` does not pick it (and says why the shape has no
// winner), export refuses it, and exporting its config by name needs a gate first.
TEST_F(NoPathAroundTheGate, AnImportedRecordIsNeverBestNorExported) {
  const CliResult imported = kforge({"import", cache_file("0.001").string(), "--store", "--family", "toy",
                                     "--shape", shape_text});
  ASSERT_EQ(imported.rc, 0) << imported.err;
  {
    Store store(dir / "r.db", Store::Access::ReadOnly);
    EXPECT_FALSE(store.best("toy", shape, std::nullopt).has_value());
    EXPECT_FALSE(best_current(store, toy, shape, std::nullopt).has_value());
  }

  const CliResult best = kforge({"best", "--family", "toy", "--json"});
  ASSERT_EQ(best.rc, 0) << best.err;
  const auto rows = nlohmann::json::parse(best.out);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_FALSE(rows[0].contains("config")) << rows.dump();
  EXPECT_FALSE(rows[0].contains("median_us")) << rows.dump();
  ASSERT_TRUE(rows[0].contains("imported")) << rows.dump();
  EXPECT_EQ(rows[0]["imported"]["records"], 1);
  EXPECT_DOUBLE_EQ(rows[0]["imported"]["fastest_us"].get<double>(), 1.0);
  const CliResult text = kforge({"best", "--family", "toy"});
  ASSERT_EQ(text.rc, 0) << text.err;
  EXPECT_NE(text.out.find("only imported records"), std::string::npos) << text.out;

  const CliResult winners = kforge({"export", "--family", "toy", "--shape", shape_text, "--out", "x"});
  EXPECT_EQ(winners.rc, 1);
  expect_one_line(winners);
  EXPECT_NE(winners.err.find("no gated result"), std::string::npos) << winners.err;
  EXPECT_NE(winners.err.find("imported"), std::string::npos) << winners.err;
  EXPECT_FALSE(fs::exists(dir / "x" / "manifest.json"));

  // By name, on a machine whose worker finds no GPU: refused, nothing written.
  const CliResult named = kforge(
      {"export", "--family", "toy", "--shape", shape_text, "--config", "BLOCK=64,VEC=2,MODE=plain", "--out", "y"});
  EXPECT_EQ(named.rc, 1);
  expect_one_line(named);
  EXPECT_NE(named.err.find("has not passed the gate"), std::string::npos) << named.err;
  EXPECT_FALSE(fs::exists(dir / "y" / "manifest.json"));

  // And export_kernels itself refuses an imported record handed to it.
  Store store(dir / "r.db", Store::Access::ReadOnly);
  ExportInput in;
  in.family = &toy;
  in.out_dir = dir / "z";
  in.winners = {store.top("toy", shape, std::nullopt, 1, RecordsFrom::KforgeAndImported).at(0)};
  in.base_arch = "sm_90";
  try {
    export_kernels(in);
    ADD_FAILURE() << "exported an imported record";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("never passed kforge's gate"), std::string::npos) << e.what();
  }
}

// A config with no gated record is gated on the local GPU first; its manifest then carries the gate's real
// verdict and kernel, and the record it made serves the next export without a GPU.
TEST_F(NoPathAroundTheGate, ExportOfAConfigGatesItFirst) {
  const CliResult r = kforge({"export", "--family", "toy", "--shape", shape_text, "--config", "VEC=4", "--out", "a"},
                             "ok");
  ASSERT_EQ(r.rc, 0) << r.err;
  auto m = manifest("a");
  const Config config = parse_user_config(toy, "VEC=4");
  EXPECT_EQ(m["gate"], "passed");
  EXPECT_EQ(m["gated_kernel_hash"], render_variant(toy, config, shape).hash);
  EXPECT_EQ(m["gated_kernel_hash"], m["variant_hash"]);
  EXPECT_DOUBLE_EQ(m["correctness"]["max_abs"].get<double>(), 0.001);  // the stand-in's gate answer
  EXPECT_FALSE(m["evaluation_id"].is_null());
  EXPECT_EQ(m["device"]["name"], "Fake GPU");
  {
    Store store(dir / "r.db", Store::Access::ReadOnly);
    const auto stored = store.evaluations("toy", shape);
    ASSERT_EQ(stored.size(), 1u);
    EXPECT_TRUE(stored[0].gate_passed());
    EXPECT_EQ(m["evaluation_id"], stored[0].id);
  }

  // No GPU now: the stored gate pass vouches for the config; with a define it is the kernel without it.
  const CliResult again = kforge(
      {"export", "--family", "toy", "--shape", shape_text, "--config", "VEC=4;DIAG=1", "--out", "b"});
  ASSERT_EQ(again.rc, 0) << again.err;
  auto d = manifest("b");
  EXPECT_EQ(d["gate"], "passed without the defines");
  EXPECT_EQ(d["gated_kernel_hash"], m["variant_hash"]);
  EXPECT_NE(d["variant_hash"], m["variant_hash"]);
}

// A config the gate refused is not exported; the error names the verdict.
TEST_F(NoPathAroundTheGate, AConfigThatFailsTheGateIsNotExported) {
  {
    Store store(dir / "r.db");
    EvaluationRecord e;
    e.family = toy.name;
    e.config = parse_user_config(toy, "VEC=4");
    e.shape = shape;
    e.device = kFakeGpu;
    e.status = Status::WrongResult;
    e.error = "max_abs 3 on odd";
    e.kernel = KernelRecord{render_variant(toy, e.config, shape).hash, "sm_90", true};
    store.add_evaluation(e);
  }
  const CliResult r = kforge({"export", "--family", "toy", "--shape", shape_text, "--config", "VEC=4", "--out", "a"},
                             "ok");
  EXPECT_EQ(r.rc, 1);
  expect_one_line(r);
  EXPECT_NE(r.err.find("did not pass the gate on Fake GPU (wrong_result: max_abs 3 on odd)"), std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(dir / "a" / "manifest.json"));
}

// --ungated is the one way to write a config no gate ran, and its manifest says so: no gate, no kernel that
// was gated, no correctness, no device, no time.
TEST_F(NoPathAroundTheGate, AnUngatedExportSaysNoGateRan) {
  const CliResult r = kforge(
      {"export", "--family", "toy", "--shape", shape_text, "--config", "VEC=4", "--ungated", "--out", "a"});
  ASSERT_EQ(r.rc, 0) << r.err;
  auto m = manifest("a");
  EXPECT_EQ(m["gate"], "not run");
  EXPECT_TRUE(m["gated_kernel_hash"].is_null());
  EXPECT_TRUE(m["correctness"].is_null());
  EXPECT_TRUE(m["device"].is_null());
  EXPECT_TRUE(m["timing"].is_null());
  EXPECT_TRUE(m["evaluation_id"].is_null());
  EXPECT_FALSE(fs::exists(dir / "r.db")) << "an ungated export needs no database";

  const CliResult stray = kforge({"export", "--family", "toy", "--shape", shape_text, "--ungated", "--out", "b"});
  EXPECT_NE(stray.rc, 0);
  expect_one_line(stray);
  EXPECT_NE(stray.err.find("--ungated goes with --config"), std::string::npos) << stray.err;

  // export_kernels takes an unmeasured config only when told to.
  ExportInput in;
  in.family = &toy;
  in.out_dir = dir / "c";
  in.base_arch = "sm_90";
  in.winners = {unmeasured_record(toy, parse_user_config(toy, "VEC=4"), shape)};
  try {
    export_kernels(in);
    ADD_FAILURE() << "exported an ungated config";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("has not passed the gate"), std::string::npos) << e.what();
  }
}

// The stored winner timed with an older kernel source is re-gated on the local GPU before it is written
// (the command line opened the database read-only, so the re-gate could never record its result).
TEST_F(NoPathAroundTheGate, AStaleWinnerIsReGatedBeforeExport) {
  const Config config = parse_user_config(toy, "BLOCK=64");
  {
    Store store(dir / "r.db");
    EvaluationRecord e;
    e.family = toy.name;
    e.config = config;
    e.shape = shape;
    e.device = kFakeGpu;
    e.status = Status::Ok;
    e.timing = TimingStats{};
    e.timing->median_us = 2.0;
    e.timing->method = kTimingMethod;
    e.kernel = KernelRecord{"an older kernel source", "sm_90", true};
    store.add_evaluation(e);
  }
  const CliResult r = kforge({"export", "--family", "toy", "--shape", shape_text, "--out", "a"}, "ok");
  ASSERT_EQ(r.rc, 0) << r.err;
  auto m = manifest("a");
  EXPECT_EQ(m["gate"], "passed");
  EXPECT_EQ(m["gated_kernel_hash"], render_variant(toy, config, shape).hash);
}
