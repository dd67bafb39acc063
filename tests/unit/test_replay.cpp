// Replay: recorded spaces, runs against them, statistics and the three renderings.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "importers/import.hpp"
#include "replay/replay.hpp"
#include "replay/report.hpp"
#include "strategy/strategy.hpp"

using namespace kf;

namespace {

// X in {1,2,3,4}, Y in {1,2}: 8 configs, of which X=4,Y=2 was never recorded (invalid) and
// X=3,Y=1 failed. Times: 10*X + Y, so the optimum is X=1,Y=1 = 11 us.
RecordedSpace tiny() {
  std::vector<ParamSpec> params = {{"X", {int64_t{1}, int64_t{2}, int64_t{3}, int64_t{4}}},
                                   {"Y", {int64_t{1}, int64_t{2}}}};
  std::vector<RecordedPoint> points;
  for (int64_t x = 4; x >= 1; --x)  // recorded out of enumeration order on purpose
    for (int64_t y = 1; y <= 2; ++y) {
      if (x == 4 && y == 2) continue;
      Config c = {{"X", x}, {"Y", y}};
      points.push_back({c, x == 3 && y == 1 ? std::nullopt : std::optional<double>(double(10 * x + y))});
    }
  return RecordedSpace(params, points, "tiny");
}

}  // namespace

TEST(RecordedSpace, ValidityIsWasRecorded) {
  RecordedSpace r = tiny();
  EXPECT_EQ(r.size(), 7u);
  EXPECT_EQ(r.failed(), 1u);
  EXPECT_EQ(r.space().cardinality(), 8u);
  EXPECT_EQ(r.space().enumerate_valid().size(), 7u);
  EXPECT_FALSE(r.space().valid(parse_assignment("X=4,Y=2")));
  EXPECT_TRUE(r.space().valid(parse_assignment("X=3,Y=1")));  // failed, but recorded
  ASSERT_NE(r.optimum(), nullptr);
  EXPECT_EQ(to_string(r.optimum()->config), "X=1,Y=1");
  EXPECT_DOUBLE_EQ(*r.optimum()->time_us, 11.0);
  EXPECT_DOUBLE_EQ(*r.worst_us(), 41.0);
  ASSERT_NE(r.find(parse_assignment("X=3,Y=1")), nullptr);
  EXPECT_FALSE(r.find(parse_assignment("X=3,Y=1"))->time_us);
  EXPECT_EQ(r.find(parse_assignment("X=4,Y=2")), nullptr);
  // Copies stay consistent (the validity predicate shares the index).
  RecordedSpace copy = r;
  EXPECT_EQ(copy.space().enumerate_valid().size(), 7u);
}

TEST(RecordedSpace, DuplicatesKeepTheFastestAndBadPointsThrow) {
  std::vector<ParamSpec> params = {{"X", {int64_t{1}, int64_t{2}}}};
  RecordedSpace r(params, {{parse_assignment("X=1"), 5.0},
                           {parse_assignment("X=1"), std::nullopt},
                           {parse_assignment("X=1"), 3.0},
                           {parse_assignment("X=2"), std::nullopt}});
  EXPECT_EQ(r.size(), 2u);
  EXPECT_EQ(r.failed(), 1u);
  EXPECT_DOUBLE_EQ(*r.find(parse_assignment("X=1"))->time_us, 3.0);
  EXPECT_THROW(RecordedSpace(params, {{parse_assignment("X=3"), 1.0}}), std::invalid_argument);
  EXPECT_THROW(RecordedSpace(params, {{parse_assignment("X=1,Y=1"), 1.0}}), std::invalid_argument);
  EXPECT_THROW(RecordedSpace(params, {{parse_assignment("X=1"), -1.0}}), std::invalid_argument);
  // "X=a" is a string where the domain holds integers.
  EXPECT_THROW(RecordedSpace(params, {{Config{{"X", std::string("1")}}, 1.0}}), std::invalid_argument);
}

TEST(Replay, Quantile) {
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_DOUBLE_EQ(quantile({3, 1, 2}, 0.5), 2);
  EXPECT_DOUBLE_EQ(quantile({1, 2, 3, 4}, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(quantile({1, 2, 3, 4}, 0.25), 1.75);
  EXPECT_DOUBLE_EQ(quantile({1, 2, inf, inf}, 0.25), 1.75);
  EXPECT_TRUE(std::isinf(quantile({1, 2, inf, inf}, 0.5)));
  EXPECT_TRUE(std::isinf(quantile({1, inf}, 0.75)));
  EXPECT_TRUE(std::isnan(quantile({}, 0.5)));
}

TEST(Replay, ExhaustiveRunIsExact) {
  RecordedSpace r = tiny();
  // Enumeration order: X=1,Y=1 (11) first, so the best is 11 from the first evaluation on.
  ReplayRun run = replay_run(r, "exhaustive", 1, 0);
  EXPECT_EQ(run.evaluations, 7u);
  ASSERT_EQ(run.best_us.size(), 7u);
  for (double b : run.best_us) EXPECT_DOUBLE_EQ(b, 11.0);
  ReplayRun part = replay_run(r, "exhaustive", 1, 3);
  EXPECT_EQ(part.evaluations, 3u);
}

// Seed configs are where a run starts (a campaign seeded from a neighbouring shape): a seed at
// the optimum is found by the first evaluation; a seed the recorded space lacks is dropped.
TEST(Replay, SeededRunsStartAtTheSeeds) {
  RecordedSpace r = tiny();
  ReplayOptions o;
  o.seeds = 5;
  o.budget = 3;
  o.seed_configs = {parse_assignment("X=4,Y=2"), parse_assignment("X=1,Y=1")};  // first: never recorded
  const ReplayReport seeded = replay(r, {"evo", "anneal"}, o);
  for (const auto& s : seeded.strategies) {
    EXPECT_DOUBLE_EQ(s.median_curve.at(0), 1.0) << s.strategy;  // best / optimum after one evaluation
    EXPECT_DOUBLE_EQ(s.tolerances.at(0).median, 1.0) << s.strategy;
  }
  const ReplayRun first = replay_run(r, "evo", 1, 1, nlohmann::json::object(), {parse_assignment("X=2,Y=2")});
  EXPECT_DOUBLE_EQ(first.best_us.at(0), 22.0);
}

TEST(Replay, StatisticsOfEveryStrategy) {
  RecordedSpace r = tiny();
  ReplayOptions o;
  o.seeds = 20;
  o.threads = 2;
  ReplayReport rep = replay(r, {"exhaustive", "random", "evo", "anneal"}, o);
  EXPECT_EQ(rep.valid_configs, 7u);
  EXPECT_EQ(rep.failed_configs, 1u);
  EXPECT_EQ(rep.budget, 7u);
  EXPECT_DOUBLE_EQ(rep.optimum_us, 11.0);
  ASSERT_EQ(rep.strategies.size(), 4u);
  const auto& ex = rep.strategies[0];
  ASSERT_EQ(ex.tolerances.size(), 3u);
  EXPECT_DOUBLE_EQ(ex.tolerances[0].median, 1.0);
  EXPECT_DOUBLE_EQ(ex.tolerances[0].p75, 1.0);
  EXPECT_DOUBLE_EQ(ex.tolerances[0].reached, 1.0);
  EXPECT_NEAR(ex.tolerances[0].median_fraction, 1.0 / 7, 1e-12);
  for (const auto& s : rep.strategies) {
    // With the whole space as budget, every run finds the optimum.
    for (const auto& t : s.tolerances) EXPECT_DOUBLE_EQ(t.reached, 1.0) << s.strategy;
    ASSERT_EQ(s.mean_curve.size(), 7u);
    EXPECT_DOUBLE_EQ(s.mean_curve.back(), 1.0) << s.strategy;
    for (size_t k = 1; k < s.mean_curve.size(); ++k) EXPECT_LE(s.mean_curve[k], s.mean_curve[k - 1]);
    EXPECT_LE(s.p25_curve[0], s.median_curve[0]);
    EXPECT_LE(s.median_curve[0], s.p75_curve[0]);
  }
  // More threads, same report.
  o.threads = 1;
  ReplayReport again = replay(r, {"exhaustive", "random", "evo", "anneal"}, o);
  EXPECT_EQ(to_json(again).dump(), to_json(rep).dump());
}

TEST(Replay, Renderings) {
  RecordedSpace r = tiny();
  ReplayReport rep = replay(r, {"exhaustive", "random"}, 5, 4);
  EXPECT_EQ(rep.budget, 4u);
  std::string table = format_table(rep);
  EXPECT_NE(table.find("tiny"), std::string::npos) << table;
  EXPECT_NE(table.find("within 5%"), std::string::npos) << table;
  EXPECT_NE(table.find("random"), std::string::npos) << table;
  EXPECT_NE(table.find("exhaustive"), std::string::npos) << table;

  nlohmann::json j = to_json(rep);
  EXPECT_EQ(j["space"]["configs"], 7);
  EXPECT_EQ(j["space"]["failed"], 1);
  EXPECT_EQ(j["space"]["optimum"]["X"], 1);
  EXPECT_EQ(j["budget"], 4);
  ASSERT_EQ(j["strategies"].size(), 2u);
  EXPECT_EQ(j["strategies"][0]["strategy"], "exhaustive");
  EXPECT_EQ(j["strategies"][0]["to_reach"][1]["tolerance"], 0.05);
  EXPECT_EQ(j["strategies"][0]["to_reach"][1]["median"], 1.0);
  EXPECT_EQ(j["strategies"][1]["curve"]["mean"].size(), 4u);

  std::string csv = curves_csv(rep);
  std::istringstream in(csv);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "strategy,evaluations,fraction_of_space,mean,median,p25,p75");
  size_t rows = 0;
  while (std::getline(in, line)) ++rows;
  EXPECT_EQ(rows, 8u);  // 2 strategies x 4 evaluations
  EXPECT_NE(csv.find("exhaustive,1,0.142857,1,1,1,1"), std::string::npos) << csv;
}

TEST(Replay, UnreachedIsNullInJson) {
  // Budget 1 and a space whose optimum is enumerated last: exhaustive never gets there.
  std::vector<ParamSpec> params = {{"X", {int64_t{1}, int64_t{2}, int64_t{3}}}};
  RecordedSpace r(params, {{parse_assignment("X=1"), 30.0},
                           {parse_assignment("X=2"), 20.0},
                           {parse_assignment("X=3"), 10.0}});
  ReplayReport rep = replay(r, {"exhaustive"}, 3, 1);
  EXPECT_TRUE(std::isinf(rep.strategies[0].tolerances[0].median));
  EXPECT_DOUBLE_EQ(rep.strategies[0].tolerances[0].reached, 0.0);
  nlohmann::json j = to_json(rep);
  EXPECT_TRUE(j["strategies"][0]["to_reach"][0]["median"].is_null());
  EXPECT_NE(format_table(rep).find(" - "), std::string::npos);
  EXPECT_DOUBLE_EQ(rep.strategies[0].mean_curve[0], 3.0);
}

TEST(Replay, Errors) {
  std::vector<ParamSpec> params = {{"X", {int64_t{1}, int64_t{2}}}};
  RecordedSpace all_failed(params, {{parse_assignment("X=1"), std::nullopt}});
  EXPECT_THROW(replay(all_failed, {"random"}, 3, 0), std::invalid_argument);
  RecordedSpace r = tiny();
  EXPECT_THROW(replay(r, {"bogus"}, 3, 0), std::invalid_argument);
  ReplayOptions o;
  o.strategy_options = {{"evo", {{"population", "x"}}}};
  EXPECT_THROW(replay(r, {"evo"}, o), std::invalid_argument);
  o.seeds = 0;
  EXPECT_THROW(replay(r, {"random"}, o), std::invalid_argument);
}

TEST(Replay, KernelTunerSamples) {
  // Every strategy finds the recorded optimum of each public sample within the whole
  // space, and the replay is the same for the same seeds.
  for (const char* file : {"kernel_tuner_test_cache_file.json", "kernel_tuner_strategies_test_cache_file.json",
                           "kernel_tuner_synthetic_fp32_cache_NVIDIA_RTX_A4000.json",
                           "t4_vector_add_with_failures.json"}) {
    RecordedSpace r = import_recorded(std::string(KFORGE_TEST_DIR) + "/data/" + file);
    ReplayReport rep = replay(r, strategy_names(), 20, 0);
    for (const auto& s : rep.strategies) {
      EXPECT_DOUBLE_EQ(s.tolerances[0].reached, 1.0) << file << " " << s.strategy;
      EXPECT_DOUBLE_EQ(s.mean_curve.back(), 1.0) << file << " " << s.strategy;
    }
    EXPECT_EQ(to_json(replay(r, strategy_names(), 20, 0)).dump(), to_json(rep).dump()) << file;
  }
}

// Replay runs a campaign's loop: with several configs in flight the strategy hears outcomes
// late (so the proposals differ from ask-one-tell-one), every config is still evaluated once,
// the budget counts dispatches, and a plateau stops a run.
TEST(Replay, RunsTheCampaignLoop) {
  RecordedSpace r = tiny();
  const ReplayRun deep = replay_run(r, "exhaustive", 1, 0, nlohmann::json::object(), {}, {4, 0});
  EXPECT_EQ(deep.evaluations, 7u);
  EXPECT_EQ(deep.best_us.size(), 7u);
  EXPECT_EQ(replay_run(r, "random", 1, 5, nlohmann::json::object(), {}, {4, 0}).evaluations, 5u);
  // A plateau of 2: the exhaustive order finds its best (11) first, then two more end the run
  // (configs in flight when it stops are still evaluated).
  const ReplayRun stopped = replay_run(r, "exhaustive", 1, 0, nlohmann::json::object(), {}, {1, 2});
  EXPECT_EQ(stopped.evaluations, 3u);
  const ReplayRun stopped_deep = replay_run(r, "exhaustive", 1, 0, nlohmann::json::object(), {}, {4, 2});
  EXPECT_GE(stopped_deep.evaluations, 3u);
  EXPECT_LE(stopped_deep.evaluations, 6u);
  // Late tells change what evo proposes on a real space; each depth is deterministic.
  RecordedSpace conv = import_recorded(std::string(KFORGE_TEST_DIR) + "/data/kernel_tuner_convolution_MI50_times.json");
  bool differs = false;
  for (uint64_t seed = 1; seed <= 3 && !differs; ++seed) {
    const auto shallow = replay_run(conv, "evo", seed, 60, nlohmann::json::object(), {}, {1, 0});
    const auto deep4 = replay_run(conv, "evo", seed, 60, nlohmann::json::object(), {}, {4, 0});
    EXPECT_EQ(deep4.best_us, replay_run(conv, "evo", seed, 60, nlohmann::json::object(), {}, {4, 0}).best_us);
    differs = shallow.best_us != deep4.best_us;
  }
  EXPECT_TRUE(differs) << "the depth has no effect";
}

// `replay --json` carries every run's trajectory: one entry per seed, in seed order, whose
// steps expand back to exactly the run replay_run gives for that seed, and from which the
// reported medians follow.
TEST(Replay, JsonCarriesEachRunsTrajectory) {
  RecordedSpace r = import_recorded(std::string(KFORGE_TEST_DIR) + "/data/kernel_tuner_convolution_MI50_times.json");
  ReplayOptions o;
  o.seeds = 5;
  o.first_seed = 7;
  o.budget = 120;
  ReplayReport rep = replay(r, {"evo", "random"}, o);
  const nlohmann::json j = to_json(rep);
  for (size_t s = 0; s < 2; ++s) {
    const auto& runs = j["strategies"][s]["runs"];
    ASSERT_EQ(runs.size(), 5u);
    std::vector<double> needed;
    for (size_t i = 0; i < runs.size(); ++i) {
      EXPECT_EQ(runs[i]["seed"], 7 + i);
      EXPECT_EQ(runs[i]["evaluations"], 120);
      const auto steps = runs[i]["best_us"];
      ASSERT_GE(steps.size(), 1u);
      EXPECT_EQ(steps[0][0], 1);
      for (size_t k = 1; k < steps.size(); ++k) EXPECT_LT(steps[k][1].get<double>(), steps[k - 1][1].get<double>());
      const auto expanded = expand_steps(steps, 120);
      const auto direct = replay_run(r, rep.strategies[s].strategy, 7 + i, 120);
      EXPECT_EQ(expanded, direct.best_us) << rep.strategies[s].strategy << " seed " << 7 + i;
      const double target = rep.optimum_us * 1.05 * (1 + 1e-12);
      auto it = std::find_if(expanded.begin(), expanded.end(), [&](double b) { return b <= target; });
      needed.push_back(it == expanded.end() ? std::numeric_limits<double>::infinity()
                                            : static_cast<double>(it - expanded.begin() + 1));
    }
    EXPECT_DOUBLE_EQ(quantile(needed, 0.5), rep.strategies[s].tolerances[1].median);
  }
  // Evo's runs differ between seeds: the trajectories are each run's, not copies.
  EXPECT_NE(j["strategies"][0]["runs"][0]["best_us"].dump(), j["strategies"][0]["runs"][1]["best_us"].dump());
}
