// A seeded fuzzer over the import formats, the sibling of test_spec_fuzz.cpp: the samples in
// tests/data (Kernel Tuner caches, T4 results, a T1 problem) and a baseline list, mutated
// structurally (deletions, duplications, retypes, extreme values such as range(10**12) or a
// 20,000-character name) and textually (1e400, a 30-digit integer, 100,000 nested lists, a file
// cut short). Each mutant is imported as `kforge import` and `kforge baseline import` read it.
// Nothing may crash or take long; every error is one line that names the file; an imported
// space's name fits a progress line.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>

#include "family/family.hpp"
#include "importers/baselines.hpp"
#include "importers/import.hpp"
#include "importers/t1.hpp"
#include "json_mutate.hpp"
#include "test_dir.hpp"
#include "util/progress_line.hpp"

namespace fs = std::filesystem;
using namespace kf;
using json_mutate::expect_one_line;

namespace {

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<nlohmann::json> import_extremes() {
  return {nullptr, true, 0, -1, INT64_MAX, INT64_MIN, 18446744073709551615ull, 1e308, -1e308, 0.5, "", "x",
          std::string(20000, 'n'), "range(10**12)", "[i for i in range(10**9)]", "list(range(0, 10**15, 2))",
          "range(10**30)", "10**400", "InvalidConfig", "1 // 0", "not", "'", "ProblemSize[",
          json_mutate::kOverflow, json_mutate::kDeep, nlohmann::json::array(), nlohmann::json::object(),
          nlohmann::json::array({1, "a", nullptr}), {{"name", "time"}, {"value", "x"}}};
}

struct Format {
  std::string name;  // of the sample, or "baselines"
  std::string text;  // the sample
  // Imports the file as kforge does; returns a line to check for length (a space's name).
  std::function<std::string(const fs::path&)> import;
};

std::vector<Format> formats() {
  const fs::path data = fs::path(KFORGE_TEST_DIR) / "data";
  const auto recorded = [](const fs::path& p) {
    const RecordedSpace s = import_recorded(p);
    EXPECT_LE(s.space().params().size(), 100000u);
    return s.name();
  };
  const auto t1 = [](const fs::path& p) {
    if (!is_t1_file(p)) return import_recorded(p).name();  // as `kforge import` does
    const T1Draft d = t1_family_draft(p);
    for (const std::string& note : d.notes) expect_one_line(note, "note");
    return d.spec.dump();
  };
  // A baseline list of the toy family, the only family its loader knows.
  const auto baselines = [](const fs::path& p) {
    const auto family = [](const std::string& name) {
      if (name != "toy") throw SpecError("unknown family '" + name + "'");
      return load_family(fs::path(KFORGE_TEST_DIR) / "families" / "toy" / "toy.json");
    };
    const auto records = parse_baseline_records(read_baseline_file(p.string()), p.string(), family, {});
    return records.empty() ? std::string() : records.front().device.name;
  };
  const nlohmann::json baseline_list = nlohmann::json::array(
      {{{"family", "toy"}, {"shape", {{"N", 4096}, {"dtype", "f16"}}}, {"backend", "torch.mul"}, {"median_us", 3.5},
        {"device", {{"name", "NVIDIA H100"}, {"cc", 90}, {"sm_count", 132}, {"driver", "575.1"}}}},
       {{"family", "toy"}, {"shape", {{"N", 64}, {"dtype", "f32"}}}, {"backend", "cublas"}, {"median_us", 1.25},
        {"device", {{"name", "NVIDIA L4"}, {"cc", 89}, {"sm_count", 58}}}}});
  std::vector<Format> out;
  for (const char* f : {"kernel_tuner_test_cache_file.json", "kernel_tuner_strategies_test_cache_file.json",
                        "kernel_tuner_synthetic_fp32_cache_NVIDIA_RTX_A4000.json", "kernel_tuner_t4_cache_invalids.json",
                        "kernel_tuner_convolution_large_cache_times.json", "kernel_tuner_t4_target.json",
                        "t4_vector_add_with_failures.json"})
    out.push_back({f, read(data / f), recorded});
  out.push_back({"kernel_tuner_t1_input.json", read(data / "kernel_tuner_t1_input.json"), t1});
  out.push_back({"baselines.json", baseline_list.dump(1), baselines});
  return out;
}

}  // namespace

TEST(ImportFuzz, MutatedImportsNeverCrashNorHangAndErrorsAreOneLineNamingTheFile) {
  const fs::path root = fresh_test_dir("kforge_import_fuzz");
  const std::vector<Format> all = formats();
  const std::vector<nlohmann::json> extremes = import_extremes();
  // KFORGE_FUZZ_SEED=N runs another sequence of mutants (to look further than CI does).
  const char* seed = std::getenv("KFORGE_FUZZ_SEED");
  std::mt19937_64 rng(seed ? std::strtoull(seed, nullptr, 10) : 20261125);
  std::map<std::string, std::pair<size_t, size_t>> tally;  // format: (imported, refused)
  constexpr int kCases = 900;
  double slowest = 0;
  for (int i = 0; i < kCases; ++i) {
    const Format& f = all[rng() % all.size()];
    nlohmann::json j = nlohmann::json::parse(f.text);
    const int mutations = 1 + static_cast<int>(rng() % 3);
    for (int m = 0; m < mutations; ++m) json_mutate::mutate(j, rng, extremes);
    const std::string text = json_mutate::mutate_text(json_mutate::expand_placeholders(j.dump(1), rng), rng);
    // A name of its own per case, so an error that names the file is told from one that does not.
    const fs::path path = root / ("case" + std::to_string(i) + "_" + f.name);
    std::ofstream(path, std::ios::binary) << text;
    const std::string what = "case " + std::to_string(i) + " (" + f.name + ")";
    const auto t0 = std::chrono::steady_clock::now();
    try {
      const std::string name = f.import(path);
      ++tally[f.name].first;
      // A name read from the file (a 20,000-character device name) goes into progress lines.
      const std::string line = ProgressLine("replay " + name, "runs", SIZE_MAX).text(1, 1e-9);
      EXPECT_NE(line.find(", ETA >99h"), std::string::npos) << what;
    } catch (const std::exception& e) {
      ++tally[f.name].second;
      const std::string msg = e.what();
      expect_one_line(msg, what);
      EXPECT_EQ(msg.rfind(path.string() + ": ", 0), 0u) << what << ": " << msg.substr(0, 300);
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    slowest = std::max(slowest, s);
    EXPECT_LT(s, 3.0) << what;
    fs::remove(path);
  }
  // Every format was both imported and refused.
  for (const Format& f : all) {
    EXPECT_GT(tally[f.name].first, 0u) << f.name;
    EXPECT_GT(tally[f.name].second, 0u) << f.name;
  }
  RecordProperty("slowest_case_s", std::to_string(slowest));
  for (const auto& [name, counts] : tally)
    RecordProperty(name, std::to_string(counts.first) + " imported, " + std::to_string(counts.second) + " refused");
}
