// The campaign loop against a stand-in worker (tests/fakes/fake_worker.py): every config is
// classified and recorded, nothing is run twice (unless its kernel source changed), a dying worker costs
// one evaluation, and an attempt left open by a killed campaign is retried once on resume.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include "campaign/campaign.hpp"
#include "family/render.hpp"
#include "test_dir.hpp"
#include "winner/current_results.hpp"

namespace fs = std::filesystem;
using namespace kf;

namespace {

struct CampaignFixture : ::testing::Test {
  fs::path dir;
  Family family;
  Shape shape;

  void SetUp() override {
    dir = fresh_test_dir("kforge_campaign");
    family = load_family(fs::path(KFORGE_TEST_DIR) / "families/toy/toy.json");
    shape = parse_shape(family, "N=4096,dtype=f16");
  }
  void TearDown() override { fs::remove_all(dir); }

  CampaignOptions options(const std::string& mode, const std::string& nth = "1") {
    CampaignOptions o;
    o.strategy = "exhaustive";
    o.cache_dir = dir / "cache";
    o.worker_argv = {"python3", "-S", std::string(KFORGE_TEST_DIR) + "/fakes/fake_worker.py", mode,
                     nth};
    o.eval_timeout_s = 10;
    o.compile_threads = 2;
    o.quiet = true;
    o.remeasure_top_k = 3;
    o.gpus = {0};  // the stand-in answers for any device index
    return o;
  }
  // A gated, timed result of config c as the worker would record it: kernel hash and timing method given.
  EvaluationRecord timed_result(const Config& c, double us, const std::string& hash, int method = kTimingMethod) {
    EvaluationRecord e;
    e.family = family.name;
    e.config = c;
    e.shape = shape;
    e.device = device_key(DeviceLimits::for_arch("sm_90"));
    e.status = Status::Ok;
    e.timing = TimingStats{};
    e.timing->median_us = us;
    e.timing->method = method;
    e.kernel = KernelRecord{};
    e.kernel->variant_hash = hash;
    e.kernel->arch = "sm_90";
    e.kernel->ok = true;
    return e;
  }
  size_t valid_configs() {
    DeviceLimits d = DeviceLimits::for_arch("sm_90");
    return make_space(family, shape, d).enumerate_valid().size();
  }
};

TEST_F(CampaignFixture, ExhaustiveClassifiesEveryValidConfigOnce) {
  Store store(dir / "r.db");
  const auto out = run_campaign(store, family, {shape}, options("ok"));
  ASSERT_EQ(out.shapes.size(), 1u);
  EXPECT_EQ(out.status, "done");
  EXPECT_EQ(out.shapes[0].evaluated, valid_configs());
  EXPECT_EQ(out.status_counts.at("ok"), static_cast<int>(valid_configs()));
  ASSERT_TRUE(out.shapes[0].best.has_value());
  EXPECT_FALSE(out.shapes[0].remeasured.empty());
  // A second campaign on the same shape finds nothing left to run and compiles nothing.
  const auto again = run_campaign(store, family, {shape}, options("ok"));
  EXPECT_EQ(again.shapes[0].evaluated, 0u);
  EXPECT_EQ(again.compiled, 0u);
  EXPECT_EQ(store.evaluations(family.name, shape).size(), valid_configs());
}

// Several GPUs: `--gpus all` starts one worker per device the workers report (two here), both
// take work from the one queue, and every config still runs exactly once.
TEST_F(CampaignFixture, SeveralWorkersShareOneQueueAndRunEachConfigOnce) {
  const fs::path log = dir / "evaluations";
  ::setenv("KFORGE_FAKE_GPUS", "2", 1);
  ::setenv("KFORGE_FAKE_LOG", log.c_str(), 1);
  ::setenv("KFORGE_FAKE_EVAL_S", "0.1", 1);  // a busy GPU, so the other one gets the next job
  Store store(dir / "r.db");
  auto o = options("ok");
  o.gpus.clear();  // all
  const auto out = run_campaign(store, family, {shape}, o);
  ::unsetenv("KFORGE_FAKE_GPUS");
  ::unsetenv("KFORGE_FAKE_LOG");
  ::unsetenv("KFORGE_FAKE_EVAL_S");
  EXPECT_EQ(out.shapes.at(0).evaluated, valid_configs());
  std::multiset<std::string> configs;
  for (int gpu : {0, 1}) {
    std::ifstream in(log.string() + "." + std::to_string(gpu));
    size_t n = 0;
    for (std::string line; std::getline(in, line); ++n) configs.insert(line);
    EXPECT_GT(n, 0u) << "GPU " << gpu << " got no work";
  }
  EXPECT_FALSE(fs::exists(log.string() + ".2"));  // no third worker: device 2 does not exist
  EXPECT_EQ(configs.size(), valid_configs());
  for (const auto& c : configs) EXPECT_EQ(configs.count(c), 1u) << c;
}

// --fix narrows the space to a part the store has not seen: what the store knows elsewhere in the
// family's space must not count against it (it did, and a pinned exhaustive campaign ran nothing).
TEST_F(CampaignFixture, PinnedSpaceRunsWhatTheStoreHasNotSeenThere) {
  Store store(dir / "r.db");
  auto plain = options("ok");
  plain.fixed = parse_assignment("MODE=plain");
  const auto first = run_campaign(store, family, {shape}, plain);
  ASSERT_GT(first.shapes[0].evaluated, 0u);
  auto unrolled = options("ok");
  unrolled.fixed = parse_assignment("MODE=unrolled");
  const auto second = run_campaign(store, family, {shape}, unrolled);
  EXPECT_EQ(first.shapes[0].evaluated + second.shapes[0].evaluated, valid_configs());
  EXPECT_GT(second.shapes[0].evaluated, 0u);
}

// A result belongs to the kernel it timed: once the family's template changes, the configs recorded with the
// old source are stale and a campaign runs them again (they were skipped as known, and a campaign after a
// kernel change measured nothing).
TEST_F(CampaignFixture, ConfigsRecordedWithAnotherKernelSourceRunAgain) {
  const fs::path copy = dir / "toy";
  fs::copy(fs::path(KFORGE_TEST_DIR) / "families/toy", copy, fs::copy_options::recursive);
  Family mine = load_family(copy / "toy.json");
  Store store(dir / "r.db");
  const auto first = run_campaign(store, mine, {shape}, options("ok"));
  ASSERT_EQ(first.shapes[0].evaluated, valid_configs());
  std::ofstream(copy / "kernel.cu", std::ios::app) << "\n// a changed kernel source\n";
  mine = load_family(copy / "toy.json");
  const auto second = run_campaign(store, mine, {shape}, options("ok"));
  EXPECT_EQ(second.shapes[0].evaluated, valid_configs());
  // ... and with the changed source recorded, nothing is stale any more.
  const auto third = run_campaign(store, mine, {shape}, options("ok"));
  EXPECT_EQ(third.shapes[0].evaluated, 0u);
}

// `best` and `export` take the fastest result of a current kernel over a faster one timed with an older
// source, and fall back to the stale one (marked) only when nothing current exists.
TEST_F(CampaignFixture, BestPrefersResultsOfTheCurrentKernels) {
  const auto configs = make_space(family, shape, DeviceLimits::for_arch("sm_90")).enumerate_valid();
  ASSERT_GE(configs.size(), 2u);
  const EvaluationRecord current = timed_result(configs[0], 5.0, render_variant(family, configs[0], shape).hash);
  const EvaluationRecord stale = timed_result(configs[1], 3.0, "a kernel source since edited");
  {
    Store store(dir / "both.db");
    store.add_evaluation(current);
    store.add_evaluation(stale);
    const auto b = best_current(store, family, shape, std::nullopt);
    ASSERT_TRUE(b.has_value());
    EXPECT_EQ(to_string(b->record.config), to_string(configs[0]));
    EXPECT_FALSE(b->stale);
  }
  Store only_stale(dir / "stale.db");
  only_stale.add_evaluation(stale);
  const auto b = best_current(only_stale, family, shape, std::nullopt);
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(to_string(b->record.config), to_string(configs[1]));
  EXPECT_TRUE(b->stale);
}

// A time measured with another timing method (kTimingMethod) does not compare with the current method's: the
// record is stale like one of an older kernel source, so a faster time of the old method cannot keep a winner
// that the current method would rank otherwise.
TEST_F(CampaignFixture, ResultsTimedWithAnotherMethodAreStale) {
  const auto configs = make_space(family, shape, DeviceLimits::for_arch("sm_90")).enumerate_valid();
  ASSERT_GE(configs.size(), 2u);
  auto hash = [&](const Config& c) { return render_variant(family, c, shape).hash; };
  Store store(dir / "methods.db");
  store.add_evaluation(timed_result(configs[0], 5.0, hash(configs[0])));
  store.add_evaluation(timed_result(configs[1], 3.0, hash(configs[1]), kTimingMethod + 1));
  const auto b = best_current(store, family, shape, std::nullopt);
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(to_string(b->record.config), to_string(configs[0]));
  EXPECT_FALSE(b->stale);
  KernelSourceCheck check(family, shape);
  const auto stored = store.evaluations(family.name, shape);
  ASSERT_EQ(stored.size(), 2u);
  for (const auto& e : stored) {
    ASSERT_TRUE(e.timing.has_value());
    EXPECT_EQ(check.stale(e, e.config), e.timing->method != kTimingMethod) << "method " << e.timing->method;
  }
}

TEST_F(CampaignFixture, BudgetLimitsEvaluationsPerShape) {
  Store store(dir / "r.db");
  auto o = options("ok");
  o.strategy = "random";
  o.budget.evals_per_shape = 3;
  const auto out = run_campaign(store, family, {shape}, o);
  EXPECT_EQ(out.shapes[0].evaluated, 3u);
}

// A campaign whose time budget ends a shape early is "stopped", not "done", and resume
// finishes it without running anything twice.
TEST_F(CampaignFixture, TimeBudgetLeavesTheCampaignStoppedAndResumeFinishesIt) {
  ::setenv("KFORGE_FAKE_EVAL_S", "0.2", 1);
  Store store(dir / "r.db");
  auto o = options("ok");
  o.budget.time_s = 0.5;
  const auto first = run_campaign(store, family, {shape}, o);
  ::unsetenv("KFORGE_FAKE_EVAL_S");
  EXPECT_EQ(first.status, "stopped");
  EXPECT_LT(first.shapes.at(0).evaluated, valid_configs());
  EXPECT_EQ(store.campaign(first.campaign_id)->status, "stopped");
  auto resume = options("ok");
  resume.budget.time_s = 600;  // a fresh slice, long enough to finish
  const auto resumed = resume_campaign(store, family, first.campaign_id, resume);
  EXPECT_EQ(resumed.status, "done");
  EXPECT_EQ(first.shapes[0].evaluated + resumed.shapes.at(0).evaluated, valid_configs());
  EXPECT_EQ(store.evaluations(family.name, shape).size(), valid_configs());
}

// A suite under a time budget: interleaved, every shape gets evaluations (one after another, the first
// shape took the whole budget); `--evals` still holds per shape; resume finishes every shape.
TEST_F(CampaignFixture, ATimedSuiteServesEveryShape) {
  const std::vector<Shape> shapes = {shape, parse_shape(family, "N=2048,dtype=f16"),
                                     parse_shape(family, "N=1024,dtype=f32")};
  ::setenv("KFORGE_FAKE_EVAL_S", "0.1", 1);
  Store store(dir / "r.db");
  auto o = options("ok");
  o.budget.time_s = 2.5;
  const auto first = run_campaign(store, family, shapes, o);
  ::unsetenv("KFORGE_FAKE_EVAL_S");
  EXPECT_EQ(first.status, "stopped");
  ASSERT_EQ(first.shapes.size(), 3u);
  for (const auto& s : first.shapes) {
    EXPECT_GE(s.evaluated, 2u) << to_string(s.shape);
    EXPECT_LT(s.evaluated, valid_configs()) << to_string(s.shape);
    EXPECT_EQ(store.evaluations(family.name, s.shape).size(), s.evaluated) << to_string(s.shape);
  }
  auto resume = options("ok");
  resume.budget.time_s = 600;
  const auto resumed = resume_campaign(store, family, first.campaign_id, resume);
  EXPECT_EQ(resumed.status, "done");
  for (const auto& s : shapes) EXPECT_EQ(store.evaluations(family.name, s).size(), valid_configs()) << to_string(s);
}

TEST_F(CampaignFixture, ASequentialTimedSuiteSpendsItOnTheFirstShape) {
  const std::vector<Shape> shapes = {shape, parse_shape(family, "N=2048,dtype=f16")};
  ::setenv("KFORGE_FAKE_EVAL_S", "0.1", 1);
  Store store(dir / "r.db");
  auto o = options("ok");
  o.schedule = "sequential";
  o.budget.time_s = 1.0;
  const auto out = run_campaign(store, family, shapes, o);
  ::unsetenv("KFORGE_FAKE_EVAL_S");
  EXPECT_EQ(out.shapes.size(), 1u);  // the A/B of the schedule: the second shape never started
}

TEST_F(CampaignFixture, EvalsPerShapeHoldInAnInterleavedSuite) {
  const std::vector<Shape> shapes = {shape, parse_shape(family, "N=2048,dtype=f16"),
                                     parse_shape(family, "N=1024,dtype=f32")};
  Store store(dir / "r.db");
  auto o = options("ok");
  o.strategy = "random";
  o.budget.evals_per_shape = 4;
  const auto out = run_campaign(store, family, shapes, o);
  EXPECT_EQ(out.status, "done");
  ASSERT_EQ(out.shapes.size(), 3u);
  for (const auto& s : out.shapes) {
    EXPECT_EQ(s.evaluated, 4u) << to_string(s.shape);
    EXPECT_EQ(store.evaluations(family.name, s.shape).size(), 4u) << to_string(s.shape);
  }
}

TEST_F(CampaignFixture, UnknownScheduleIsAnError) {
  Store store(dir / "r.db");
  auto o = options("ok");
  o.schedule = "fair";
  EXPECT_THROW(run_campaign(store, family, {shape}, o), std::runtime_error);
}

TEST_F(CampaignFixture, DyingWorkerCostsOneEvaluation) {
  Store store(dir / "r.db");
  auto o = options("segv", "2");  // the worker dies on its second request (every fresh worker)
  const auto out = run_campaign(store, family, {shape}, o);
  EXPECT_EQ(out.shapes[0].evaluated, valid_configs());
  EXPECT_GE(out.status_counts.at("runtime_fault"), 1);
  EXPECT_GE(out.status_counts.at("ok"), 1);
}

TEST_F(CampaignFixture, ResumeRetriesAnInterruptedAttemptOnce) {
  Store store(dir / "r.db");
  auto o = options("ok");
  o.budget.evals_per_shape = 2;
  const auto first = run_campaign(store, family, {shape}, o);
  // Simulate a kill -9 while a third config was in flight.
  const DeviceLimits fake = [] {
    DeviceLimits d = DeviceLimits::for_arch("sm_90");
    d.name = "Fake GPU";
    d.driver = "fake";
    return d;
  }();
  const SearchSpace space = make_space(family, shape, fake);
  Config in_flight;
  for (const auto& c : space.enumerate_valid())
    if (!store.evaluated_config_keys(family.name, shape, device_key(fake)).count(to_string(c))) {
      in_flight = c;
      break;
    }
  store.begin_attempt(first.campaign_id, family.name, in_flight, shape, device_key(fake));
  auto resume = options("ok");
  const auto resumed = resume_campaign(store, family, first.campaign_id, resume);
  const auto keys = store.evaluated_config_keys(family.name, shape, device_key(fake));
  EXPECT_TRUE(keys.count(to_string(in_flight))) << "the interrupted config was not retried";
  EXPECT_EQ(resumed.status_counts.at("interrupted"), 1);
  // Budget 2 per shape was already spent, so only the retry ran.
  EXPECT_EQ(resumed.shapes[0].evaluated, 1u);
}

TEST_F(CampaignFixture, NoDeviceIsAOneLineError) {
  Store store(dir / "r.db");
  try {
    run_campaign(store, family, {shape}, options("hello_error"));
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("no CUDA device"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(store.campaigns().empty()) << "nothing is recorded when no worker starts";
}

}  // namespace
