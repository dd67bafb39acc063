// A constraint or derived value that cannot be evaluated (division by zero, a type error) is the
// spec's error: the walks, the samplers, violated_constraint and `kforge check` stop with one line
// naming the spec field, the expression and the config, instead of calling the config invalid
// (which silently shrank the space, down to "no valid config"). Guards inside an expression
// (&&, ||, ?:) and constraints checked earlier keep working.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli_run.hpp"
#include "family/family.hpp"
#include "test_dir.hpp"

using namespace kf;
namespace fs = std::filesystem;
using OJson = nlohmann::ordered_json;

namespace {

const fs::path kToyDir = fs::path(KFORGE_TEST_DIR) / "families" / "toy";

// The toy spec with `mutate` applied, as dir/toy.json (its templates copied beside it).
fs::path toy_variant(const fs::path& dir, const std::function<void(OJson&)>& mutate) {
  std::ifstream in(kToyDir / "toy.json");
  OJson j = OJson::parse(in);
  copy_spec_sources(kToyDir, dir);
  mutate(j);
  const fs::path path = dir / "toy.json";
  std::ofstream(path) << j.dump(2);
  return path;
}

Family toy_with(const fs::path& dir, const std::function<void(OJson&)>& mutate) {
  return load_family(toy_variant(dir, mutate));
}

const Shape kShape = {{"N", Value{int64_t{4096}}}, {"dtype", Value{std::string("f16")}}};
const DeviceLimits kH100 = DeviceLimits::for_arch("sm_90");

// The SpecError `f` throws ("(no SpecError)" when it throws none).
std::string spec_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const SpecError& e) {
    return e.what();
  }
  return "(no SpecError)";
}

Config cfg(int64_t block, int64_t vec, const char* mode) {
  return {{"BLOCK", Value{block}}, {"VEC", Value{vec}}, {"MODE", Value{std::string(mode)}}};
}

}  // namespace

TEST(SpecErrors, ADivisionByZeroInAConstraintStopsEveryWalk) {
  const fs::path dir = fresh_test_dir("kforge_spec_errors");
  // VEC = 1 divides by zero: 3 of the toy's 15 valid configs used to vanish without a word.
  const Family f = toy_with(dir, [](OJson& j) { j["constraints"].push_back("BLOCK / (VEC - 1) > 0"); });
  const SearchSpace space = make_space(f, kShape, kH100);
  const std::string where = (dir / "toy.json").string() +
                            ":/constraints/4: in 'BLOCK / (VEC - 1) > 0': division by zero (at column 7), for config ";
  // BLOCK and VEC decide it: the walk stops at the first prefix (BLOCK=64, VEC=1).
  const std::string walk = spec_error([&] { space.enumerate_valid(); });
  EXPECT_EQ(walk, where + "BLOCK=64,VEC=1 at shape N=4096,dtype=f16 on sm_90");
  EXPECT_NE(spec_error([&] { space.count_valid(); }), "(no SpecError)");
  std::mt19937_64 rng(1);
  EXPECT_NE(spec_error([&] { space.estimate_valid(rng, 50); }), "(no SpecError)");
  EXPECT_NE(spec_error([&] {
              for (int i = 0; i < 50; ++i) space.random_valid(rng);
            }),
            "(no SpecError)");
  // One config, checked on its own (export, bench, the worker): the same error.
  EXPECT_EQ(spec_error([&] { violated_constraint(f, cfg(128, 1, "plain"), kShape, kH100); }),
            where + "BLOCK=128,MODE=plain,VEC=1 at shape N=4096,dtype=f16 on sm_90");
  EXPECT_EQ(spec_error([&] { space.valid(cfg(128, 1, "plain")); }),
            where + "BLOCK=128,MODE=plain,VEC=1 at shape N=4096,dtype=f16 on sm_90");
  // A config that never reaches the division (VEC = 2) is judged as before.
  EXPECT_EQ(violated_constraint(f, cfg(128, 2, "plain"), kShape, kH100), std::nullopt);
}

TEST(SpecErrors, ATypeErrorInAConstraintIsAnError) {
  const fs::path dir = fresh_test_dir("kforge_spec_errors");
  const Family f = toy_with(dir, [](OJson& j) { j["constraints"].push_back("MODE + 1 > 0"); });
  const std::string msg = spec_error([&] { make_space(f, kShape, kH100).enumerate_valid(); });
  EXPECT_NE(msg.find(":/constraints/4: in 'MODE + 1 > 0': cannot apply '+' to string 'plain' and 1"), std::string::npos)
      << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos);
}

TEST(SpecErrors, ADerivedValueThatFailsNamesItself) {
  const fs::path dir = fresh_test_dir("kforge_spec_errors");
  // Read by a constraint: it fails where that constraint is checked.
  const Family read = toy_with(dir, [](OJson& j) {
    j["derived"]["per"] = "BLOCK / (VEC - 1)";
    j["constraints"].push_back("per > 0");
  });
  EXPECT_EQ(spec_error([&] { make_space(read, kShape, kH100).enumerate_valid(); }),
            (dir / "toy.json").string() +
                ":/derived/per: in 'BLOCK / (VEC - 1)': division by zero (at column 7), for config BLOCK=64,VEC=1 "
                "at shape N=4096,dtype=f16 on sm_90");
  // Read by no constraint (only the launch, say): it fails for a config that passes them all.
  const Family unread = toy_with(dir, [](OJson& j) { j["derived"]["spare"] = "N / (VEC - 1)"; });
  EXPECT_EQ(spec_error([&] { make_space(unread, kShape, kH100).enumerate_valid(); }),
            (dir / "toy.json").string() +
                ":/derived/spare: in 'N / (VEC - 1)': division by zero (at column 3), for config "
                "BLOCK=64,MODE=plain,VEC=1 at shape N=4096,dtype=f16 on sm_90");
  EXPECT_NE(spec_error([&] { violated_constraint(unread, cfg(64, 1, "plain"), kShape, kH100); })
                .find(":/derived/spare: "),
            std::string::npos);
  // A config some constraint rejects first never computes it: VEC=1 with MODE=unrolled.
  EXPECT_EQ(violated_constraint(unread, cfg(64, 1, "unrolled"), kShape, kH100), "MODE == 'plain' || VEC >= 2");
}

TEST(SpecErrors, GuardsInsideAnExpressionShortCircuit) {
  const fs::path dir = fresh_test_dir("kforge_spec_errors");
  for (const char* guarded : {"VEC == 1 || BLOCK / (VEC - 1) > 0", "VEC != 1 && BLOCK / (VEC - 1) > 0",
                              "VEC > 1 ? BLOCK / (VEC - 1) > 0 : 1", "!(VEC > 1) || ceil_div(BLOCK, VEC - 1) > 0"}) {
    const Family f = toy_with(dir, [&](OJson& j) { j["constraints"].push_back(guarded); });
    const bool excludes_vec1 = std::string(guarded).rfind("VEC != 1", 0) == 0;
    std::vector<Config> valid;
    EXPECT_NO_THROW(valid = make_space(f, kShape, kH100).enumerate_valid()) << guarded;
    // The toy's 15 valid configs; 3 of them have VEC = 1 (plain, one per BLOCK).
    EXPECT_EQ(valid.size(), excludes_vec1 ? 12u : 15u) << guarded;
  }
}

TEST(SpecErrors, AConstraintCheckedEarlierGuardsALaterOne) {
  const fs::path dir = fresh_test_dir("kforge_spec_errors");
  // "VEC > 1" is decided by VEC, the division by MODE (a later parameter): wherever it is
  // listed, the guard is checked first.
  const Family f = toy_with(dir, [](OJson& j) {
    j["constraints"] = OJson::array({"MODE == 'plain' || 64 / (VEC - 1) > 1", "VEC > 1"});
  });
  EXPECT_EQ(make_space(f, kShape, kH100).enumerate_valid().size(), 12u);  // 3 BLOCK x 2 VEC x 2 MODE
  EXPECT_EQ(violated_constraint(f, cfg(64, 1, "unrolled"), kShape, kH100), "VEC > 1");
  // Decided by the same parameter, list order decides: listed after the division, no guard.
  const Family unguarded =
      toy_with(dir, [](OJson& j) { j["constraints"] = OJson::array({"64 / (VEC - 1) > 1", "VEC > 1"}); });
  EXPECT_NE(spec_error([&] { make_space(unguarded, kShape, kH100).enumerate_valid(); }).find(":/constraints/0: "),
            std::string::npos);
  const Family ordered =
      toy_with(dir, [](OJson& j) { j["constraints"] = OJson::array({"VEC > 1", "64 / (VEC - 1) > 1"}); });
  EXPECT_EQ(make_space(ordered, kShape, kH100).enumerate_valid().size(), 12u);
}

TEST(SpecErrors, CheckFailsWithOneLineNamingTheExpression) {
  const fs::path dir = fresh_test_dir("kforge_spec_errors");
  toy_variant(dir, [](OJson& j) { j["constraints"].push_back("BLOCK / (VEC - 1) > 0"); });
  const CliResult r = run_kforge({"-q", "--spec-dir", dir.string(), "--cache-dir", (dir / "cache").string(), "check",
                                  "--family", "toy", "--arch", "sm_90", "--sample", "3", "-j", "1"},
                                 dir);
  EXPECT_EQ(r.rc, 1) << r.err;
  ASSERT_EQ(r.err_lines().size(), 1u) << r.err;
  EXPECT_NE(r.err.find("toy.json:/constraints/4: in 'BLOCK / (VEC - 1) > 0': division by zero"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("for config BLOCK="), std::string::npos) << r.err;
}
