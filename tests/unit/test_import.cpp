// Importers of Kernel Tuner caches and T4 results, on the public samples in tests/data.
#include <gtest/gtest.h>

#include <filesystem>
#include <limits>
#include <fstream>
#include <sstream>

#include "importers/import.hpp"

using namespace kf;

namespace {

std::string data(const std::string& file) { return std::string(KFORGE_TEST_DIR) + "/data/" + file; }

const ParamSpec& param(const RecordedSpace& r, const std::string& name) {
  for (const auto& p : r.space().params())
    if (p.name == name) return p;
  throw std::out_of_range(name);
}

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::filesystem::path temp_file(const std::string& name, const std::string& text) {
  auto p = std::filesystem::temp_directory_path() / ("kforge_test_import_" + name);
  std::ofstream(p) << text;
  return p;
}

}  // namespace

TEST(ImportKernelTuner, VectorAddCache) {
  RecordedSpace r = import_recorded(data("kernel_tuner_test_cache_file.json"));
  EXPECT_EQ(r.name(), "vector_add on NVIDIA RTX A4000");
  EXPECT_EQ(r.info()["format"], "kernel_tuner_cache");
  EXPECT_EQ(r.info()["problem_size"], 100);
  EXPECT_EQ(r.size(), 15u);
  EXPECT_EQ(r.failed(), 0u);
  ASSERT_EQ(r.space().params().size(), 1u);
  const auto& bx = param(r, "block_size_x");
  ASSERT_EQ(bx.values.size(), 15u);
  EXPECT_EQ(bx.values.front(), Value(int64_t{128}));
  EXPECT_EQ(bx.values.back(), Value(int64_t{1024}));
  ASSERT_NE(r.optimum(), nullptr);
  EXPECT_EQ(to_string(r.optimum()->config), "block_size_x=768");
  EXPECT_NEAR(*r.optimum()->time_us, 31.757714226841927, 1e-9);  // 0.0317... ms
}

TEST(ImportKernelTuner, MixedParameterTypes) {
  RecordedSpace r = import_recorded(data("kernel_tuner_strategies_test_cache_file.json"));
  EXPECT_EQ(r.size(), 15u);
  // Domain order and parameter order as in the file.
  std::vector<std::string> names;
  for (const auto& p : r.space().params()) names.push_back(p.name);
  EXPECT_EQ(names, (std::vector<std::string>{"block_size_x", "test_string", "test_single", "test_bool", "test_mixed"}));
  EXPECT_EQ(param(r, "test_string").values, (std::vector<Value>{std::string("alg_1"), std::string("alg_2")}));
  EXPECT_EQ(param(r, "test_single").values, (std::vector<Value>{int64_t{15}}));
  EXPECT_EQ(param(r, "test_bool").values, (std::vector<Value>{std::string("True"), std::string("False")}));
  EXPECT_EQ(param(r, "test_mixed").values,
            (std::vector<Value>{std::string("test"), int64_t{1}, std::string("True"), std::string("2.45")}));
  EXPECT_EQ(r.space().cardinality(), 15u * 2 * 1 * 2 * 4);
  EXPECT_EQ(to_string(r.optimum()->config),
            "block_size_x=768,test_bool=True,test_mixed=2.45,test_single=15,test_string=alg_2");
  EXPECT_NEAR(*r.optimum()->time_us, 31.757714226841927, 1e-9);
}

TEST(ImportKernelTuner, SyntheticFp32WithClockParameter) {
  RecordedSpace r = import_recorded(data("kernel_tuner_synthetic_fp32_cache_NVIDIA_RTX_A4000.json"));
  EXPECT_EQ(r.size(), 10u);
  EXPECT_EQ(r.failed(), 0u);
  EXPECT_EQ(param(r, "nvml_gr_clock").values.front(), Value(int64_t{2100}));  // file order kept
  EXPECT_EQ(to_string(r.optimum()->config), "block_size_x=1024,nr_inner=1024,nr_outer=64,nvml_gr_clock=1905");
  EXPECT_NEAR(*r.optimum()->time_us, 76957.06253051758, 1e-6);
}

TEST(ImportKernelTuner, ErrorStringsAreFailures) {
  RecordedSpace r = import_recorded(data("kernel_tuner_t4_cache_invalids.json"));
  EXPECT_EQ(r.size(), 1u);
  EXPECT_EQ(r.failed(), 1u);
  EXPECT_EQ(r.optimum(), nullptr);
}

TEST(ImportKernelTuner, EntriesWithoutValuesAreKeyedByTheirKey) {
  // The reduced convolution caches keep only "time": values come from the keys.
  RecordedSpace r = import_recorded(data("kernel_tuner_convolution_MI50_times.json"));
  EXPECT_EQ(r.size(), 2442u);
  EXPECT_EQ(r.failed(), 0u);
  EXPECT_EQ(r.space().cardinality(), 16u * 5 * 4 * 4 * 2 * 2);
  EXPECT_EQ(to_string(r.optimum()->config),
            "block_size_x=128,block_size_y=2,read_only=1,tile_size_x=1,tile_size_y=2,use_padding=0");
  EXPECT_NEAR(*r.optimum()->time_us, 1486.292589455843, 1e-6);
  RecordedSpace big = import_recorded(data("kernel_tuner_convolution_large_cache_times.json"));
  EXPECT_EQ(big.size(), 450u);
  EXPECT_NEAR(*big.optimum()->time_us, 1169.2934073507786, 1e-6);
}

TEST(ImportKernelTuner, OpenCacheFromAnInterruptedRun) {
  // Kernel Tuner's open form: the last entry, then no closing braces of cache and file.
  std::string text = read(data("kernel_tuner_test_cache_file.json"));
  for (int brace = 0; brace < 2; ++brace) {
    while (!text.empty() && text.back() != '}') text.pop_back();
    text.pop_back();
  }
  while (!text.empty() && text.back() != '}') text.pop_back();
  auto with_comma = temp_file("open_comma.json", text + ",");
  auto without = temp_file("open.json", text + "\n");
  for (const auto& p : {with_comma, without}) {
    RecordedSpace r = import_recorded(p);
    EXPECT_EQ(r.size(), 15u) << p;
    EXPECT_NEAR(*r.optimum()->time_us, 31.757714226841927, 1e-9);
    std::filesystem::remove(p);
  }
}

TEST(ImportKernelTuner, KernelTunerErrorValueIsAFailure) {
  nlohmann::ordered_json j = {{"tune_params_keys", {"a"}},
                              {"tune_params", {{"a", {1, 2}}}},
                              {"cache", {{"1", {{"a", 1}, {"time", 1e20}}}, {"2", {{"a", 2}, {"time", 0.5}}}}}};
  RecordedSpace r = import_kernel_tuner_cache(j, "t");
  EXPECT_EQ(r.failed(), 1u);
  EXPECT_DOUBLE_EQ(*r.optimum()->time_us, 500.0);
  j["cache"]["3"] = {{"a", 3}, {"time", 1.0}};
  EXPECT_THROW(import_kernel_tuner_cache(j), ImportError);  // 3 is not in the domain
}

// A numeric time must be a measurement: 0, -0.0, a negative, a denormal, one below a nanosecond or an
// infinity is refused in one line naming the entry (read as a time, 0 would be the space's optimum).
TEST(ImportKernelTuner, TimesThatAreNoMeasurementAreRefusedNamingTheEntry) {
  for (const double ms : {0.0, -0.0, -1.0, 1e-320, 1e-7, std::numeric_limits<double>::infinity(),
                          std::numeric_limits<double>::quiet_NaN()}) {
    nlohmann::ordered_json j = {{"tune_params_keys", {"a"}},
                                {"tune_params", {{"a", {1, 2}}}},
                                {"cache", {{"1", {{"a", 1}, {"time", 0.5}}}, {"2", {{"a", 2}, {"time", ms}}}}}};
    try {
      import_kernel_tuner_cache(j, "t");
      ADD_FAILURE() << "accepted time " << ms;
    } catch (const ImportError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("cache entry '2'"), std::string::npos) << what;
      EXPECT_NE(what.find("not a measurement"), std::string::npos) << what;
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    }
  }
  // A nanosecond is the floor; Kernel Tuner's error value stays a failure.
  nlohmann::ordered_json j = {{"tune_params_keys", {"a"}},
                              {"tune_params", {{"a", {1, 2}}}},
                              {"cache", {{"1", {{"a", 1}, {"time", 2e-6}}}, {"2", {{"a", 2}, {"time", 1e20}}}}}};
  const RecordedSpace r = import_kernel_tuner_cache(j, "t");
  EXPECT_DOUBLE_EQ(*r.optimum()->time_us, 2e-3);
  EXPECT_EQ(r.failed(), 1u);
}

// tune_params_keys orders the values of every cache key: a list other than tune_params' names would give
// times to configs they were not measured with (an empty one, every time to one config).
TEST(ImportKernelTuner, KeysThatDoNotMatchTheParametersAreRefused) {
  const nlohmann::ordered_json good = {
      {"tune_params_keys", {"a", "b"}},
      {"tune_params", {{"a", {1, 2}}, {"b", {8, 16}}}},
      {"cache", {{"1,8", {{"a", 1}, {"b", 8}, {"time", 0.5}}}, {"2,16", {{"a", 2}, {"b", 16}, {"time", 0.7}}}}}};
  EXPECT_EQ(import_kernel_tuner_cache(good, "t").size(), 2u);
  const auto refused = [&](nlohmann::ordered_json j, const std::string& why) {
    try {
      import_kernel_tuner_cache(j, "t");
      ADD_FAILURE() << "accepted: " << j.dump();
    } catch (const ImportError& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  };
  auto j = good;
  j["tune_params_keys"] = nlohmann::ordered_json::array();
  refused(j, "tune_params_keys lacks 'a'");
  j["tune_params_keys"] = {"a"};
  refused(j, "tune_params_keys lacks 'b'");
  j["tune_params_keys"] = {"a", "b", "c"};
  refused(j, "tune_params_keys names 'c', which tune_params lacks");
  j["tune_params_keys"] = {"a", "a", "b"};
  refused(j, "names 'a' twice");
  j = good;
  j["tune_params_keys"] = {"b", "a"};  // the keys were written a,b: every entry contradicts its fields
  refused(j, "cache entry '1,8': its key gives 'b' the value '1' but its field says '8'");
  j = good;
  j["cache"]["2"] = {{"a", 2}, {"time", 0.3}};  // a key of one value for two parameters
  refused(j, "cache entry '2': its key has 1 values for 2 parameters");
  // Entries with no fields of their own are read from their keys, in tune_params_keys order.
  nlohmann::ordered_json bare = good;
  bare["cache"] = {{"1,16", {{"time", 0.5}}}};
  EXPECT_EQ(to_string(import_kernel_tuner_cache(bare, "t").points().at(0).config), "a=1,b=16");
}

TEST(ImportT4, KernelTunerOutput) {
  RecordedSpace r = import_recorded(data("kernel_tuner_t4_target.json"));
  EXPECT_EQ(r.info()["format"], "t4");
  EXPECT_EQ(r.size(), 1u);
  EXPECT_EQ(r.space().params().size(), 10u);
  EXPECT_EQ(r.space().params().front().name, "block_size_x");  // file order kept
  EXPECT_NEAR(*r.optimum()->time_us, 12262.957006692886, 1e-6);  // unit "" is ms
}

TEST(ImportT4, FailuresAndInferredDomains) {
  RecordedSpace r = import_recorded(data("t4_vector_add_with_failures.json"));
  EXPECT_EQ(r.name(), "t4_vector_add_with_failures");
  EXPECT_EQ(r.size(), 15u);
  EXPECT_EQ(r.failed(), 2u);
  const auto& bx = param(r, "block_size_x");
  ASSERT_EQ(bx.values.size(), 15u);
  EXPECT_EQ(bx.values.front(), Value(int64_t{128}));
  EXPECT_EQ(bx.values.back(), Value(int64_t{1024}));
  EXPECT_EQ(to_string(r.optimum()->config), "block_size_x=768");
}

TEST(ImportT4, UnitsAndStrings) {
  nlohmann::ordered_json j = {
      {"schema_version", "1.0.0"},
      {"results",
       {{{"configuration", {{"b", 64}, {"alg", "x"}}}, {"invalidity", "correct"},
         {"measurements", {{{"name", "time"}, {"value", 2.0}, {"unit", "s"}}}}},
        {{"configuration", {{"b", 32}, {"alg", "y"}}}, {"invalidity", "correct"},
         {"measurements", {{{"name", "time"}, {"value", 3.0}, {"unit", "us"}}}}},
        {{"configuration", {{"b", 32}, {"alg", "x"}}}, {"invalidity", "constraints"},
         {"measurements", {{{"name", "time"}, {"value", "InvalidConfig"}, {"unit", "ms"}}}}}}}};
  RecordedSpace r = import_t4(j, "units");
  EXPECT_EQ(param(r, "b").values, (std::vector<Value>{int64_t{32}, int64_t{64}}));  // sorted
  EXPECT_EQ(param(r, "alg").values, (std::vector<Value>{std::string("x"), std::string("y")}));  // first seen
  EXPECT_EQ(r.failed(), 1u);
  EXPECT_DOUBLE_EQ(*r.optimum()->time_us, 3.0);
  EXPECT_DOUBLE_EQ(*r.find(parse_assignment("alg=x,b=64"))->time_us, 2e6);
}

TEST(Import, Errors) {
  auto not_json = temp_file("bad.json", "{ this is not json");
  try {
    import_recorded(not_json);
    FAIL() << "no exception";
  } catch (const ImportError& e) {
    EXPECT_NE(std::string(e.what()).find(not_json.string()), std::string::npos) << e.what();
  }
  auto other = temp_file("other.json", R"({"hello": 1})");
  EXPECT_THROW(import_recorded(other), ImportError);
  EXPECT_THROW(import_recorded("/nonexistent/kforge.json"), ImportError);
  std::filesystem::remove(not_json);
  std::filesystem::remove(other);
}
