// A seeded fuzzer over the shipped and test family specs: random deletions, duplications,
// retypes and extreme values (json_mutate.hpp; test_import_fuzz.cpp does the same to imports),
// number overflows and nesting too deep. Each mutant is loaded and, when it loads, its
// expressions are evaluated for a few configs as `kforge check` and a campaign would, a few
// paths walked down its space, and its export's CMake subproject generated for a drawn target. Nothing may crash; every load error is one line naming the spec file.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>

#include "export/cmake_gen.hpp"
#include "export/commands.hpp"
#include "family/config_check.hpp"
#include "family/family.hpp"
#include "json_mutate.hpp"
#include "test_dir.hpp"
#include "util/progress_line.hpp"

namespace fs = std::filesystem;
using namespace kf;
using json_mutate::expect_one_line;

namespace {

// The specs to mutate, each with its folder mirrored into `root`: its sources copied (a template
// must really lie in the spec's folder, family/template_roots.hpp) and the folder's siblings
// linked, so "../kernel_templates" still resolves.
std::vector<fs::path> mirror_specs(const fs::path& root) {
  const fs::path source = KFORGE_SOURCE_DIR;
  std::vector<fs::path> originals;
  for (const fs::path& dir : {source / "search_spaces", source / "tests" / "families"})
    for (const auto& e : fs::recursive_directory_iterator(dir))
      if (e.path().extension() == ".json") originals.push_back(e.path());
  std::sort(originals.begin(), originals.end());
  std::vector<fs::path> mirrored;
  for (const fs::path& spec : originals) {
    const fs::path folder = spec.parent_path();
    const fs::path top = root / std::to_string(mirrored.size());
    const fs::path copy_folder = top / folder.filename();
    fs::create_directories(copy_folder);
    for (const auto& e : fs::directory_iterator(folder.parent_path()))
      if (e.path() != folder) fs::create_symlink(e.path(), top / e.path().filename());
    copy_spec_sources(folder, copy_folder);
    fs::copy_file(spec, copy_folder / spec.filename());
    mirrored.push_back(copy_folder / spec.filename());
  }
  return mirrored;
}

std::vector<nlohmann::json> spec_extremes() {
  std::string chain = "1";
  for (int i = 0; i < 3000; ++i) chain += " + 1";
  return {nullptr, true, 0, -1, INT64_MAX, INT64_MIN, 18446744073709551615ull, 1e308, -1e308, 0.5,
          "", "x", "1 / 0", "ceil_div(1, 0)", "N % 0", "-9223372036854775807 - 2", "sqrt(-1)", "((((1",
          "'f99'", "device.nope", "9223372036854775807 * 2", chain, std::string(5000, '('),
          std::string(20000, 'f'), json_mutate::kOverflow, json_mutate::kDeep,
          nlohmann::json::array(), nlohmann::json::object(), nlohmann::json::array({1, "a", nullptr}),
          {{"type", "int"}, {"min", 5}, {"max", 1}}, {{"type", "enum"}, {"values", nlohmann::json::array()}}};
}

// Evaluates what check and a campaign evaluate, for the defaults and a few random configs.
void exercise(const Family& f, std::mt19937_64& rng, const std::string& what) {
  std::vector<Shape> shapes;
  for (const auto& [name, list] : f.suites)
    for (const Shape& s : list) shapes.push_back(s);
  if (shapes.empty()) return;
  const Shape& shape = shapes[rng() % shapes.size()];
  const DeviceLimits d = DeviceLimits::for_arch("sm_90");
  std::vector<Config> configs = f.defaults;
  for (int k = 0; k < 3; ++k) {
    Config c;
    for (const ParamSpec& p : f.params)
      if (!p.values.empty()) c[p.name] = p.values[rng() % p.values.size()];
    configs.push_back(c);
  }
  // The progress line of `check` carries the shape (a 20,000-character dtype value, say).
  const std::string line = ProgressLine("check " + f.name + " sm_90 " + to_string(shape), "compiled", 10).text(1, 1.0);
  EXPECT_NE(line.find(to_string(shape)), std::string::npos) << what;
  try {
    const ExpressionReport r = check_expressions(f, configs, shape, d);
    for (const std::string& e : r.first) expect_one_line(e, what);
    for (const Config& c : configs)
      if (auto v = violated_constraint(f, c, shape, d)) expect_one_line(*v, what);
    gate_shapes(f, shape);
  } catch (const std::exception& e) {
    expect_one_line(e.what(), what);
  }
  try {
    // A few random paths down the space: a constraint or derived value that fails on the way
    // is the spec's error, in one line that names the spec.
    std::mt19937_64 draw(rng());
    make_space(f, shape, d).estimate_valid(draw, 3);
  } catch (const SpecError& e) {
    expect_one_line(e.what(), what);
    EXPECT_NE(std::string(e.what()).find(f.spec_path.filename().string()), std::string::npos) << what << ": " << e.what();
  } catch (const std::exception& e) {
    expect_one_line(e.what(), what);
  }
}

// The export's CMakeLists.txt for the mutant's compile options, now and then with a hostile
// option or target added: each option reaches COMPILE_OPTIONS as one list element holding nothing
// that changes CMake's list or string or that make would run ('"', ';', '$', '#', '\\'), or the
// export is refused in one line. Cheap: nothing is rendered or compiled.
void exercise_export(const Family& f, std::mt19937_64& rng, const std::string& what) {
  static const std::vector<std::string> hostile = {"",         "-DX=\"1\"", "a;b",       "$(touch x)", "#x",
                                                   "-DX=\\", "-lineinfo", "-DA=1 -DB", "-I/tmp",     "SHELL:-x y"};
  static const std::vector<std::string> arches = {"sm_90", "sm_90a", "sm_89", "sm_100f", "90a",
                                                  "a",     "",       "sm_90\";x", "sm_9$(x)a"};
  exporter::KernelModel m;
  m.family = &f;
  m.name = exporter::c_identifier(f.name);
  m.arch = arches[rng() % arches.size()];
  m.variant.options = f.compile_options;
  if (rng() % 2) m.variant.options.push_back(hostile[rng() % hostile.size()]);
  std::string cmake;
  try {
    cmake = exporter::generate_cmake(m.name, {m}, rng() % 2 ? m.name + "_dispatch" : "");
  } catch (const std::runtime_error& e) {
    expect_one_line(e.what(), what);
    return;
  }
  size_t options = 1;  // the target's flag
  for (const std::string& o : exporter::nvcc_flags(m.variant.options)) options += o.empty() ? 0 : 1;
  const std::string key = "COMPILE_OPTIONS \"";
  for (size_t at = cmake.find(key); at != std::string::npos; at = cmake.find(key, at + 1)) {
    const size_t begin = at + key.size(), end = cmake.find('"', begin);
    ASSERT_NE(end, std::string::npos) << what;
    const std::string list = cmake.substr(begin, end - begin);
    EXPECT_EQ(list.find_first_of("$#\\\n"), std::string::npos) << what << ": " << list;
    EXPECT_EQ(static_cast<size_t>(std::count(list.begin(), list.end(), ';')) + 1, options) << what << ": " << list;
  }
}

}  // namespace

TEST(SpecFuzz, MutatedSpecsNeverCrashAndErrorsAreOneLine) {
  const fs::path root = fresh_test_dir("kforge_spec_fuzz");
  const std::vector<fs::path> specs = mirror_specs(root);
  ASSERT_GE(specs.size(), 6u);
  std::vector<std::string> originals;
  for (const fs::path& p : specs) {
    std::ifstream in(p);
    originals.push_back(std::string(std::istreambuf_iterator<char>(in), {}));
  }
  // KFORGE_FUZZ_SEED=N runs another sequence of mutants (to look further than CI does).
  const char* seed = std::getenv("KFORGE_FUZZ_SEED");
  std::mt19937_64 rng(seed ? std::strtoull(seed, nullptr, 10) : 20261124);
  const std::vector<nlohmann::json> extremes = spec_extremes();
  size_t loaded = 0, refused = 0;
  constexpr int kCases = 400;
  for (int i = 0; i < kCases; ++i) {
    const size_t which = rng() % specs.size();
    nlohmann::json j = nlohmann::json::parse(originals[which], nullptr, false);
    std::string text = originals[which];  // a test spec that is deliberately not JSON stays as it is
    if (!j.is_discarded()) {
      const int mutations = 1 + static_cast<int>(rng() % 3);
      for (int m = 0; m < mutations; ++m) json_mutate::mutate(j, rng, extremes);
      text = json_mutate::expand_placeholders(j.dump(1), rng);
    }
    // Sometimes a number overflows or the raw text is cut short (no longer JSON).
    text = json_mutate::mutate_text(text, rng);
    std::ofstream(specs[which], std::ios::trunc) << text;
    const std::string what = "case " + std::to_string(i) + " (" + specs[which].filename().string() + ")";
    try {
      const Family f = load_family(specs[which]);
      ++loaded;
      exercise(f, rng, what);
      exercise_export(f, rng, what);
    } catch (const std::exception& e) {
      ++refused;
      const std::string msg = e.what();
      expect_one_line(msg, what);
      EXPECT_NE(msg.find(specs[which].filename().string()), std::string::npos) << what << ": " << msg;
    }
  }
  EXPECT_EQ(loaded + refused, static_cast<size_t>(kCases));
  EXPECT_GT(refused, 0u);
  EXPECT_GT(loaded, 0u);  // some mutants are valid specs: their evaluation was exercised too
}
