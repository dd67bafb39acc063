// A seeded fuzzer over the shipped and test family specs: random deletions, duplications,
// retypes and extreme values. Each mutant is loaded and, when it loads, its expressions are
// evaluated for a few configs as `kforge check` and a campaign would. Nothing may crash; every
// load error is one line naming the spec file.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "family/config_check.hpp"
#include "family/family.hpp"
#include "test_dir.hpp"

namespace fs = std::filesystem;
using namespace kf;

namespace {

// The specs to mutate, each with its folder mirrored into `root` (symlinks for everything but
// the spec itself, and for the folder's siblings, so "../kernel_templates" still resolves).
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
    for (const auto& e : fs::directory_iterator(folder))
      if (e.path().extension() != ".json") fs::create_symlink(e.path(), copy_folder / e.path().filename());
    fs::copy_file(spec, copy_folder / spec.filename());
    mirrored.push_back(copy_folder / spec.filename());
  }
  return mirrored;
}

std::string escape_token(const std::string& key) {
  std::string out;
  for (char c : key) out += c == '~' ? std::string("~0") : c == '/' ? std::string("~1") : std::string(1, c);
  return out;
}

// JSON pointers of every node below the root.
void collect_pointers(const nlohmann::json& j, const std::string& at, std::vector<std::string>& out) {
  if (!at.empty()) out.push_back(at);
  if (j.is_object())
    for (const auto& [k, v] : j.items()) collect_pointers(v, at + "/" + escape_token(k), out);
  if (j.is_array())
    for (size_t i = 0; i < j.size(); ++i) collect_pointers(j[i], at + "/" + std::to_string(i), out);
}

nlohmann::json extreme_value(std::mt19937_64& rng) {
  std::string chain = "1";
  for (int i = 0; i < 3000; ++i) chain += " + 1";
  const std::vector<nlohmann::json> values = {
      nullptr, true, 0, -1, INT64_MAX, INT64_MIN, 18446744073709551615ull, 1e308, -1e308, 0.5,
      "", "x", "1 / 0", "ceil_div(1, 0)", "N % 0", "-9223372036854775807 - 2", "sqrt(-1)", "((((1",
      "'f99'", "device.nope", "9223372036854775807 * 2", chain, std::string(5000, '('),
      nlohmann::json::array(), nlohmann::json::object(), nlohmann::json::array({1, "a", nullptr}),
      {{"type", "int"}, {"min", 5}, {"max", 1}}, {{"type", "enum"}, {"values", nlohmann::json::array()}}};
  return values[rng() % values.size()];
}

// One random mutation of j, in place.
void mutate(nlohmann::json& j, std::mt19937_64& rng) {
  std::vector<std::string> pointers;
  collect_pointers(j, "", pointers);
  if (pointers.empty()) return;
  const nlohmann::json::json_pointer at(pointers[rng() % pointers.size()]);
  nlohmann::json& parent = j[at.parent_pointer()];
  const std::string key = at.back();
  switch (rng() % 4) {
    case 0:  // delete
      if (parent.is_object()) parent.erase(key);
      else if (parent.is_array()) parent.erase(parent.begin() + static_cast<long>(std::stoul(key)));
      break;
    case 1:  // duplicate
      if (parent.is_array()) parent.push_back(j[at]);
      else if (parent.is_object()) parent[key + "_dup"] = j[at];
      break;
    case 2: {  // retype: a value of another JSON type
      const nlohmann::json& v = j[at];
      if (v.is_string()) j[at] = 7;
      else if (v.is_number()) j[at] = std::to_string(v.get<double>());
      else if (v.is_array()) j[at] = nlohmann::json::object();
      else if (v.is_object()) j[at] = nlohmann::json::array();
      else j[at] = "null";
      break;
    }
    default:
      j[at] = extreme_value(rng);
  }
}

void expect_one_line(const std::string& msg, const std::string& what) {
  EXPECT_EQ(msg.find('\n'), std::string::npos) << what << ": " << msg;
  EXPECT_LT(msg.size(), 2000u) << what << ": " << msg.substr(0, 300);
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
  try {
    const ExpressionReport r = check_expressions(f, configs, shape, d);
    for (const std::string& e : r.first) expect_one_line(e, what);
    for (const Config& c : configs)
      if (auto v = violated_constraint(f, c, shape, d)) expect_one_line(*v, what);
    gate_shapes(f, shape);
  } catch (const std::exception& e) {
    expect_one_line(e.what(), what);
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
  std::mt19937_64 rng(20261124);
  size_t loaded = 0, refused = 0;
  constexpr int kCases = 400;
  for (int i = 0; i < kCases; ++i) {
    const size_t which = rng() % specs.size();
    nlohmann::json j = nlohmann::json::parse(originals[which], nullptr, false);
    std::string text = originals[which];  // a test spec that is deliberately not JSON stays as it is
    if (!j.is_discarded()) {
      const int mutations = 1 + static_cast<int>(rng() % 3);
      for (int m = 0; m < mutations; ++m) mutate(j, rng);
      text = j.dump(1);
    }
    // Sometimes the raw text cut short (no longer JSON).
    if (rng() % 8 == 0) text.resize(rng() % (text.size() + 1));
    std::ofstream(specs[which], std::ios::trunc) << text;
    const std::string what = "case " + std::to_string(i) + " (" + specs[which].filename().string() + ")";
    try {
      const Family f = load_family(specs[which]);
      ++loaded;
      exercise(f, rng, what);
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
