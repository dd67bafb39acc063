// Spec loading stays near-linear in the spec's size and refuses, with one line naming the field,
// what goes past the documented bounds (docs/family_spec.md, "Limits"): 40,000 values of one
// parameter took 3.7 s and 100,000 did not finish, a 20,000-long chain of derived values 40 s;
// a number overflow (1e400) escaped as a bare nlohmann exception naming neither file nor field.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>

#include <nlohmann/json.hpp>

#include "family/family.hpp"
#include "family/spec_limits.hpp"
#include "space/space.hpp"
#include "test_dir.hpp"

using namespace kf;
namespace fs = std::filesystem;
using OJson = nlohmann::ordered_json;

namespace {

const fs::path kToyDir = fs::path(KFORGE_TEST_DIR) / "families" / "toy";

OJson toy_json() {
  std::ifstream in(kToyDir / "toy.json");
  return OJson::parse(in);
}

// dir/toy.json, the toy's templates beside it.
fs::path write(const fs::path& dir, const std::string& text) {
  if (!fs::exists(dir / "kernel.cu")) copy_spec_sources(kToyDir, dir);
  const fs::path path = dir / "toy.json";
  std::ofstream(path) << text;
  return path;
}

// The error of loading (any exception: a bare nlohmann one must fail the test's expectations
// rather than abort it), or "(loaded)".
std::string load_error(const fs::path& path) {
  try {
    load_family(path);
  } catch (const SpecError& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("(not a SpecError) ") + e.what();
  }
  return "(loaded)";
}

double seconds_to_load(const fs::path& path) {
  const auto t0 = std::chrono::steady_clock::now();
  load_family(path);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

TEST(SpecLimits, ValuesPerParameterAreBounded) {
  const fs::path dir = fresh_test_dir("kforge_spec_limits");
  OJson j = toy_json();
  OJson values = OJson::array();
  for (int64_t v = 1; v <= 40000; ++v) values.push_back(v * 64);
  j["params"]["BLOCK"] = values;
  const fs::path path = write(dir, j.dump());
  EXPECT_EQ(load_error(path), path.string() + ":/params/BLOCK: 40000 values: a parameter has at most 10000");
  // At the bound it loads, and quickly (a duplicate check per value, a search per prior weight
  // and a spelling of the whole domain per default were quadratic).
  values.erase(values.begin() + spec_limits::kMaxValuesPerParam, values.end());
  j["params"]["BLOCK"] = values;
  OJson weights = OJson::object();
  for (const auto& v : values) weights[std::to_string(v.get<int64_t>())] = 1;  // (few enough to build here)
  weights["64"] = 0.5;
  j["priors"] = {{"BLOCK", weights}};
  j["defaults"] = OJson::array();
  for (int i = 0; i < 50; ++i) j["defaults"].push_back({{"BLOCK", values.back()}, {"VEC", 2}, {"MODE", "plain"}});
  EXPECT_LT(seconds_to_load(write(dir, j.dump())), 2.0);
  EXPECT_EQ(load_family(path).params.front().weights.front(), 0.5);
  // A duplicate is still found.
  values.back() = values.front();
  j["params"]["BLOCK"] = values;
  j.erase("priors");
  j["defaults"] = OJson::array();
  EXPECT_EQ(load_error(write(dir, j.dump())), path.string() + ":/params/BLOCK/9999: value 64 is listed twice");
}

TEST(SpecLimits, DerivedValuesAreBoundedAndAChainLoadsInLinearTime) {
  const fs::path dir = fresh_test_dir("kforge_spec_limits");
  // (As text: an ordered_json object searches its keys once per key inserted.)
  const auto chain = [](size_t n) {
    OJson j = toy_json();
    j["derived"] = "@derived@";
    j["constraints"] = OJson::array();
    j["launch"] = {{"grid", OJson::array({"1"})}, {"block", OJson::array({"64"})}, {"smem", "0"}};
    std::string derived = R"({"d0": "BLOCK")";
    for (size_t i = 1; i < n; ++i) derived += ", \"d" + std::to_string(i) + "\": \"d" + std::to_string(i - 1) + " + 1\"";
    std::string text = j.dump();
    return text.replace(text.find("\"@derived@\""), 11, derived + "}");
  };
  const fs::path path = write(dir, chain(20000));
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(load_error(path), path.string() + ":/derived: 20000 derived values: at most 1000");
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 1.0);
  // At the bound: each derived value used to copy every name before it.
  EXPECT_LT(seconds_to_load(write(dir, chain(spec_limits::kMaxDerived))), 1.0);
  const Family f = load_family(path);
  EXPECT_EQ(f.derived.size(), spec_limits::kMaxDerived);
  EXPECT_EQ(make_scope(f, f.defaults.front(), f.suites.at("default").front(), DeviceLimits::for_arch("sm_90"))
                .at("d999"),
            Value{int64_t{128 + 999}});
}

TEST(SpecLimits, ConstraintsParametersAndDimsAreBounded) {
  const fs::path dir = fresh_test_dir("kforge_spec_limits");
  OJson j = toy_json();
  j["constraints"] = OJson::array();
  for (int i = 0; i < 1001; ++i) j["constraints"].push_back("BLOCK > " + std::to_string(i % 7));
  fs::path path = write(dir, j.dump());
  EXPECT_EQ(load_error(path), path.string() + ":/constraints: 1001 constraints: at most 1000");
  j = toy_json();
  for (int i = 0; i < 1000; ++i) j["params"]["P" + std::to_string(i)] = OJson::array({1});
  EXPECT_EQ(load_error(write(dir, j.dump())), path.string() + ":/params: 1003 parameters: at most 1000");
  j = toy_json();
  for (int i = 0; i < 1000; ++i) j["dims"]["D" + std::to_string(i)] = {{"type", "int"}};
  EXPECT_EQ(load_error(write(dir, j.dump())), path.string() + ":/dims: 1002 dimensions: at most 1000");
}

TEST(SpecLimits, ASpecFileLargerThanTheBoundIsNotRead) {
  const fs::path dir = fresh_test_dir("kforge_spec_limits");
  OJson j = toy_json();
  j["description"] = std::string(spec_limits::kMaxSpecBytes, 'x');
  const fs::path path = write(dir, j.dump());
  EXPECT_EQ(load_error(path), path.string() + ": the file is larger than 4 MiB (docs/family_spec.md, \"Limits\")");
}

TEST(SpecLimits, ANumberOverflowNamesTheFileLineAndField) {
  const fs::path dir = fresh_test_dir("kforge_spec_limits");
  // The toy's text with BLOCK's second value (128) replaced by `with`.
  const auto toy_text = [](const std::string& with) {
    std::string text = toy_json().dump(1);
    const size_t at = text.find("128", text.find("\"BLOCK\": ["));
    return text.replace(at, 3, with);
  };
  const fs::path path = write(dir, toy_text("1e400"));
  const std::string msg = load_error(path);
  EXPECT_EQ(msg.rfind(path.string() + ": invalid JSON: number overflow parsing '1e400' at line ", 0), 0u) << msg;
  EXPECT_NE(msg.find("(at /params/BLOCK/1)"), std::string::npos) << msg;
  // A 30-digit integer is a JSON number too large for an integer: named where it is read.
  EXPECT_EQ(load_error(write(dir, toy_text("123456789012345678901234567890"))),
            path.string() + ":/params/BLOCK/1: expected an int like the other values, got a number");
  // Plain syntax errors keep nlohmann's line and column, with the field.
  const std::string syntax = load_error(write(dir, toy_text("nul")));
  EXPECT_EQ(syntax.rfind(path.string() + ": invalid JSON: parse error at line ", 0), 0u) << syntax;
  EXPECT_NE(syntax.find("(at /params/BLOCK/1): syntax error"), std::string::npos) << syntax;
  // Nesting deeper than any spec needs, which the recursive walks over a tree could not follow.
  const std::string deep = load_error(write(dir, toy_text(std::string(100000, '[') + std::string(100000, ']'))));
  EXPECT_EQ(deep.rfind(path.string() + ": invalid JSON: nested deeper than 256 levels at line ", 0), 0u)
      << deep.substr(0, 300);
  EXPECT_NE(deep.find("(at /params/BLOCK/1/0/0/"), std::string::npos) << deep.substr(0, 300);
}

TEST(SpecLimits, AnExpressionOfManyNamesListsThemInLinearTime) {
  // A balanced sum of 100,000 distinct names (nesting 17 deep): its identifiers were collected
  // with a search per name (5e9 comparisons).
  std::vector<std::string> terms;
  for (int i = 0; i < 100000; ++i) terms.push_back("n" + std::to_string(i));
  while (terms.size() > 1) {
    std::vector<std::string> next;
    for (size_t i = 0; i + 1 < terms.size(); i += 2) next.push_back("(" + terms[i] + "+" + terms[i + 1] + ")");
    if (terms.size() % 2) next.push_back(terms.back());
    terms = std::move(next);
  }
  const auto t0 = std::chrono::steady_clock::now();
  const Expr e = Expr::parse(terms.front());
  const auto names = e.identifiers();
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 3.0);
  ASSERT_EQ(names.size(), 100000u);
  EXPECT_EQ(names.front(), "n0");
  EXPECT_EQ(names.back(), "n99999");
}

// An imported space may have a parameter of more than 65,536 values (a Kernel Tuner cache):
// the cache of subtree sizes keyed index 1 and index 65,537 alike and answered one with the other.
TEST(SpecLimits, SubtreeSizesOfADomainOver65536ValuesDoNotCollide) {
  ParamSpec a{"A", {}};
  for (int64_t i = 0; i < 70000; ++i) a.values.emplace_back(i);
  const ParamSpec b{"B", {Value{int64_t{0}}, Value{int64_t{1}}}};
  const SearchSpace space(
      {a, b}, [](const Config& c) { return std::get<int64_t>(c.at("A")) == 1; },
      [](const Config&, size_t) { return true; });
  std::vector<int> path = {1, -1};
  EXPECT_EQ(space.subtree_size({{"A", Value{int64_t{1}}}}, path, 1)->weight, 2.0);
  path = {65537, -1};
  EXPECT_EQ(space.subtree_size({{"A", Value{int64_t{65537}}}}, path, 1)->weight, 0.0);
}
