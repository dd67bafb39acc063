// `search --sanitize` without a GPU: the log parser, the verdict, finding the tool, and a
// campaign whose finalists run under a stand-in sanitizer (tests/fakes/fake_sanitizer.sh)
// around the stand-in worker.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "campaign/campaign.hpp"
#include "campaign/sanitize.hpp"
#include "test_dir.hpp"
#include "winner/current_results.hpp"

namespace fs = std::filesystem;
using namespace kf;

namespace {

const std::string kFakeSanitizer = std::string(KFORGE_TEST_DIR) + "/fakes/fake_sanitizer.sh";

EvalResult gate_ok() { return EvalResult{}; }

// Sets an environment variable for one scope.
struct ScopedEnv {
  std::string name;
  std::optional<std::string> old;
  ScopedEnv(std::string n, const std::string& value) : name(std::move(n)) {
    if (const char* v = std::getenv(name.c_str())) old = v;
    ::setenv(name.c_str(), value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old) ::setenv(name.c_str(), old->c_str(), 1);
    else ::unsetenv(name.c_str());
  }
};

}  // namespace

TEST(Sanitize, ParsesMemcheckSummary) {
  const auto log = parse_sanitizer_log(
      "========= COMPUTE-SANITIZER\n========= Invalid __global__ write of size 4 bytes\n"
      "=========     at faulty_kernel+0x1d0\n========= ERROR SUMMARY: 2 errors\n");
  EXPECT_TRUE(log.has_summary);
  EXPECT_EQ(log.errors, 2);
  EXPECT_EQ(log.summary, "ERROR SUMMARY: 2 errors");
}

TEST(Sanitize, ParsesRacecheckHazards) {
  const auto log = parse_sanitizer_log(
      "========= RACECHECK SUMMARY: 6144 hazards displayed (6144 errors, 0 warnings)\n"
      "========= ERROR SUMMARY: 0 errors\n");
  EXPECT_TRUE(log.has_summary);
  EXPECT_EQ(log.errors, 6144);
  EXPECT_EQ(log.summary,
            "RACECHECK SUMMARY: 6144 hazards displayed (6144 errors, 0 warnings); ERROR SUMMARY: 0 errors");
  const auto warn = parse_sanitizer_log(
      "========= RACECHECK SUMMARY: 1 hazard displayed (0 errors, 1 warning)\n========= ERROR SUMMARY: 0 errors\n");
  EXPECT_EQ(warn.errors, 0);
  EXPECT_EQ(warn.warnings, 1);
  // compute-sanitizer 2025 (CUDA 13.0) ends a racecheck log with this line alone
  const auto alone = parse_sanitizer_log("========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)\n");
  EXPECT_TRUE(alone.has_summary);
  EXPECT_EQ(alone.errors, 0);
  EXPECT_TRUE(judge_sanitizer_run(gate_ok(), std::string("========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, "
                                                         "0 warnings)\n"), "exit code 0").passed);
}

TEST(Sanitize, NoSummaryIsNoVerdict) {
  EXPECT_FALSE(parse_sanitizer_log("").has_summary);
  const auto out = judge_sanitizer_run(gate_ok(), std::string("========= COMPUTE-SANITIZER\n"), "signal 9 (Killed)");
  EXPECT_FALSE(out.passed);
  EXPECT_EQ(out.summary, "no summary in the tool's log (signal 9 (Killed))");
  EXPECT_FALSE(judge_sanitizer_run(gate_ok(), std::nullopt, "exit code 1").passed);
}

TEST(Sanitize, VerdictNeedsACleanLogAndAPassingGate) {
  const std::string clean = "========= ERROR SUMMARY: 0 errors\n";
  EXPECT_TRUE(judge_sanitizer_run(gate_ok(), clean, "exit code 0").passed);
  EXPECT_FALSE(judge_sanitizer_run(gate_ok(), std::string("========= ERROR SUMMARY: 3 errors\n"), "").passed);
  EvalResult wrong;
  wrong.status = Status::WrongResult;
  wrong.error = "output y: max_abs 1 > 1e-06";
  const auto out = judge_sanitizer_run(wrong, clean, "exit code 0");
  EXPECT_FALSE(out.passed);
  EXPECT_EQ(out.summary, "gate under the tool: wrong_result: output y: max_abs 1 > 1e-06; ERROR SUMMARY: 0 errors");
}

TEST(Sanitize, CommandFiltersTheCandidateKernel) {
  const auto argv = sanitizer_argv("/cuda/bin/compute-sanitizer", "racecheck", "/tmp/l.log", "sdpa_fwd",
                                   {"/bin/kforge", "worker"}, 1);
  const std::vector<std::string> want = {"/cuda/bin/compute-sanitizer", "--tool", "racecheck", "--log-file",
                                         "/tmp/l.log", "--kernel-name", "kns=sdpa_fwd", "/bin/kforge", "worker",
                                         "--device", "1"};
  EXPECT_EQ(argv, want);
}

TEST(Sanitize, MissingToolIsAOneLineError) {
  {
    ScopedEnv env("KFORGE_COMPUTE_SANITIZER", "/nonexistent/compute-sanitizer");
    try {
      find_compute_sanitizer();
      FAIL();
    } catch (const std::runtime_error& e) {
      EXPECT_EQ(std::string(e.what()), "KFORGE_COMPUTE_SANITIZER=/nonexistent/compute-sanitizer is not an executable file");
    }
  }
  ScopedEnv none("KFORGE_COMPUTE_SANITIZER", "");
  ScopedEnv path("PATH", "/nonexistent");
  ScopedEnv home("CUDA_HOME", "/nonexistent");
  ScopedEnv cpath("CUDA_PATH", "/nonexistent");
  if (fs::exists("/usr/local/cuda/bin/compute-sanitizer")) GTEST_SKIP() << "a real compute-sanitizer is installed";
  try {
    find_compute_sanitizer();
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("--sanitize: compute-sanitizer not found"), std::string::npos);
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
  }
  ScopedEnv named("KFORGE_COMPUTE_SANITIZER", kFakeSanitizer);
  EXPECT_EQ(find_compute_sanitizer(), fs::path(kFakeSanitizer));
}

struct SanitizeCampaign : ::testing::Test {
  fs::path dir;
  Family family;
  Shape shape;
  void SetUp() override {
    dir = fresh_test_dir("kforge_sanitize");
    family = load_family(fs::path(KFORGE_TEST_DIR) / "families/toy/toy.json");
    shape = parse_shape(family, "N=4096,dtype=f16");
  }
  void TearDown() override { fs::remove_all(dir); }
  CampaignOptions options() {
    CampaignOptions o;
    o.strategy = "exhaustive";
    o.cache_dir = dir / "cache";
    o.worker_argv = {"python3", "-S", std::string(KFORGE_TEST_DIR) + "/fakes/fake_worker.py", "ok", "1"};
    o.eval_timeout_s = 10;
    o.compile_threads = 2;
    o.quiet = true;
    o.remeasure_top_k = 3;
    o.gpus = {0};
    o.sanitize = true;
    o.sanitize_timeout_s = 20;
    return o;
  }
};

TEST_F(SanitizeCampaign, CleanFinalistsAreRecordedAsPassed) {
  ScopedEnv tool("KFORGE_COMPUTE_SANITIZER", kFakeSanitizer);
  Store store(dir / "r.db");
  const auto out = run_campaign(store, family, {shape}, options());
  ASSERT_TRUE(out.shapes[0].best);
  const auto best = best_current(store, family, shape, std::nullopt);
  ASSERT_TRUE(best);
  EXPECT_EQ(best->sanitizer.state, SanitizerVerdict::State::Passed) << best->sanitizer.summary;
  const auto runs = store.sanitizer_runs(family.name, best->record.kernel->variant_hash);
  ASSERT_EQ(runs.size(), 2u);  // memcheck and racecheck, once each
  for (const auto& r : runs) {
    EXPECT_TRUE(r.passed) << r.summary;
    EXPECT_EQ(r.campaign_id, out.campaign_id);
  }
}

TEST_F(SanitizeCampaign, RacyFinalistsNeverWin) {
  ScopedEnv tool("KFORGE_COMPUTE_SANITIZER", kFakeSanitizer);
  ScopedEnv races("KFORGE_FAKE_RACECHECK_ERRORS", "6144");
  Store store(dir / "r.db");
  const auto out = run_campaign(store, family, {shape}, options());
  const auto best = best_current(store, family, shape, std::nullopt);
  ASSERT_TRUE(best);
  EXPECT_EQ(best->sanitizer_rejected, 3u);  // the three finalists, all failed racecheck
  EXPECT_EQ(best->sanitizer.state, SanitizerVerdict::State::NotRun);
  ASSERT_TRUE(out.shapes[0].best);
  EXPECT_EQ(out.shapes[0].best->id, best->record.id);  // the campaign's winner is the same one
  size_t failed = 0;
  for (const auto& e : store.top(family.name, shape, std::nullopt, 3)) {
    const auto v = sanitizer_verdict(store, family.name, e.kernel->variant_hash);
    EXPECT_EQ(v.state, SanitizerVerdict::State::Failed);
    EXPECT_NE(v.summary.find("racecheck: RACECHECK SUMMARY: 6144 hazards"), std::string::npos) << v.summary;
    ++failed;
  }
  EXPECT_EQ(failed, 3u);
}

TEST_F(SanitizeCampaign, MissingSanitizerStopsBeforeAnythingRuns) {
  ScopedEnv tool("KFORGE_COMPUTE_SANITIZER", "/nonexistent/cs");
  Store store(dir / "r.db");
  EXPECT_THROW(run_campaign(store, family, {shape}, options()), std::runtime_error);
  EXPECT_TRUE(store.campaigns().empty());
}
