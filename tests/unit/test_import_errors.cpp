// Imports (Kernel Tuner caches, T4 results, T1 problems, baseline timings) refuse bad input
// with one line naming the file and the field, within bounds: a T1 range(10**12) ended in
// std::bad_alloc; a type error or a number overflow (1e400) gave nlohmann's message with
// neither file nor field; a 50 MB baseline file took 51 s and 820 MB.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "importers/baselines.hpp"
#include "importers/import.hpp"
#include "importers/t1.hpp"
#include "test_dir.hpp"

using namespace kf;
namespace fs = std::filesystem;
using OJson = nlohmann::ordered_json;

namespace {

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

OJson sample(const std::string& name) { return OJson::parse(read(fs::path(KFORGE_TEST_DIR) / "data" / name)); }

fs::path write(const fs::path& dir, const std::string& name, const std::string& text) {
  std::ofstream(dir / name, std::ios::binary) << text;
  return dir / name;
}

// The message of the exception `f` throws; "(none)" if it throws none. Any exception type is
// caught, so that a stray one fails the comparison instead of the test binary.
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(none)";
}

}  // namespace

TEST(ImportErrors, AT1RangeBeyondTheBoundIsRefusedNotBuilt) {
  const fs::path dir = fresh_test_dir("kforge_import_errors");
  OJson t1 = sample("kernel_tuner_t1_input.json");
  for (const char* values : {"range(10**12)", "list(range(-9223372036854775807, 9223372036854775807, 3))",
                             "[2*i for i in range(10**12)]"}) {
    t1["ConfigurationSpace"]["TuningParameters"][0]["Values"] = values;
    const fs::path path = write(dir, "t1.json", t1.dump(1));
    const std::string msg = error_of([&] { t1_family_draft(path); });
    EXPECT_EQ(msg.rfind(path.string() + ": ConfigurationSpace/TuningParameters/0/Values (block_size_x): ", 0), 0u)
        << msg;
    EXPECT_NE(msg.find("a parameter has at most 10000"), std::string::npos) << msg;
  }
  // At the bound, and past int64 in its arguments.
  EXPECT_EQ(t1_values("range(10000)").size(), 10000u);
  EXPECT_EQ(t1_values("range(9223372036854775806, 9223372036854775807)"),
            OJson::array({int64_t{9223372036854775806}}));
  EXPECT_EQ(t1_values("range(5, -5, -4)"), OJson::array({5, 1, -3}));
  EXPECT_EQ(error_of([] { t1_values("range(10**30)"); }).rfind("range() argument '10**30': number 1e+30 does not fit", 0),
            0u);
  EXPECT_NE(error_of([] { t1_values("[" + std::string(10000, '1') + std::string(20002, ',') + "]"); })
                .find("a parameter has at most 10000"),
            std::string::npos);
}

TEST(ImportErrors, T1TypeErrorsNameTheField) {
  const fs::path dir = fresh_test_dir("kforge_import_errors");
  struct Case {
    std::function<void(OJson&)> spoil;
    std::string field;
  };
  const std::vector<Case> cases = {
      {[](OJson& j) { j["ConfigurationSpace"]["TuningParameters"][0]["Name"] = 5; },
       "ConfigurationSpace/TuningParameters/0/Name: expected a string, got number"},
      {[](OJson& j) { j["ConfigurationSpace"]["TuningParameters"] = "x"; },
       "ConfigurationSpace/TuningParameters: expected a list, got string"},
      {[](OJson& j) { j["ConfigurationSpace"]["TuningParameters"][0] = 7; },
       "ConfigurationSpace/TuningParameters/0: expected an object, got number"},
      {[](OJson& j) { j["KernelSpecification"]["KernelName"] = OJson::array(); },
       "KernelSpecification/KernelName: expected a string, got array"},
      {[](OJson& j) { j["KernelSpecification"]["Arguments"][0]["MemoryType"] = nullptr; },
       "KernelSpecification/Arguments/0/MemoryType: expected a string, got null"},
      {[](OJson& j) { j["KernelSpecification"]["LocalSize"] = 3; },
       "KernelSpecification/LocalSize: expected an object, got number"},
      {[](OJson& j) { j["KernelSpecification"]["SharedMemory"] = "lots"; },
       "KernelSpecification/SharedMemory: expected an integer, got string"},
      {[](OJson& j) { j["KernelSpecification"]["ProblemSize"] = "big"; },
       "KernelSpecification/ProblemSize: expected an integer or a list, got string"},
  };
  for (const Case& c : cases) {
    OJson t1 = sample("kernel_tuner_t1_input.json");
    c.spoil(t1);
    const fs::path path = write(dir, "t1.json", t1.dump(1));
    EXPECT_EQ(error_of([&] { t1_family_draft(path); }), path.string() + ": " + c.field);
  }
}

TEST(ImportErrors, KernelTunerAndT4TypeErrorsNameTheField) {
  const fs::path dir = fresh_test_dir("kforge_import_errors");
  const auto expect = [&](const OJson& j, const std::string& field) {
    const fs::path path = write(dir, "in.json", j.dump(1));
    EXPECT_EQ(error_of([&] { import_recorded(path); }), path.string() + ": " + field);
  };
  OJson kt = sample("kernel_tuner_test_cache_file.json");
  kt["tune_params_keys"] = OJson::array({1});
  expect(kt, "tune_params_keys/0: expected a name, got number");
  kt = sample("kernel_tuner_test_cache_file.json");
  kt["tune_params_keys"] = "block_size_x";
  expect(kt, "tune_params_keys: expected a list of names, got string");
  kt = sample("kernel_tuner_test_cache_file.json");
  kt["device_name"] = 4000;
  expect(kt, "device_name: expected a string, got number");
  kt = sample("kernel_tuner_test_cache_file.json");
  kt["kernel_name"] = OJson::object();
  expect(kt, "kernel_name: expected a string, got object");

  OJson t4 = sample("t4_vector_add_with_failures.json");
  t4["results"][2] = 5;
  expect(t4, "results/2: expected an object, got number");
  t4 = sample("t4_vector_add_with_failures.json");
  t4["results"][1]["configuration"] = "x";
  expect(t4, "results/1/configuration: expected an object, got string");
  t4 = sample("t4_vector_add_with_failures.json");
  t4["results"][0]["invalidity"] = 0;
  expect(t4, "results/0/invalidity: expected a string, got number");
  t4 = sample("t4_vector_add_with_failures.json");
  t4["results"][0]["measurements"][0]["name"] = true;
  expect(t4, "results/0/measurements/0/name: expected a string, got boolean");
  t4 = sample("t4_vector_add_with_failures.json");
  t4["results"][0]["measurements"][0].erase("value");
  expect(t4, "results/0/measurements/0: the time has no value");
  t4 = sample("t4_vector_add_with_failures.json");
  t4["results"][0]["measurements"][0]["unit"] = "fortnights";
  expect(t4, "results/0/measurements/0/unit: unknown time unit 'fortnights'");
}

TEST(ImportErrors, ANumberOverflowNamesTheFileLineAndField) {
  const fs::path dir = fresh_test_dir("kforge_import_errors");
  std::string text = read(fs::path(KFORGE_TEST_DIR) / "data" / "kernel_tuner_test_cache_file.json");
  const size_t at = text.find("\"time\": ");
  ASSERT_NE(at, std::string::npos);
  text.replace(at + 8, text.find(',', at) - at - 8, "1e400");
  const fs::path path = write(dir, "kt.json", text);
  const std::string msg = error_of([&] { import_recorded(path); });
  EXPECT_EQ(msg.rfind(path.string() + ": invalid JSON: number overflow parsing '1e400' at line ", 0), 0u) << msg;
  EXPECT_NE(msg.find("(at /cache/128/time)"), std::string::npos) << msg;

  // A baseline file alike.
  const fs::path baselines = write(dir, "b.json", "[{\"family\": \"toy\",\n \"median_us\": -1e999}]");
  EXPECT_EQ(error_of([&] { read_baseline_file(baselines.string()); }),
            baselines.string() + ": invalid JSON: number overflow parsing '-1e999' at line 2, column 20 (at /0/median_us)");
}

TEST(ImportErrors, BaselineFilesAreBounded) {
  const fs::path dir = fresh_test_dir("kforge_import_errors");
  const fs::path big = dir / "big.json";
  std::ofstream(big) << "[";
  fs::resize_file(big, kMaxBaselineBytes + 1);  // a sparse file: nothing is written
  EXPECT_EQ(error_of([&] { read_baseline_file(big.string()); }),
            big.string() + ": the file is larger than 4 MiB (the bound of baseline files, README.md)");
  nlohmann::json many = nlohmann::json::array();
  for (size_t i = 0; i <= kMaxBaselineRecords; ++i) many.push_back(nullptr);
  EXPECT_EQ(error_of([&] { parse_baseline_records(many, "many.json", {}, {}); }),
            "many.json: 10001 records; a file holds at most 10000 (split it)");
}

TEST(ImportErrors, LongFilesImportInLinearTime) {
  const fs::path dir = fresh_test_dir("kforge_import_errors");
  // T4: 100,000 results of distinct values (a search per value and per name was quadratic).
  std::string t4 = R"({"schema_version": "1.0.0", "results": [)";
  for (int i = 0; i < 100000; ++i)
    t4 += std::string(i ? "," : "") + R"({"configuration": {"x": )" + std::to_string(i) + R"(, "y": )" +
          std::to_string(i % 3) + R"(}, "invalidity": "correct", "measurements": [{"name": "time", "value": )" +
          std::to_string(1 + i) + R"(, "unit": "ms"}]})";
  const fs::path t4_path = write(dir, "t4.json", t4 + "]}");
  auto t0 = std::chrono::steady_clock::now();
  const RecordedSpace a = import_recorded(t4_path);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 5.0);
  EXPECT_EQ(a.size(), 100000u);
  // Kernel Tuner: 100,000 values of a parameter and as many entries, keyed by their spelling only
  // (the parser searched the cache's keys once per key).
  std::string values, cache;
  for (int i = 0; i < 100000; ++i) {
    values += std::string(i ? "," : "") + std::to_string(i);
    cache += std::string(i ? "," : "") + "\"" + std::to_string(i) + R"(": {"time": )" + std::to_string(1 + i) + "}";
  }
  const fs::path kt_path = write(dir, "kt.json",
                                 R"({"tune_params_keys": ["x"], "tune_params": {"x": [)" + values + R"(]}, "cache": {)" +
                                     cache + "}}");
  t0 = std::chrono::steady_clock::now();
  const RecordedSpace b = import_recorded(kt_path);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 5.0);
  EXPECT_EQ(b.size(), 100000u);
  EXPECT_EQ(to_string(b.optimum()->config), "x=0");
  EXPECT_EQ(to_string(b.points().back().config), "x=99999");  // the file's order
}
