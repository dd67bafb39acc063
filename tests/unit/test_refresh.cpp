// `kforge refresh` and export's re-gating of a stale winner, against the stand-in worker: a
// result timed with an older kernel source is re-run with the current kernel, and export
// refuses (naming the refresh command) when no worker can do that.
#include <gtest/gtest.h>

#include <filesystem>

#include "campaign/finalists.hpp"
#include "campaign/refresh.hpp"
#include "cli_run.hpp"
#include "family/render.hpp"
#include "test_dir.hpp"
#include "winner/finalist_ranking.hpp"

namespace fs = std::filesystem;
using namespace kf;

namespace {

const DeviceKey kFakeGpu{"Fake GPU", 90, 132, "fake"};  // what tests/fakes/fake_worker.py says it is

struct RefreshFixture : ::testing::Test {
  fs::path dir;
  Family family;
  Shape shape;
  std::vector<Config> configs;

  void SetUp() override {
    dir = fresh_test_dir("kforge_refresh");
    family = load_family(fs::path(KFORGE_TEST_DIR) / "families/toy/toy.json");
    shape = parse_shape(family, "N=4096,dtype=f16");
    configs = make_space(family, shape, DeviceLimits::for_arch("sm_90")).enumerate_valid();
  }
  void TearDown() override { fs::remove_all(dir); }

  CampaignOptions base(const std::string& mode) {
    CampaignOptions o;
    o.cache_dir = dir / "cache";
    o.worker_argv = {"python3", "-S", std::string(KFORGE_TEST_DIR) + "/fakes/fake_worker.py", mode, "1"};
    o.eval_timeout_s = 10;
    o.compile_threads = 2;
    o.quiet = true;
    o.gpus = {0};
    return o;
  }
  // An ok result of configs[i] timed with the given kernel hash ("" : the current one) and timing method.
  EvaluationRecord result(size_t i, double us, std::string hash = "", int method = kTimingMethod) {
    EvaluationRecord e;
    e.family = family.name;
    e.config = configs.at(i);
    e.shape = shape;
    e.device = kFakeGpu;
    e.status = Status::Ok;
    e.timing = TimingStats{};
    e.timing->median_us = us;
    e.timing->method = method;
    e.kernel = KernelRecord{};
    e.kernel->variant_hash = hash.empty() ? render_variant(family, configs[i], shape).hash : hash;
    e.kernel->arch = "sm_90";
    e.kernel->ok = true;
    return e;
  }
};

}  // namespace

TEST_F(RefreshFixture, RerunsTheStaleTopKAndNothingElse) {
  Store store(dir / "r.db");
  store.add_evaluation(result(0, 1.0, "an older kernel source"));
  store.add_evaluation(result(1, 2.0, "an older kernel source"));
  store.add_evaluation(result(2, 3.0));  // current already
  store.add_evaluation(result(3, 4.0, "an older kernel source"));  // not in the top 3
  ASSERT_EQ(to_string(best_current(store, family, shape, std::nullopt)->record.config), to_string(configs[2]));

  const CampaignOptions o = refresh_options(store, family, {shape}, 3, base("ok"));
  EXPECT_EQ(o.strategy, "refresh");
  ASSERT_EQ(o.listed.at(to_string(shape)).size(), 3u);
  const auto out = run_campaign(store, family, {shape}, o);
  EXPECT_EQ(out.status, "done");
  ASSERT_EQ(out.shapes.size(), 1u);
  EXPECT_EQ(out.shapes[0].evaluated, 2u);  // configs 0 and 1; 2 is current, 3 is not in the top 3
  const auto ran = store.evaluations(family.name, shape, std::nullopt, out.campaign_id);
  ASSERT_EQ(ran.size(), 2u);
  for (const auto& e : ran) {
    EXPECT_TRUE(e.config == configs[0] || e.config == configs[1]) << to_string(e.config);
    EXPECT_EQ(e.kernel->variant_hash, render_variant(family, e.config, shape).hash);
  }
  EXPECT_EQ(store.campaign(out.campaign_id)->strategy, "refresh");
}

TEST_F(RefreshFixture, NothingStoredIsAOneLineError) {
  Store store(dir / "r.db");
  try {
    refresh_options(store, family, {shape}, 3, base("ok"));
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "refresh: no gated result of toy for the shape(s) given");
  }
  EXPECT_THROW(refresh_options(store, family, {shape}, 0, base("ok")), std::runtime_error);
}

TEST_F(RefreshFixture, ExportRefusesAStaleWinnerWithoutAGpu) {
  Store store(dir / "r.db");
  store.add_evaluation(result(0, 1.0, "an older kernel source"));
  try {
    gated_winner(store, family, shape, std::nullopt, base("hello_error"), 3);
    FAIL() << "a stale winner was accepted";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("older kernel source"), std::string::npos) << what;
    // The command names the database and the spec folder (shell-quoted), so it runs where it is pasted.
    EXPECT_NE(what.find("run `kforge --db " + (dir / "r.db").string() + " --spec-dir " +
                        (fs::path(KFORGE_TEST_DIR) / "families/toy").lexically_normal().string() +
                        " refresh --family toy --shape N=4096,dtype=f16` on a GPU"),
              std::string::npos)
        << what;
    EXPECT_EQ(what.find('\n'), std::string::npos);
  }
}

TEST_F(RefreshFixture, ExportReGatesAStaleWinnerWhereAWorkerRuns) {
  Store store(dir / "r.db");
  store.add_evaluation(result(0, 1.0, "an older kernel source"));
  const BestResult w = gated_winner(store, family, shape, std::nullopt, base("ok"), 3);
  EXPECT_FALSE(w.stale);
  EXPECT_EQ(to_string(w.record.config), to_string(configs[0]));
  EXPECT_EQ(w.record.kernel->variant_hash, render_variant(family, configs[0], shape).hash);
}

// A winner stale only by its timing method is the same kernel that passed the gate: export takes it as it is,
// where no GPU could re-time it, and says it is stale by its method, not by its source.
TEST_F(RefreshFixture, ExportTakesAWinnerTimedWithAnOlderMethodWithoutAGpu) {
  Store store(dir / "r.db");
  store.add_evaluation(result(0, 1.0, "", kTimingMethod - 1));
  store.add_evaluation(result(1, 2.0, "an older kernel source", kTimingMethod - 1));
  const BestResult w = gated_winner(store, family, shape, std::nullopt, base("hello_error"), 3);
  EXPECT_TRUE(w.stale);
  EXPECT_FALSE(w.source_stale);
  EXPECT_EQ(to_string(w.record.config), to_string(configs[0]));
  // one of an older source first: that one must be gated again, so without a GPU export refuses
  Store older(dir / "o.db");
  older.add_evaluation(result(1, 1.0, "an older kernel source", kTimingMethod - 1));
  older.add_evaluation(result(0, 2.0, "", kTimingMethod - 1));
  const auto b = best_current(older, family, shape, std::nullopt);
  ASSERT_TRUE(b.has_value());
  EXPECT_TRUE(b->source_stale);
  EXPECT_THROW(gated_winner(older, family, shape, std::nullopt, base("hello_error"), 3), std::runtime_error);
}

// `kforge best` says which kind of stale a winner is: its kernel source changed (it must be gated again), or only
// its timing method (the same gated kernel, timed another way).
TEST_F(RefreshFixture, BestLabelsAWinnerStaleByItsMethodApartFromOneOfAnOlderSource) {
  auto best_text = [&](const fs::path& db) {
    const CliResult r = run_kforge({"--db", db.string(), "--spec-dir", (fs::path(KFORGE_TEST_DIR) / "families/toy").string(),
                                    "best", "--family", "toy"},
                                   dir);
    EXPECT_EQ(r.rc, 0) << r.err;
    return r.out;
  };
  { Store s(dir / "method.db"); s.add_evaluation(result(0, 1.0, "", kTimingMethod - 1)); }
  { Store s(dir / "source.db"); s.add_evaluation(result(0, 1.0, "an older kernel source")); }
  const std::string by_method = best_text(dir / "method.db"), by_source = best_text(dir / "source.db");
  EXPECT_NE(by_method.find("(stale: timed with an older timing method)"), std::string::npos) << by_method;
  EXPECT_NE(by_source.find("(stale: timed with an older kernel source)"), std::string::npos) << by_source;
}

TEST_F(RefreshFixture, ACurrentWinnerNeedsNoWorker) {
  Store store(dir / "r.db");
  store.add_evaluation(result(1, 1.0));
  const BestResult w = gated_winner(store, family, shape, std::nullopt, base("hello_error"), 3);
  EXPECT_FALSE(w.stale);
  EXPECT_EQ(to_string(w.record.config), to_string(configs[1]));
}

TEST_F(RefreshFixture, ACurrentWinnerThatFailedSanitizingIsSkipped) {
  Store store(dir / "r.db");
  store.add_evaluation(result(0, 1.0));
  store.add_evaluation(result(1, 2.0));
  SanitizerRecord r;
  r.family = family.name;
  r.variant_hash = render_variant(family, configs[0], shape).hash;
  r.arch = "sm_90";
  r.shape = shape;
  r.device = kFakeGpu;
  r.tool = "racecheck";
  r.passed = false;
  r.errors = 12;
  r.summary = "RACECHECK SUMMARY: 12 hazards displayed (12 errors, 0 warnings)";
  store.add_sanitizer_run(r);
  const auto b = best_current(store, family, shape, std::nullopt);
  ASSERT_TRUE(b);
  EXPECT_EQ(to_string(b->record.config), to_string(configs[1]));
  EXPECT_EQ(b->sanitizer_rejected, 1u);
  EXPECT_EQ(b->sanitizer.state, SanitizerVerdict::State::NotRun);
}

// ---- the finalists' side-by-side ranking decides among the configs it timed ----

namespace {
int64_t campaign_on(Store& store, const std::string& family, const Shape& shape, const DeviceKey& device) {
  CampaignRecord c;
  c.family = family;
  c.strategy = "refresh";
  c.shapes = {shape};
  c.budget = nlohmann::json::object();
  c.options = nlohmann::json::object();
  const int64_t id = store.create_campaign(c);
  store.set_campaign_device(id, device);
  return id;
}
}  // namespace

// A single record of config 0 is the fastest, but the newest side-by-side re-measure put config 1 ahead of it:
// config 1 wins. A faster record of a config the ranking never timed (newer than it) still wins by its time, and
// rankings of another device or of another kernel do not count.
TEST_F(RefreshFixture, TheFinalistsRankingDecidesAmongTheConfigsItTimed) {
  Store store(dir / "r.db");
  auto hash = [&](size_t i) { return render_variant(family, configs.at(i), shape).hash; };
  store.add_evaluation(result(0, 1.00));
  store.add_evaluation(result(1, 1.02));
  store.add_evaluation(result(2, 1.10));
  ASSERT_EQ(to_string(best_current(store, family, shape, std::nullopt)->record.config), to_string(configs[0]));

  const DeviceKey other{"Other GPU", 90, 114, "fake"};
  const int64_t elsewhere = campaign_on(store, family.name, shape, other);  // another device: ignored
  record_ranking(store, elsewhere, shape, {{to_string(configs[2]), hash(2), 1.0, 0.9, 1.1},
                                           {to_string(configs[0]), hash(0), 1.2, 1.1, 1.3}});
  const int64_t older_kernel = campaign_on(store, family.name, shape, kFakeGpu);  // another kernel of config 0
  record_ranking(store, older_kernel, shape, {{to_string(configs[2]), hash(2), 1.0, 0.9, 1.1},
                                              {to_string(configs[0]), "an older kernel source", 1.2, 1.1, 1.3}});
  auto b = best_current(store, family, shape, std::nullopt);
  ASSERT_TRUE(b);
  EXPECT_EQ(to_string(b->record.config), to_string(configs[0]));
  EXPECT_EQ(b->ranked_by, 0);

  const int64_t id = campaign_on(store, family.name, shape, kFakeGpu);
  record_ranking(store, id, shape, {{to_string(configs[1]), hash(1), 1.05, 1.04, 1.06},
                                    {to_string(configs[0]), hash(0), 1.08, 1.07, 1.09}});
  b = best_current(store, family, shape, std::nullopt);
  ASSERT_TRUE(b);
  EXPECT_EQ(to_string(b->record.config), to_string(configs[1]));
  EXPECT_DOUBLE_EQ(b->record.timing->median_us, 1.02);  // its own record
  EXPECT_EQ(b->ranked_by, id);
  const CliResult r = run_kforge({"--db", (dir / "r.db").string(), "--spec-dir",
                                  (fs::path(KFORGE_TEST_DIR) / "families/toy").string(), "best", "--family", "toy"},
                                 dir);
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("(first side by side: campaign " + std::to_string(id) + ")"), std::string::npos) << r.out;

  store.add_evaluation(result(3, 0.90));  // found later, never re-measured
  b = best_current(store, family, shape, std::nullopt);
  ASSERT_TRUE(b);
  EXPECT_EQ(to_string(b->record.config), to_string(configs[3]));
  EXPECT_EQ(b->ranked_by, 0);
}

// A refresh ends with its top K timed side by side; that order is kept with the campaign.
TEST_F(RefreshFixture, ACampaignKeepsItsFinalistsRanking) {
  Store store(dir / "r.db");
  for (size_t i = 0; i < 3; ++i) store.add_evaluation(result(i, 1.0 + 0.1 * static_cast<double>(i), "an older kernel source"));
  const auto out = run_campaign(store, family, {shape}, refresh_options(store, family, {shape}, 3, base("ok")));
  ASSERT_EQ(out.status, "done");
  const auto ranking = latest_ranking(store, family.name, shape, kFakeGpu);
  ASSERT_TRUE(ranking);
  EXPECT_EQ(ranking->campaign_id, out.campaign_id);
  ASSERT_EQ(ranking->order.size(), out.shapes.at(0).remeasured.size());
  ASSERT_GE(ranking->order.size(), 2u);
  for (size_t i = 0; i < ranking->order.size(); ++i) {
    EXPECT_EQ(ranking->order[i].config, to_string(out.shapes[0].remeasured[i].config));
    EXPECT_DOUBLE_EQ(ranking->order[i].median_us, out.shapes[0].remeasured[i].timing.median_us);
    // each config's rounds are kept, so a later rule can be checked on real ones
    EXPECT_EQ(ranking->order[i].rounds, 5);
    EXPECT_EQ(ranking->order[i].round_us.size(), 5u);
    EXPECT_EQ(out.shapes[0].remeasured[i].rounds, 5);
  }
  // By default the rounds stop when the answer is known: the stand-in times every config alike (a tie)
  // in every round, so the first batch decides; the cap is the floor (a refresh searches little).
  const auto& how = out.shapes[0].remeasure;
  EXPECT_EQ(how.rounds, 5);
  EXPECT_EQ(how.stop, RoundStop::Tie);
  EXPECT_DOUBLE_EQ(how.cap_s, 3.0);
  EXPECT_GT(how.wall_s, 0);
  // the campaign's own settings are still there for a resume
  EXPECT_EQ(store.campaign(out.campaign_id)->options.at("strategy"), "refresh");
  EXPECT_EQ(store.campaign(out.campaign_id)->options.at("finalist_rounds"), 0);
}

TEST_F(RefreshFixture, AFixedFinalistRoundCountRunsThatManyRoundsWithoutACap) {
  Store store(dir / "r.db");
  for (size_t i = 0; i < 3; ++i) store.add_evaluation(result(i, 1.0 + 0.1 * static_cast<double>(i), "an older kernel source"));
  CampaignOptions o = refresh_options(store, family, {shape}, 3, base("ok"));
  o.finalist_rounds = 21;
  const auto out = run_campaign(store, family, {shape}, o);
  const auto& how = out.shapes.at(0).remeasure;
  EXPECT_EQ(how.rounds, 21);
  EXPECT_EQ(how.stop, RoundStop::Fixed);
  EXPECT_DOUBLE_EQ(how.cap_s, 0.0);
  EXPECT_EQ(campaign_options_from_json(store.campaign(out.campaign_id)->options).finalist_rounds, 21);
}

TEST(FinalistCap, AShareOfTheShapesSearchWithAFloor) {
  CampaignOptions o;
  EXPECT_DOUBLE_EQ(finalist_cap_s(o, 12), 3.0);  // a 40-evaluation search of us-scale kernels
  EXPECT_DOUBLE_EQ(finalist_cap_s(o, 100), 10.0);
  o.finalist_share = 0.2;
  o.finalist_min_s = 1;
  EXPECT_DOUBLE_EQ(finalist_cap_s(o, 10), 2.0);
  EXPECT_DOUBLE_EQ(finalist_cap_s(o, 0), 1.0);
  const CampaignOptions back = campaign_options_from_json(to_json(o));
  EXPECT_DOUBLE_EQ(back.finalist_share, 0.2);
  EXPECT_DOUBLE_EQ(back.finalist_min_s, 1);
}

// --time covers the finalists: the searches leave them each shape's floor and the share of the budget, at most
// a quarter of it; nothing without a budget or without a re-measure.
TEST(FinalistCap, TheSearchesLeaveTheFinalistsPartOfTheTimeBudget) {
  CampaignOptions o;
  EXPECT_DOUBLE_EQ(finalist_reserve_s(o, 6), 0.0);  // no --time
  o.budget.time_s = 3600;
  EXPECT_DOUBLE_EQ(finalist_reserve_s(o, 6), 6 * 3.0 + 360.0);
  o.budget.time_s = 300;
  EXPECT_DOUBLE_EQ(finalist_reserve_s(o, 24), 75.0);  // 24 x 3 + 30 = 102, capped at a quarter
  EXPECT_DOUBLE_EQ(finalist_reserve_s(o, 1), 33.0);
  o.remeasure_top_k = 1;
  EXPECT_DOUBLE_EQ(finalist_reserve_s(o, 1), 0.0);  // nothing to re-measure
  o.remeasure_top_k = 5;
  o.objective = Objective::Energy;
  EXPECT_DOUBLE_EQ(finalist_reserve_s(o, 1), 0.0);  // energy objectives skip the re-measure
}
