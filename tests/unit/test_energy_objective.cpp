// Energy as an objective, end to end through the CLI with the stand-in worker (tests/fakes/fake_worker.py): its
// time is the toy config's BLOCK and, with KFORGE_FAKE_ENERGY, its power falls with the time squared, so the
// fastest config (BLOCK 64) and the most frugal one (BLOCK 256) differ. `search --objective energy` records
// every measurement; `best` answers by the objective asked; `best --pareto` lists the time/energy front.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>

#include "cli_run.hpp"
#include "core/objective.hpp"
#include "test_dir.hpp"

namespace fs = std::filesystem;

namespace {

struct EnergyObjective : ::testing::Test {
  fs::path dir;
  void SetUp() override { dir = fresh_test_dir("kforge_energy_objective"); }
  void TearDown() override { fs::remove_all(dir); }

  CliResult kforge(std::vector<std::string> args, bool energy = true) {
    std::vector<std::string> all{"--db", (dir / "r.db").string(), "--cache-dir", (dir / "cache").string(),
                                 "--spec-dir", (fs::path(KFORGE_TEST_DIR) / "families/toy").string()};
    all.insert(all.end(), args.begin(), args.end());
    const std::string env = std::string(energy ? "KFORGE_FAKE_ENERGY=1 " : "") +
                            "KFORGE_FAKE_GPUS=1 KFORGE_FAKE_TIME_PARAM=BLOCK KFORGE_WORKER=" +
                            sh_word("python3 -S " + std::string(KFORGE_TEST_DIR) + "/fakes/fake_worker.py ok 1");
    return run_kforge(all, dir, env);
  }
  CliResult search(const std::string& objective, bool energy = true) {
    return kforge({"-q", "search", "--family", "toy", "--shape", "N=4096,dtype=f16", "--strategy", "exhaustive",
                   "--objective", objective, "--gpus", "0", "--compile-jobs", "2"},
                  energy);
  }
  nlohmann::json best(std::vector<std::string> extra) {
    std::vector<std::string> args{"best", "--family", "toy", "--shape", "N=4096,dtype=f16", "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    const CliResult r = kforge(args);
    EXPECT_EQ(r.rc, 0) << r.err;
    return nlohmann::json::parse(r.out);
  }
};

TEST_F(EnergyObjective, BestAnswersByTheObjectiveAskedAndListsTheFront) {
  const CliResult s = search("energy");
  ASSERT_EQ(s.rc, 0) << s.err;
  const auto by_time = best({});
  ASSERT_EQ(by_time.size(), 1u);
  EXPECT_EQ(by_time[0]["config"]["BLOCK"], 64);
  EXPECT_DOUBLE_EQ(by_time[0]["power_w"].get<double>(), 1e6 / (64.0 * 64.0));
  const auto by_energy = best({"--objective", "energy"});
  EXPECT_EQ(by_energy[0]["config"]["BLOCK"], 256);
  EXPECT_DOUBLE_EQ(by_energy[0]["energy_uj"].get<double>(), 1e6 / 256.0);
  // energy x time is the same for every config here: a tie, and the tie goes to the faster
  const auto front = best({"--pareto"});
  ASSERT_EQ(front.size(), 3u) << front.dump();  // one per BLOCK: each faster or more frugal than the others
  EXPECT_EQ(front[0]["config"]["BLOCK"], 64);
  EXPECT_EQ(front[1]["config"]["BLOCK"], 128);
  EXPECT_EQ(front[2]["config"]["BLOCK"], 256);
  EXPECT_GT(front[0]["energy_uj"].get<double>(), front[2]["energy_uj"].get<double>());
}

// A time search measures no energy unless asked (--energy): by energy, best then has no winner and says why in
// one line; a search for energy measures those configs again; with --energy a time search measures it too.
// --objective rejects an unknown name.
TEST_F(EnergyObjective, EnergyIsMeasuredWhereTheSearchAsksForIt) {
  const CliResult s = search("time");
  ASSERT_EQ(s.rc, 0) << s.err;
  const CliResult r = kforge({"best", "--family", "toy", "--shape", "N=4096,dtype=f16", "--objective", "energy"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.err.find("no record with energy measured"), std::string::npos) << r.err;
  const CliResult bad = kforge({"best", "--family", "toy", "--objective", "joules"});
  EXPECT_EQ(bad.rc, 2) << bad.err;
  EXPECT_NE(bad.err.find("--objective"), std::string::npos) << bad.err;
  // searched again for energy, the configs timed without it run again and the shape gets its frugal winner
  const CliResult again = search("energy");
  ASSERT_EQ(again.rc, 0) << again.err;
  EXPECT_EQ(best({"--objective", "energy"})[0]["config"]["BLOCK"], 256);
  // (another shape: the configs measured above are not measured again)
  const CliResult with = kforge({"-q", "search", "--family", "toy", "--shape", "N=2048,dtype=f16", "--strategy",
                                 "exhaustive", "--energy", "--gpus", "0", "--compile-jobs", "2"});
  ASSERT_EQ(with.rc, 0) << with.err;
  const CliResult by_energy = kforge({"best", "--family", "toy", "--shape", "N=2048,dtype=f16", "--objective", "energy",
                                      "--json"});
  ASSERT_EQ(by_energy.rc, 0) << by_energy.err;
  EXPECT_EQ(nlohmann::json::parse(by_energy.out)[0]["config"]["BLOCK"], 256) << by_energy.out;
}

}  // namespace

TEST(Objective, ParsesItsThreeNamesAndValuesARecord) {
  EXPECT_EQ(kf::parse_objective("edp"), kf::Objective::Edp);
  EXPECT_EQ(kf::to_string(kf::parse_objective("energy")), "energy");
  EXPECT_THROW(kf::parse_objective("joules"), std::invalid_argument);
  kf::TimingStats t;
  t.median_us = 10;
  EXPECT_EQ(kf::objective_value(t, kf::Objective::Time), 10);
  EXPECT_TRUE(std::isinf(kf::objective_value(t, kf::Objective::Energy)));  // not measured
  t.power_w = 300;
  t.energy_uj = 3000;
  EXPECT_EQ(kf::objective_value(t, kf::Objective::Energy), 3000);
  EXPECT_EQ(kf::objective_value(t, kf::Objective::Edp), 30000);
}
