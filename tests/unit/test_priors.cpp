// The spec's "priors": loading and validation, what the strategies make of them, and --fix's
// override (a pin leaves one value, whatever its weight).
#include <gtest/gtest.h>

#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

#include "family/family.hpp"
#include "strategy/strategy.hpp"
#include "test_dir.hpp"

using namespace kf;
namespace fs = std::filesystem;

namespace {

// The toy family with the given "priors" block, written to a test folder with copies of its
// templates (a spec reads templates from its own folder only).
fs::path toy_with_priors(const nlohmann::json& priors) {
  const fs::path toy = fs::path(KFORGE_TEST_DIR) / "families" / "toy";
  std::ifstream in(toy / "toy.json");
  nlohmann::json spec = nlohmann::json::parse(in);
  spec["priors"] = priors;
  const fs::path dir = fresh_test_dir("kf_priors");
  for (const char* f : {"kernel.cu", "reference.cu", "local.cuh", "include"})
    fs::copy(toy / f, dir / f, fs::copy_options::recursive);
  const fs::path path = dir / "toy.json";
  std::ofstream(path) << spec.dump(2);
  return path;
}

std::string load_error(const nlohmann::json& priors) {
  try {
    load_family(toy_with_priors(priors));
  } catch (const SpecError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(Priors, LoadedPerValue) {
  const Family f = load_family(toy_with_priors({{"MODE", {{"unrolled", 0}}}, {"VEC", {{"4", 0.5}}}}));
  const ParamSpec* mode = f.param("MODE");
  ASSERT_NE(mode, nullptr);
  EXPECT_EQ(mode->weights, (std::vector<double>{1.0, 0.0}));
  EXPECT_EQ(f.param("VEC")->weights, (std::vector<double>{1.0, 1.0, 0.5}));
  EXPECT_TRUE(f.param("BLOCK")->weights.empty());
}

TEST(Priors, BadPriorsAreOneLineSpecErrors) {
  EXPECT_NE(load_error({{"NOPE", {{"1", 0}}}}).find("/priors/NOPE: unknown parameter 'NOPE'"), std::string::npos);
  EXPECT_NE(load_error({{"VEC", {{"3", 0}}}}).find("'3' is not a value of 'VEC'"), std::string::npos);
  EXPECT_NE(load_error({{"VEC", {{"4", -1}}}}).find("finite number >= 0"), std::string::npos);
  EXPECT_NE(load_error({{"VEC", {{"4", "low"}}}}).find("expected a number"), std::string::npos);
  EXPECT_NE(load_error({{"MODE", {{"plain", 0}, {"unrolled", 0}}}}).find("at least one must be positive"),
            std::string::npos);
  EXPECT_NE(load_error({{"MODE", 0}}).find("/priors/MODE"), std::string::npos);
}

TEST(Priors, EveryStrategyTriesWeightZeroValuesLast) {
  // MODE=unrolled has weight 0: every strategy proposes all the plain configs first. (Known
  // results none, seeds none: what the strategy picks by itself.)
  const Family f = load_family(toy_with_priors({{"MODE", {{"unrolled", 0}}}}));
  const SearchSpace space = make_space(f, parse_shape(f, "N=4096,dtype=f16"), DeviceLimits::for_arch("sm_90"));
  size_t plain = 0;
  for (const auto& c : space.enumerate_valid()) plain += std::get<std::string>(c.at("MODE")) == "plain";
  ASSERT_GT(plain, 2u);
  for (const char* name : {"exhaustive", "random", "evo", "anneal"}) {
    StrategyContext ctx;
    ctx.space = &space;
    ctx.seed = 3;
    auto s = make_strategy(name, ctx);
    std::vector<std::string> modes;
    for (size_t i = 0; i < plain;) {
      auto got = s->ask(1);
      ASSERT_FALSE(got.empty()) << name;
      modes.push_back(std::get<std::string>(got[0].at("MODE")));
      s->tell({got[0], 1.0 + static_cast<double>(i)});
      ++i;
    }
    for (size_t i = 0; i < modes.size(); ++i) EXPECT_EQ(modes[i], "plain") << name << " proposal " << i;
  }
}
