// Community formats written by kforge (Kernel Tuner cache, T4), read back by kforge's own
// importers; T1 tuning problems turned into spec drafts; imported spaces stored.
#include <gtest/gtest.h>

#include <fstream>
#include <limits>

#include "importers/import.hpp"
#include "importers/store_import.hpp"
#include "importers/t1.hpp"
#include "importers/writers.hpp"
#include "test_dir.hpp"

using namespace kf;

namespace {

ResultTable small_table() {
  ResultTable t;
  t.kernel_name = "toy";
  t.device_name = "NVIDIA H100 80GB HBM3";
  t.params = {{"BLOCK", {int64_t(64), int64_t(128), int64_t(256)}}, {"MODE", {std::string("plain"), std::string("unrolled")}}};
  t.problem_size = {4096};
  auto row = [](int64_t b, const char* m, Status s, std::optional<double> us) {
    ResultRow r;
    r.config = {{"BLOCK", b}, {"MODE", std::string(m)}};
    r.status = s;
    r.time_us = us;
    return r;
  };
  t.rows = {row(256, "plain", Status::Ok, 30.0), row(64, "plain", Status::CompileError, std::nullopt),
            row(128, "unrolled", Status::Ok, 12.5), row(128, "unrolled", Status::Ok, 10.0),
            row(64, "unrolled", Status::WrongResult, std::nullopt), row(128, "plain", Status::Interrupted, std::nullopt)};
  return t;
}

}  // namespace

TEST(WriteKernelTunerCache, SortedKeysTimesInMsAndFailures) {
  const auto j = kernel_tuner_cache(small_table());
  EXPECT_EQ(j["tune_params_keys"], nlohmann::ordered_json::array({"BLOCK", "MODE"}));
  std::vector<std::string> keys;
  for (const auto& [k, v] : j["cache"].items()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"128,unrolled", "256,plain", "64,plain", "64,unrolled"}));
  EXPECT_DOUBLE_EQ(j["cache"]["128,unrolled"]["time"].get<double>(), 0.010);  // the faster of two
  EXPECT_EQ(j["cache"]["64,plain"]["__error__"], "CompilationFailedConfig");
  EXPECT_EQ(j["cache"]["64,plain"]["time"], "CompilationFailedConfig");
  EXPECT_EQ(j["cache"]["64,unrolled"]["__error__"], "RuntimeFailedConfig");
  EXPECT_FALSE(j["cache"].contains("128,plain"));  // interrupted: never measured
}

TEST(WriteKernelTunerCache, ReadsBackThroughTheImporter) {
  const RecordedSpace r = import_kernel_tuner_cache(kernel_tuner_cache(small_table()));
  EXPECT_EQ(r.size(), 4u);
  EXPECT_EQ(r.failed(), 2u);
  ASSERT_NE(r.optimum(), nullptr);
  EXPECT_NEAR(*r.optimum()->time_us, 10.0, 1e-9);
  const auto* failed = r.find({{"BLOCK", int64_t(64)}, {"MODE", std::string("plain")}});
  ASSERT_NE(failed, nullptr);
  EXPECT_EQ(failed->failure, "CompilationFailedConfig");
}

TEST(WriteT4, InvaliditiesAndReadBack) {
  const auto j = t4_results(small_table());
  ASSERT_EQ(j["results"].size(), 4u);
  EXPECT_EQ(j["results"][2]["invalidity"], "compile");
  EXPECT_EQ(j["results"][3]["invalidity"], "correctness");
  const RecordedSpace r = import_t4(j);
  EXPECT_EQ(r.failed(), 2u);
  EXPECT_NEAR(*r.optimum()->time_us, 10.0, 1e-9);
}

TEST(T1Import, PythonExpressions) {
  EXPECT_EQ(python_to_kforge_expr("10000000 // block_size_x"), "10000000 / block_size_x");
  EXPECT_EQ(python_to_kforge_expr("a <= 4 and not b == 2"), "a <= 4 && !(b == 2)");
  EXPECT_EQ(python_to_kforge_expr("2**i"), "pow(2, i)");
  EXPECT_EQ(python_to_kforge_expr("x / 2"), "x * 1.0 / 2");
  EXPECT_EQ(python_to_kforge_expr("1 < a < 4"), "");        // chained: no C equivalent
  EXPECT_EQ(python_to_kforge_expr("a in [1, 2]"), "");
  EXPECT_EQ(python_to_kforge_expr("ProblemSize[0] * 2"), "problem_size_0*2");
}

TEST(T1Import, Values) {
  EXPECT_EQ(t1_values("[128+64*i for i in range(3)]"), nlohmann::ordered_json::array({128, 192, 256}));
  EXPECT_EQ(t1_values("list(range(2, 9, 3))"), nlohmann::ordered_json::array({2, 5, 8}));
  EXPECT_EQ(t1_values("[2**i for i in range(4)]"), nlohmann::ordered_json::array({1, 2, 4, 8}));
  EXPECT_EQ(t1_values("['a', \"b\"]"), nlohmann::ordered_json::array({"a", "b"}));
  EXPECT_THROW(t1_values("numpy.arange(4)"), ImportError);
}

TEST(T1Import, KernelTunerSampleBecomesADraft) {
  const std::string file = std::string(KFORGE_TEST_DIR) + "/data/kernel_tuner_t1_input.json";
  ASSERT_TRUE(is_t1_file(file));
  EXPECT_FALSE(is_t1_file(std::string(KFORGE_TEST_DIR) + "/data/kernel_tuner_test_cache_file.json"));
  const T1Draft d = t1_family_draft(file);
  EXPECT_EQ(d.spec["entry"], "vector_add");
  EXPECT_EQ(d.spec["params"]["block_size_x"].size(), 15u);
  EXPECT_EQ(d.spec["params"]["block_size_x"][0], 128);
  EXPECT_EQ(d.spec["defaults"][0]["block_size_x"], 512);
  EXPECT_EQ(d.spec["launch"]["grid"][0], "10000000 / block_size_x");  // CUDA-style: blocks
  EXPECT_EQ(d.spec["launch"]["block"][0], "block_size_x");
  EXPECT_EQ(d.spec["buffers"].size(), 3u);
  EXPECT_EQ(d.spec["args"][3], (nlohmann::ordered_json{{"i32", "10000000"}}));
  bool says_reference = false;
  for (const auto& n : d.notes) says_reference = says_reference || n.find("reference") != std::string::npos;
  EXPECT_TRUE(says_reference);
}

TEST(StoreImport, RecordedSpaceBecomesEvaluations) {
  const auto dir = fresh_test_dir("kforge_store_import");
  const Family toy = load_family(std::filesystem::path(KFORGE_TEST_DIR) / "families" / "toy" / "toy.json");
  const Shape shape = parse_shape(toy, "N=4096,dtype=f32");
  const RecordedSpace space(
      {{"BLOCK", {int64_t(64), int64_t(128)}}, {"VEC", {int64_t(1)}}, {"MODE", {std::string("plain")}}},
      {{{{"BLOCK", int64_t(64)}, {"VEC", int64_t(1)}, {"MODE", std::string("plain")}}, 5.0},
       {{{"BLOCK", int64_t(128)}, {"VEC", int64_t(1)}, {"MODE", std::string("plain")}}, std::nullopt, "compile"}});
  Store store(dir / "r.db");
  const auto first = store_recorded(store, toy, shape, space, "Some GPU");
  EXPECT_EQ(first.written, 2u);
  const auto again = store_recorded(store, toy, shape, space, "Some GPU");
  EXPECT_EQ(again.written, 0u);
  EXPECT_EQ(again.already_stored, 2u);
  // Imported: never the best (no gate ran), still there for seeding and replay.
  EXPECT_FALSE(store.best("toy", shape, std::nullopt).has_value());
  const auto seeds = store.top("toy", shape, std::nullopt, 5, RecordsFrom::KforgeAndImported);
  ASSERT_EQ(seeds.size(), 1u);
  EXPECT_DOUBLE_EQ(seeds[0].timing->median_us, 5.0);
  size_t compile_errors = 0;
  for (const auto& e : store.evaluations("toy", shape)) {
    compile_errors += e.status == Status::CompileError;
    EXPECT_EQ(e.provenance, Provenance::Imported);
    EXPECT_EQ(e.device.driver, "imported");
  }
  EXPECT_EQ(compile_errors, 1u);
  EXPECT_THROW(store_recorded(store, toy, shape, space, ""), ImportError);
  const RecordedSpace foreign({{"X", {int64_t(1)}}}, {{{{"X", int64_t(1)}}, 1.0}});
  EXPECT_THROW(store_recorded(store, toy, shape, foreign, "Some GPU"), ImportError);
}

// A record's time must be a measurement and its parameters the family's; the error names the config and
// nothing is stored.
TEST(StoreImport, BadTimesAndOtherParametersAreRefusedNamingTheConfig) {
  const auto dir = fresh_test_dir("kforge_store_import");
  const Family toy = load_family(std::filesystem::path(KFORGE_TEST_DIR) / "families" / "toy" / "toy.json");
  const Shape shape = parse_shape(toy, "N=4096,dtype=f32");
  const std::vector<ParamSpec> params{
      {"BLOCK", {int64_t(64), int64_t(128)}}, {"VEC", {int64_t(1)}}, {"MODE", {std::string("plain")}}};
  const Config b64{{"BLOCK", int64_t(64)}, {"VEC", int64_t(1)}, {"MODE", std::string("plain")}};
  const Config b128{{"BLOCK", int64_t(128)}, {"VEC", int64_t(1)}, {"MODE", std::string("plain")}};
  Store store(dir / "r.db");
  const auto refused = [&](const RecordedSpace& space, const std::string& why) {
    try {
      store_recorded(store, toy, shape, space, "Some GPU");
      ADD_FAILURE() << "stored: " << why;
    } catch (const ImportError& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    }
    EXPECT_TRUE(store.evaluations("toy", shape).empty());
  };
  // (a negative or NaN time never gets this far: RecordedSpace refuses it)
  for (const double us : {0.0, -0.0, 1e-320, 1e-4, std::numeric_limits<double>::infinity()})
    refused(RecordedSpace(params, {{b64, 5.0}, {b128, us}}), "config BLOCK=128,MODE=plain,VEC=1: time ");
  // A file without the family's VEC would store every time under VEC's first value.
  refused(RecordedSpace({{"BLOCK", {int64_t(64), int64_t(128)}}, {"MODE", {std::string("plain")}}},
                        {{{{"BLOCK", int64_t(64)}, {"MODE", std::string("plain")}}, 5.0}}),
          "the file's parameters lack toy's 'VEC'");
  auto extra = params;
  extra.push_back({"UNROLL", {int64_t(2)}});
  Config with_unroll = b64;
  with_unroll["UNROLL"] = int64_t(2);
  refused(RecordedSpace(extra, {{with_unroll, 5.0}}), "the file's parameter 'UNROLL' is not one of toy's");
}
