// `export --config/--define` and `kforge bench`: user configs and extra defines, the side-by-side
// function against the stand-in worker (tests/fakes/fake_worker.py: a config's time is its
// BLOCK), the bench table and JSON, experiment files (the shipped ones included).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "cli/bench_table.hpp"
#include "cli/table.hpp"
#include "export/export.hpp"
#include "family/render.hpp"
#include "family/user_config.hpp"
#include "sidebyside/experiment.hpp"
#include "sidebyside/side_by_side.hpp"
#include "test_dir.hpp"

namespace fs = std::filesystem;
using namespace kf;

namespace {

Family toy() { return load_family(fs::path(KFORGE_TEST_DIR) / "families/toy/toy.json"); }
Shape toy_shape(const Family& f) { return parse_shape(f, "N=4096,dtype=f16"); }
Config never_best() { throw std::runtime_error("best() called"); }

void write(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }

}  // namespace

TEST(UserConfig, PartialConfigKeepsTheFirstDefault) {
  const Family f = toy();
  const Config c = parse_user_config(f, "VEC=4");
  EXPECT_EQ(to_string(c), "BLOCK=128,MODE=plain,VEC=4");
  EXPECT_EQ(to_string(parse_user_config(f, "")), "BLOCK=128,MODE=plain,VEC=2");
  EXPECT_THROW(parse_user_config(f, "NOPE=1"), SpecError);
  EXPECT_THROW(parse_user_config(f, "VEC=3"), SpecError);
  EXPECT_THROW(parse_user_config(f, "VEC"), std::invalid_argument);
}

TEST(UserConfig, DefinesAreCheckedAgainstTheFamily) {
  const Family f = toy();
  const Assignment d = parse_defines(f, {"DIAG=3", "FAST=yes,EXTRA_1=0"});
  EXPECT_EQ(to_string(d), "DIAG=3,EXTRA_1=0,FAST=yes");
  EXPECT_THROW(parse_defines(f, {"block=1"}), SpecError);  // a parameter, whatever its case
  EXPECT_THROW(parse_defines(f, {"N=1"}), SpecError);      // a dimension
  EXPECT_THROW(parse_defines(f, {"1X=1"}), SpecError);
  EXPECT_THROW(parse_defines(f, {"DIAG=1", "DIAG=2"}), SpecError);
  EXPECT_THROW(parse_defines(f, {"DIAG=a b"}), SpecError);
}

TEST(UserConfig, VariantTextTakesBestOverridesAndItsOwnDefines) {
  const Family f = toy();
  const auto best = [] { return Config{{"BLOCK", int64_t{256}}, {"VEC", int64_t{4}}, {"MODE", std::string("unrolled")}}; };
  const UserVariant a = parse_user_variant(f, "best,VEC=2;DIAG=3", best);
  EXPECT_EQ(to_string(a.config), "BLOCK=256,MODE=unrolled,VEC=2");
  EXPECT_EQ(to_string(a.defines), "DIAG=3");
  const UserVariant b = parse_user_variant(f, "BLOCK=64", never_best);
  EXPECT_EQ(to_string(b.config), "BLOCK=64,MODE=plain,VEC=2");
  EXPECT_TRUE(b.defines.empty());
  EXPECT_EQ(to_string(parse_user_variant(f, " best ", best).config), "BLOCK=256,MODE=unrolled,VEC=4");
  EXPECT_THROW(parse_user_variant(f, "best", never_best), std::runtime_error);
  EXPECT_THROW(parse_user_variant(f, "best,VEC=3", best), SpecError);
}

TEST(UserConfig, DefinesRenderLikeParamsAndChangeTheHash) {
  const Family f = toy();
  const Shape s = toy_shape(f);
  const Config c = parse_user_config(f, "");
  const Variant plain = render_variant(f, c, s);
  const Variant diag = render_variant(f, c, s, {{"DIAG", int64_t{3}}, {"PATH", std::string("fast")}});
  EXPECT_NE(diag.source.find("#define KF_DIAG 3\n"), std::string::npos);
  EXPECT_NE(diag.source.find("#define KF_PATH_FAST 1\n"), std::string::npos);
  EXPECT_EQ(plain.source.find("KF_DIAG"), std::string::npos);
  EXPECT_NE(plain.hash, diag.hash);
  EXPECT_EQ(diag.hash, render_variant(f, c, s, {{"DIAG", int64_t{3}}, {"PATH", std::string("fast")}}).hash);
  EXPECT_NE(diag.hash, render_variant(f, c, s, {{"DIAG", int64_t{2}}, {"PATH", std::string("fast")}}).hash);
}

TEST(Table, AlignsColumnsAndKeepsEveryFieldInJson) {
  cli::Table t({{"name", "name", 6, true}, {"us", "us", 8, false, 3}, {"note", "note", 0, true}});
  t.add({{"name", "a"}, {"us", 1.5}, {"hidden", 7}});
  t.add({{"name", "longer_name"}, {"us", nullptr}, {"note", "x"}}, {{"us", "n/a"}});
  EXPECT_EQ(t.text(), "name         us note\n"
                      "a         1.500 -\n"
                      "longer_name      n/a x\n");
  ASSERT_EQ(t.json().size(), 2u);
  EXPECT_EQ(t.json()[0]["hidden"], 7);
}

TEST(BenchReport, RatiosToTheFirstAndNoTimeForAFailedGate) {
  const Family f = toy();
  const Shape s = toy_shape(f);
  std::vector<Contender> cs{{"first", parse_user_config(f, ""), {}},
                            {"second", parse_user_config(f, "VEC=4"), {{"DIAG", int64_t{1}}}},
                            {"broken", parse_user_config(f, "VEC=1"), {}}};
  SideBySideRun run;
  run.contenders.resize(3);
  run.rounds = 5;
  std::vector<ContenderResult>& rs = run.contenders;
  rs[0].timing = TimingStats{};
  rs[0].timing->median_us = 2.0;
  rs[0].timing->ci_lo_us = 1.9;
  rs[0].timing->ci_hi_us = 2.1;
  rs[0].flops = 4e6;
  rs[1].timing = TimingStats{};
  rs[1].timing->median_us = 3.0;
  rs[2].status = Status::WrongResult;
  rs[2].error = "max_abs 9 on odd";
  rs[0].rounds = rs[1].rounds = 5;
  SideBySideOptions o;
  o.rounds = 5;
  const cli::BenchReport r = cli::bench_report(f, s, "Fake GPU", o, cs, run);
  const auto& rows = r.table.json();
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_DOUBLE_EQ(rows[0]["ratio"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(rows[0]["tflops"].get<double>(), 2.0);  // 4e6 flops in 2 us
  EXPECT_DOUBLE_EQ(rows[1]["ratio"].get<double>(), 1.5);
  EXPECT_EQ(rows[1]["defines"]["DIAG"], 1);
  EXPECT_FALSE(rows[2].contains("median_us"));
  EXPECT_EQ(rows[2]["status"], "wrong_result");
  const std::string text = r.table.text();
  EXPECT_NE(text.find("1.90-2.10"), std::string::npos);
  EXPECT_NE(text.find("wrong_result: max_abs 9 on odd"), std::string::npos);
  EXPECT_NE(r.heading.find("5 interleaved rounds,"), std::string::npos) << r.heading;
  EXPECT_EQ(r.envelope["device"], "Fake GPU");
  EXPECT_EQ(r.envelope["rounds"], 5);
  EXPECT_EQ(r.envelope["rounds_asked"], 5);
  EXPECT_EQ(r.envelope["stop"], "fixed");
  EXPECT_EQ(rows[0]["rounds"], 5);
}

TEST(BenchReport, AutoRoundsSayHowManyRanAndWhyTheyStopped) {
  const Family f = toy();
  const Shape s = toy_shape(f);
  std::vector<Contender> cs{{"a", parse_user_config(f, ""), {}}, {"b", parse_user_config(f, "VEC=4"), {}}};
  SideBySideRun run;
  run.contenders.resize(2);
  run.rounds = 9;
  run.stop = RoundStop::Separated;
  for (auto& r : run.contenders) r.timing = TimingStats{};
  run.contenders[0].rounds = 9;
  run.contenders[1].rounds = 5;  // behind after the first batch
  run.contenders[1].round_us = {1, 2, 3, 4, 5};
  SideBySideOptions o;
  o.until_decided = true;
  o.rounds = kMaxAutoRounds;
  const cli::BenchReport r = cli::bench_report(f, s, "Fake GPU", o, cs, run);
  EXPECT_NE(r.heading.find("9 interleaved rounds (auto, at most 21: separated)"), std::string::npos) << r.heading;
  EXPECT_EQ(r.envelope["rounds_asked"], "auto");
  EXPECT_EQ(r.envelope["stop"], "separated");
  EXPECT_EQ(r.table.json()[1]["rounds"], 5);
  EXPECT_EQ(r.table.json()[1]["round_us"].size(), 5u);
  EXPECT_NE(r.table.text().find(" 5 "), std::string::npos) << r.table.text();
}

struct SideBySide : ::testing::Test {
  fs::path dir;
  void SetUp() override {
    dir = fresh_test_dir("kforge_bench");
    setenv("KFORGE_FAKE_TIME_PARAM", "BLOCK", 1);  // the stand-in's time is the config's BLOCK
  }
  void TearDown() override {
    unsetenv("KFORGE_FAKE_TIME_PARAM");
    fs::remove_all(dir);
  }
  WorkerClient fake() {
    return WorkerClient({"python3", "-S", std::string(KFORGE_TEST_DIR) + "/fakes/fake_worker.py", "ok"}, 30);
  }
};

TEST_F(SideBySide, InvalidConfigsAreNotSentAndTheRestComeBackInOrder) {
  const Family f = toy();
  const Shape s = toy_shape(f);
  WorkerClient worker = fake();
  CubinCache cache(dir / "cache");
  const DeviceLimits d = worker.device();
  Config too_wide = parse_user_config(f, "VEC=4");
  const std::vector<Contender> cs{{"b256", parse_user_config(f, "BLOCK=256"), {}},
                                  {"b64", parse_user_config(f, "BLOCK=64"), {}},
                                  {"b64 diag", parse_user_config(f, "BLOCK=64"), {{"DIAG", int64_t{1}}}},
                                  {"odd", parse_user_config(f, "BLOCK=64"), {}}};
  SideBySideOptions o;
  o.rounds = 2;
  o.compile_threads = 2;
  // N=4098 is not a multiple of VEC=4: that contender violates a constraint and never reaches the worker.
  const Shape odd = parse_shape(f, "N=4098,dtype=f16");
  const SideBySideRun run = time_side_by_side(f, s, d, worker, cache, cs, o);
  const auto& res = run.contenders;
  EXPECT_EQ(run.rounds, 2);
  EXPECT_EQ(run.stop, RoundStop::Fixed);
  EXPECT_EQ(res[0].rounds, 2);
  EXPECT_EQ(res[0].round_us, (std::vector<double>{256, 256}));
  ASSERT_EQ(res.size(), 4u);
  ASSERT_TRUE(res[0].timing && res[1].timing);
  EXPECT_DOUBLE_EQ(res[0].timing->median_us, 256);  // the stand-in echoes BLOCK
  EXPECT_DOUBLE_EQ(res[1].timing->median_us, 64);
  EXPECT_NE(res[1].variant_hash, res[2].variant_hash);  // the define is part of the hash
  EXPECT_EQ(res[1].variant_hash, res[3].variant_hash);
  EXPECT_DOUBLE_EQ(res[0].flops, 4096);
  const auto bad = time_side_by_side(f, odd, d, worker, cache, {{"v4", too_wide, {}}, cs[1]}, o).contenders;
  EXPECT_EQ(bad[0].status, Status::Invalid);
  EXPECT_NE(bad[0].error.find("N % VEC == 0"), std::string::npos);
  EXPECT_FALSE(bad[0].timing);
  EXPECT_TRUE(bad[1].timing);
}

TEST_F(SideBySide, AutoRoundsAskTheWorkerForTheRuleAndReportItsStop) {
  const Family f = toy();
  const Shape s = toy_shape(f);
  WorkerClient worker = fake();
  CubinCache cache(dir / "cache");
  const DeviceLimits d = worker.device();
  SideBySideOptions o;
  o.until_decided = true;
  o.rounds = kMaxAutoRounds;
  o.compile_threads = 2;
  // The stand-in decides at the first batch: distinct times separate, a shared fastest time ties.
  const SideBySideRun run = time_side_by_side(
      f, s, d, worker, cache, {{"b256", parse_user_config(f, "BLOCK=256"), {}}, {"b64", parse_user_config(f, "BLOCK=64"), {}}}, o);
  EXPECT_EQ(run.rounds, 5);
  EXPECT_EQ(run.stop, RoundStop::Separated);
  EXPECT_EQ(run.contenders[1].rounds, 5);
  EXPECT_GT(run.wall_s, 0);
  EXPECT_EQ(rounds_text(o, run), "5 interleaved rounds (auto, at most 21: separated)");
  const SideBySideRun tie = time_side_by_side(
      f, s, d, worker, cache, {{"a", parse_user_config(f, "BLOCK=64"), {}}, {"b", parse_user_config(f, "BLOCK=64,VEC=4"), {}}}, o);
  EXPECT_EQ(tie.stop, RoundStop::Tie);
}

TEST(SideBySideAblation, OneParameterChangesOfTheBase) {
  const Family f = toy();
  const Shape s = toy_shape(f);
  const Config base = parse_user_config(f, "");  // BLOCK=128, VEC=2, plain
  const auto cs = one_parameter_changes(f, base, make_space(f, s, DeviceLimits::for_arch("sm_90")));
  std::vector<std::string> labels;
  for (const auto& c : cs) labels.push_back(c.label);
  EXPECT_EQ(labels, (std::vector<std::string>{"", "BLOCK=64", "BLOCK=256", "VEC=1", "VEC=4", "MODE=unrolled"}));
  EXPECT_EQ(cs.front().config, base);
}

TEST_F(SideBySide, ExportOfAConfigWithDefines) {
  const Family f = toy();
  const Shape s = toy_shape(f);
  ExportInput in;
  in.family = &f;
  in.out_dir = dir / "out";
  in.base_arch = "sm_90";
  in.defines = {{"DIAG", int64_t{2}}};
  in.winners = {unmeasured_record(f, parse_user_config(f, "VEC=4"), s)};
  EXPECT_THROW(export_kernels(in), std::runtime_error);  // never gated: only --ungated writes it
  in.ungated = true;
  const ExportOutput out = export_kernels(in);
  EXPECT_EQ(out.manifest["gate"], "not run");
  EXPECT_TRUE(out.manifest["correctness"].is_null());
  EXPECT_EQ(out.manifest["defines"]["DIAG"], 2);
  EXPECT_EQ(out.manifest["config"]["VEC"], 4);
  EXPECT_TRUE(out.manifest["timing"].is_null());
  EXPECT_TRUE(out.manifest["evaluation_id"].is_null());
  EXPECT_EQ(out.manifest["variant_hash"], render_variant(f, in.winners[0].config, s, in.defines).hash);
  EXPECT_NE(out.manifest["variant_hash"], render_variant(f, in.winners[0].config, s).hash);
  std::ifstream src(in.out_dir / (out.manifest["name"].get<std::string>() + ".cu"));
  const std::string text((std::istreambuf_iterator<char>(src)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("#define KF_DIAG 2"), std::string::npos);
  in.defines = {{"VEC", int64_t{2}}};
  EXPECT_THROW(export_kernels(in), std::runtime_error);
}

TEST_F(SideBySide, ExperimentFilesAreCheckedOnLoad) {
  write(dir / "ok.json", R"({"name": "n", "family": "toy", "suite": "small", "configs": ["VEC=4", "best"],
                            "defines": {"DIAG": 1}, "rounds": 3})");
  const Experiment e = load_experiment(dir / "ok.json");
  EXPECT_EQ(e.suite, "small");
  EXPECT_EQ(e.configs.size(), 2u);
  EXPECT_EQ(e.rounds, 3);
  EXPECT_EQ(to_string(e.defines), "DIAG=1");
  write(dir / "auto.json", R"({"name": "n", "family": "toy", "suite": "small", "configs": ["best"], "rounds": "auto"})");
  EXPECT_EQ(load_experiment(dir / "auto.json").rounds, 0);
  const std::vector<std::pair<std::string, std::string>> bad{
      {R"({"name": "n", "family": "toy", "suite": "small"})", "missing \"configs\""},
      {R"({"name": "n", "family": "toy", "suite": "small", "configs": []})", "\"configs\" is empty"},
      {R"({"name": "n", "family": "toy", "configs": ["a=1"]})", "either \"shapes\" or \"suite\""},
      {R"({"name": "n", "family": "toy", "suite": "s", "shapes": ["N=1"], "configs": ["a=1"]})", "either"},
      {R"({"name": "n", "family": "toy", "suite": "s", "configs": ["a=1"], "color": 1})", "unknown key \"color\""},
      {R"({"name": "n", "family": "toy", "suite": "s", "configs": ["a=1"], "rounds": 0})", "rounds"},
      {R"({"name": "n", "family": "toy", "suite": "s", "configs": ["a=1"], "rounds": "many"})", "\"auto\" or"},
      {R"({"name": "n", "family": "toy", "suite": "s", "configs": [1]})", "list of strings"},
      {R"({"name": "n", "family": "toy", )", "not valid JSON"}};
  for (const auto& [text, why] : bad) {
    write(dir / "bad.json", text);
    try {
      load_experiment(dir / "bad.json");
      ADD_FAILURE() << "accepted: " << text;
    } catch (const std::runtime_error& ex) {
      EXPECT_NE(std::string(ex.what()).find(why), std::string::npos) << ex.what();
      EXPECT_EQ(std::string(ex.what()).find('\n'), std::string::npos);
    }
  }
}

// The shipped experiments name real shapes and configs that are valid on an H100 (the GPU run
// would otherwise print `invalid` rows instead of the comparison they exist for).
TEST(ShippedExperiments, EveryConfigIsValidOnSm90) {
  const fs::path root = fs::path(KFORGE_TEST_DIR) / "..";
  const DeviceLimits h100 = DeviceLimits::for_arch("sm_90");
  size_t files = 0;
  for (const auto& entry : fs::directory_iterator(root / "experiments")) {
    if (entry.path().extension() != ".json") continue;
    ++files;
    const Experiment e = load_experiment(entry.path());
    const Family f = load_family(root / "search_spaces" / (e.family + ".json"));
    std::vector<Shape> shapes;
    for (const auto& s : e.shapes) shapes.push_back(parse_shape(f, s));
    if (!e.suite.empty()) shapes = suite_shapes(f, e.suite);
    check_defines(f, e.defines);
    if (!e.doc.empty()) EXPECT_TRUE(fs::exists(root / e.doc)) << e.doc;
    for (const auto& text : e.configs) {
      const UserVariant v = parse_user_variant(f, text, never_best);
      for (const auto& s : shapes)
        EXPECT_EQ(violated_constraint(f, v.config, s, h100), std::nullopt)
            << entry.path().filename() << ": " << text << " at " << to_string(s);
    }
  }
  EXPECT_GE(files, 2u);
}

// The command line: export of an ungated config with a define (no GPU needed), and bench's bad input.
TEST_F(SideBySide, CommandLineExportAndBenchErrors) {
  const std::string kf = std::string(KFORGE_BINARY) + " --db " + (dir / "r.db").string() + " --cache-dir " +
                         (dir / "cache").string();
  const std::string toy_spec = std::string(KFORGE_TEST_DIR) + "/families/toy/toy.json";
  const auto run = [&](const std::string& args) {
    return std::system((kf + " " + args + " > " + (dir / "out.txt").string() + " 2> " +
                        (dir / "err.txt").string()).c_str());
  };
  const auto err = [&] {
    std::ifstream in(dir / "err.txt");
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  ASSERT_EQ(run("export --family " + toy_spec + " --shape N=4096,dtype=f16 --config 'VEC=4;DIAG=1' --define EXTRA=2 " +
                "--ungated --out " + (dir / "x").string()),
            0)
      << err();
  std::ifstream man(dir / "x" / "manifest.json");
  const auto m = nlohmann::json::parse(man);
  EXPECT_EQ(m["gate"], "not run");
  EXPECT_EQ(m["config"]["VEC"], 4);
  EXPECT_EQ(m["defines"], (nlohmann::json{{"DIAG", 1}, {"EXTRA", 2}}));
  EXPECT_EQ(m["arch"], "sm_90");

  EXPECT_NE(run("export --family " + toy_spec + " --config VEC=4 --out " + (dir / "y").string()), 0);
  EXPECT_NE(err().find("--config needs --shape or --suite"), std::string::npos) << err();
  EXPECT_NE(run("bench --family " + toy_spec + " --shape N=4096,dtype=f16 --config VEC=3"), 0);
  EXPECT_NE(err().find("VEC"), std::string::npos) << err();
  const std::string one_line = err();
  EXPECT_EQ(std::count(one_line.begin(), one_line.end(), '\n'), 1) << one_line;
  EXPECT_NE(run("bench --family " + toy_spec + " --shape N=4096,dtype=f16 --config VEC=4 --define block=1"), 0);
  EXPECT_NE(err().find("parameter"), std::string::npos) << err();
  EXPECT_NE(run("bench --family " + toy_spec + " --shape N=4096,dtype=f16"), 0);
  EXPECT_NE(err().find("at least one --config"), std::string::npos) << err();
}
