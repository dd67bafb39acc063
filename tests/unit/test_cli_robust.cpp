// The command line against bad input: every refusal is one line on stderr with a documented exit
// code (2 for a bad command line, 1 for a failed command), and nothing crashes. Runs the binary.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "cli_run.hpp"
#include "test_dir.hpp"

namespace fs = std::filesystem;

namespace {

const fs::path kFamilies = fs::path(KFORGE_TEST_DIR) / "families";

// One line, "kforge: ...", naming `needle`.
void expect_one_line_error(const CliResult& r, int rc, const std::string& needle, const std::string& what) {
  EXPECT_EQ(r.rc, rc) << what << "\n" << r.err;
  const auto lines = r.err_lines();
  ASSERT_EQ(lines.size(), 1u) << what << ": stderr is\n" << r.err;
  EXPECT_EQ(lines[0].rfind("kforge: ", 0), 0u) << what << ": " << lines[0];
  EXPECT_NE(lines[0].find(needle), std::string::npos) << what << ": " << lines[0];
}

struct BadOption {
  std::vector<std::string> args;
  std::string names;  // what the error must mention
};

// Each option with a value that used to wrap, pass or crash. Parsing refuses them before any
// work starts, so no GPU, spec or database is touched.
std::vector<BadOption> bad_options() {
  std::vector<BadOption> v;
  const std::vector<std::string> search = {"search", "--family", "vecadd"};
  const auto with = [](std::vector<std::string> base, std::vector<std::string> more) {
    base.insert(base.end(), more.begin(), more.end());
    return base;
  };
  for (const char* value : {"-5", "1.5", "abc", "", "99999999999999999999999"}) {
    v.push_back({with(search, {"--evals", value}), "--evals"});
    v.push_back({with(search, {"--plateau", value}), "--plateau"});
    v.push_back({with(search, {"--compile-jobs", value}), "--compile-jobs"});
    v.push_back({with(search, {"--top-k", value}), "--top-k"});
    v.push_back({with(search, {"--seed", value}), "--seed"});
    v.push_back({{"check", "--family", "vecadd", "--sample", value}, "--sample"});
    v.push_back({{"check", "--family", "vecadd", "-j", value}, "-j"});
    v.push_back({{"replay", "--family", "vecadd", "--seeds", value}, "--seeds"});
    v.push_back({{"replay", "--family", "vecadd", "--budget", value}, "--budget"});
    v.push_back({{"ablate", "--family", "vecadd", "--shape", "N=1,dtype=f32", "--rounds", value}, "--rounds"});
    v.push_back({{"bench", "--family", "vecadd", "--rounds", value}, "--rounds"});
    v.push_back({with(search, {"--finalist-rounds", value}), "--finalist-rounds"});
    v.push_back({{"resume", value}, ""});  // "-5" may read as an option: any one-line error
    v.push_back({{"worker", "--device", value}, "--device"});
  }
  for (const char* zero : {"0"}) {
    v.push_back({with(search, {"--compile-jobs", zero}), "--compile-jobs"});
    v.push_back({{"check", "--family", "vecadd", "--sample", zero}, "--sample"});
    v.push_back({{"check", "--family", "vecadd", "-j", zero}, "-j"});
    v.push_back({{"replay", "--family", "vecadd", "--seeds", zero}, "--seeds"});
    v.push_back({{"bench", "--family", "vecadd", "--rounds", zero}, "--rounds"});
    v.push_back({{"refresh", "--family", "vecadd", "--finalist-rounds", zero}, "--finalist-rounds"});
  }
  for (const char* a : {"Auto", "auto5", "-1", "nan"}) {
    v.push_back({{"bench", "--family", "vecadd", "--rounds", a}, "--rounds"});
    v.push_back({with(search, {"--finalist-share", a}), "--finalist-share"});
    v.push_back({with(search, {"--finalist-min-s", a}), "--finalist-min-s"});
    v.push_back({{"bench", "--family", "vecadd", "--rewarm-ms", a}, "--rewarm-ms"});
  }
  for (const char* d : {"-5h", "nan", "inf", "-inf", "0", "0s", "1e400", "5x", "h", "", "nanh", "0x10"}) {
    v.push_back({with(search, {"--time", d}), "--time"});
    v.push_back({{"resume", "1", "--time", d}, "--time"});
  }
  for (const char* s : {"-1", "nan", "inf", "0", "abc"}) v.push_back({with(search, {"--timeout", s}), "--timeout"});
  v.push_back({with(search, {"--no-such-option"}), "--no-such-option"});
  v.push_back({{"check"}, "--family"});
  v.push_back({{"no-such-command"}, "unknown command 'no-such-command'"});
  return v;
}

}  // namespace

TEST(CliOptions, BadNumbersAreOneLineUsageErrors) {
  const fs::path dir = fresh_test_dir("kforge_cli_options");
  for (const BadOption& b : bad_options()) {
    std::string what;
    for (const auto& a : b.args) what += "'" + a + "' ";
    std::vector<std::string> args = {"--db", (dir / "never.db").string(), "--spec-dir", kFamilies.string()};
    args.insert(args.end(), b.args.begin(), b.args.end());
    expect_one_line_error(run_kforge(args, dir), 2, b.names, what);
  }
  EXPECT_FALSE(fs::exists(dir / "never.db")) << "a refused command line touched the database";
}

// A seeded fuzz of the numeric options: values drawn from malformed shapes of numbers.
TEST(CliOptions, FuzzedNumbersNeverCrash) {
  const fs::path dir = fresh_test_dir("kforge_cli_fuzz");
  std::mt19937_64 rng(19);
  const std::vector<std::pair<std::vector<std::string>, std::string>> options = {
      {{"search", "--family", "vecadd", "--evals"}, "--evals"},
      {{"search", "--family", "vecadd", "--plateau"}, "--plateau"},
      {{"search", "--family", "vecadd", "--compile-jobs"}, "--compile-jobs"},
      {{"search", "--family", "vecadd", "--top-k"}, "--top-k"},
      {{"search", "--family", "vecadd", "--time"}, "--time"},
      {{"search", "--family", "vecadd", "--timeout"}, "--timeout"},
      {{"check", "--family", "vecadd", "--sample"}, "--sample"},
      {{"check", "--family", "vecadd", "-j"}, "-j"},
      {{"replay", "--family", "vecadd", "--seeds"}, "--seeds"}};
  const std::vector<std::string> junk = {"-", "+", ".", "e", "x", " ", "%", "'", "\"", "\\", "$", "0x", "1e", "--"};
  for (int i = 0; i < 60; ++i) {
    const auto& [args, name] = options[rng() % options.size()];
    std::string value;
    switch (rng() % 4) {
      case 0: value = "-" + std::to_string(rng() % 100000 + 1); break;                      // negative
      case 1: value = std::to_string(rng()) + std::to_string(rng()) + "0000"; break;        // huge
      case 2: value = std::to_string(rng() % 100) + "." + std::to_string(rng() % 9 + 1) + "q"; break;
      default:
        for (int k = 0; k < 3; ++k) value += junk[rng() % junk.size()];
    }
    std::vector<std::string> full = {"--db", (dir / "never.db").string(), "--spec-dir", kFamilies.string()};
    full.insert(full.end(), args.begin(), args.end());
    full.push_back(value);
    const CliResult r = run_kforge(full, dir);
    EXPECT_EQ(r.rc, 2) << name << " '" << value << "': " << r.err;
    EXPECT_EQ(r.err_lines().size(), 1u) << name << " '" << value << "': " << r.err;
  }
}

// A constraint of 20,000 terms used to overflow the evaluator's stack: `list` died of SIGSEGV.
TEST(CliRobust, ListSurvivesADeepExpression) {
  const fs::path dir = fresh_test_dir("kforge_cli_deep");
  fs::copy(kFamilies / "vecadd", dir / "specs");
  std::ifstream in(dir / "specs" / "vecadd.json");
  nlohmann::json spec = nlohmann::json::parse(in);
  std::string chain = "1";
  for (int i = 1; i < 20000; ++i) chain += "+1";
  spec["constraints"].push_back(chain + " > 0");
  std::ofstream(dir / "specs" / "vecadd.json") << spec.dump(1);
  const CliResult r = run_kforge({"--spec-dir", (dir / "specs").string(), "list"}, dir);
  expect_one_line_error(r, 1, "too deep", "list");
  EXPECT_NE(r.err.find("vecadd.json"), std::string::npos) << r.err;
  EXPECT_LT(r.err.size(), 600u);
}

// Read commands used to create an empty database for a mistyped --db.
TEST(CliRobust, ReadCommandsRefuseAMissingDatabase) {
  const fs::path dir = fresh_test_dir("kforge_cli_missing_db");
  const fs::path db = dir / "typo.db";
  for (const std::vector<std::string>& cmd :
       std::vector<std::vector<std::string>>{{"show"}, {"best", "--family", "vecadd"}}) {
    std::vector<std::string> args = {"--db", db.string(), "--spec-dir", (kFamilies / "vecadd").string()};
    args.insert(args.end(), cmd.begin(), cmd.end());
    expect_one_line_error(run_kforge(args, dir), 1, "typo.db", cmd.front());
    EXPECT_FALSE(fs::exists(db)) << cmd.front() << " created " << db;
  }
}

namespace {

nlohmann::json good_baseline(double us = 12.5) {
  return {{"family", "vecadd"}, {"shape", {{"N", 4096}, {"dtype", "f16"}}}, {"backend", "torch.add"},
          {"median_us", us},    {"device", {{"name", "NVIDIA H100"}, {"cc", 90}, {"sm_count", 132}}}};
}

CliResult import_baselines(const fs::path& dir, const nlohmann::json& list) {
  std::ofstream(dir / "baselines.json") << list.dump();
  return run_kforge({"--db", (dir / "r.db").string(), "--spec-dir", (kFamilies / "vecadd").string(), "baseline", "import",
                     (dir / "baselines.json").string()},
                    dir);
}

size_t stored_baselines(const fs::path& dir) {
  const std::string cmd = "sqlite3 " + sh_word((dir / "r.db").string()) + " 'SELECT count(*) FROM baselines' > " +
                          sh_word((dir / "count").string()) + " 2>&1";
  if (std::system(cmd.c_str()) != 0) return SIZE_MAX;
  std::ifstream in(dir / "count");
  size_t n = SIZE_MAX;
  in >> n;
  return n;
}

}  // namespace

// Negative times, wrapped device ids and "../" names were stored; half a file was imported before
// an error; a second import duplicated every row; errors did not name the record.
TEST(CliBaselineImport, ValidatesEveryRecordAtomically) {
  if (std::system("sqlite3 -version > /dev/null 2>&1") != 0) GTEST_SKIP() << "the sqlite3 shell is not installed";
  const fs::path dir = fresh_test_dir("kforge_cli_baseline");
  ASSERT_EQ(import_baselines(dir, nlohmann::json::array({good_baseline(1.0)})).rc, 0);
  ASSERT_EQ(stored_baselines(dir), 1u);
  struct Bad {
    std::string field;
    std::function<void(nlohmann::json&)> spoil;
  };
  const std::vector<Bad> bads = {
      {"median_us", [](nlohmann::json& j) { j["median_us"] = -3.0; }},
      {"median_us", [](nlohmann::json& j) { j["median_us"] = 0; }},
      {"median_us", [](nlohmann::json& j) { j["median_us"] = "fast"; }},
      {"device.cc", [](nlohmann::json& j) { j["device"]["cc"] = 4294967386LL; }},
      {"device.sm_count", [](nlohmann::json& j) { j["device"]["sm_count"] = -1; }},
      {"device.name", [](nlohmann::json& j) { j["device"]["name"] = ""; }},
      {"family", [](nlohmann::json& j) { j["family"] = "../vecadd"; }},
      {"family", [](nlohmann::json& j) { j["family"] = "no_such_family"; }},
      {"backend", [](nlohmann::json& j) { j["backend"] = "a/../../b"; }},
      {"shape", [](nlohmann::json& j) { j["shape"]["N"] = -4; }},
      {"device", [](nlohmann::json& j) { j.erase("device"); }},
  };
  for (const Bad& b : bads) {
    nlohmann::json bad = good_baseline(2.0);
    b.spoil(bad);
    // A good record first: nothing of the file may be stored when a later one is bad.
    const CliResult r = import_baselines(dir, nlohmann::json::array({good_baseline(3.0), bad}));
    expect_one_line_error(r, 1, "record 1: " + b.field, b.field + " " + bad.dump());
    EXPECT_NE(r.err.find("baselines.json"), std::string::npos) << r.err;
    EXPECT_EQ(stored_baselines(dir), 1u) << "after " << bad.dump();
  }
  // The same records twice (and twice within one file) are stored once.
  const nlohmann::json twice = nlohmann::json::array({good_baseline(4.0), good_baseline(4.0), good_baseline(5.0)});
  ASSERT_EQ(import_baselines(dir, twice).rc, 0);
  ASSERT_EQ(import_baselines(dir, twice).rc, 0);
  EXPECT_EQ(stored_baselines(dir), 3u);
}

// Read commands could not open a database they may not write (WAL mode wants to write).
TEST(CliRobust, ReadCommandsWorkOnAReadOnlyDatabase) {
  const fs::path dir = fresh_test_dir("kforge_cli_readonly");
  ASSERT_EQ(import_baselines(dir, nlohmann::json::array({good_baseline(1.0)})).rc, 0);
  fs::create_directories(dir / "ro");
  fs::copy_file(dir / "r.db", dir / "ro" / "r.db");
  ::chmod((dir / "ro" / "r.db").c_str(), 0444);
  ::chmod((dir / "ro").c_str(), 0555);
  ::chmod(dir.c_str(), 0755);
  // root ignores file modes: drop to an unprivileged user where that is possible.
  std::string prefix;
  if (::geteuid() == 0) {
    if (std::system("setpriv --version > /dev/null 2>&1") != 0) GTEST_SKIP() << "root without setpriv";
    prefix = "setpriv --reuid=65534 --regid=65534 --clear-groups";
  }
  const fs::path out_dir = fresh_test_dir("kforge_cli_readonly_out");
  ::chmod(out_dir.c_str(), 0777);
  for (const std::vector<std::string>& cmd :
       std::vector<std::vector<std::string>>{{"show"}, {"best", "--family", "vecadd"}}) {
    std::vector<std::string> args = {"--db", (dir / "ro" / "r.db").string(), "--spec-dir", (kFamilies / "vecadd").string()};
    args.insert(args.end(), cmd.begin(), cmd.end());
    const CliResult r = run_kforge(args, out_dir, prefix);
    EXPECT_EQ(r.rc, 0) << cmd.front() << ": " << r.err;
  }
  ::chmod((dir / "ro").c_str(), 0755);
}

namespace {

// vecadd copied into dir/specs with one change, checked with the private temp folder in dir/tmp.
CliResult check_spoiled_vecadd(const fs::path& dir, const std::function<void(nlohmann::json&)>& spoil) {
  fs::remove_all(dir / "specs");
  fs::copy(kFamilies / "vecadd", dir / "specs");
  std::ifstream in(dir / "specs" / "vecadd.json");
  nlohmann::json spec = nlohmann::json::parse(in);
  spoil(spec);
  std::ofstream(dir / "specs" / "vecadd.json") << spec.dump(1);
  fs::create_directories(dir / "tmp");
  return run_kforge({"-q", "--spec-dir", (dir / "specs").string(), "check", "--family", "vecadd", "--sample", "2",
                     "--no-cache", "-j", "2"},
                    dir, "TMPDIR=" + sh_word((dir / "tmp").string()));
}

}  // namespace

// check used to compile only: a division by zero in the grid, or a spec with no valid config
// at all, passed with exit code 0.
TEST(CliCheck, EvaluatesEveryExpressionAndRefusesAnEmptySpace) {
  const fs::path dir = fresh_test_dir("kforge_cli_check");
  const CliResult grid = check_spoiled_vecadd(dir, [](nlohmann::json& j) {
    j["launch"]["grid"][0] = "ceil_div(N, per_block) / (VEC - VEC)";
  });
  expect_one_line_error(grid, 1, "division by zero", "grid");
  EXPECT_NE(grid.err.find("kernel launch"), std::string::npos) << grid.err;
  const CliResult empty = check_spoiled_vecadd(dir, [](nlohmann::json& j) { j["constraints"].push_back("BLOCK > 4096"); });
  expect_one_line_error(empty, 1, "no valid config", "empty space");
  const CliResult arg = check_spoiled_vecadd(dir, [](nlohmann::json& j) { j["args"][4] = {{"i32", "N * 4096"}}; });
  expect_one_line_error(arg, 1, "does not fit in i32", "argument");
  const CliResult buffer = check_spoiled_vecadd(dir, [](nlohmann::json& j) { j["buffers"][2]["count"] = "N - 2 * N"; });
  expect_one_line_error(buffer, 1, "buffer C", "buffer");
  const CliResult cost = check_spoiled_vecadd(dir, [](nlohmann::json& j) { j["cost"]["bytes"] = "N / (N - N)"; });
  expect_one_line_error(cost, 1, "bytes", "cost");
  const CliResult reference = check_spoiled_vecadd(dir, [](nlohmann::json& j) {
    j["reference"]["launch"]["grid"][0] = "N % 0";
  });
  expect_one_line_error(reference, 1, "reference", "reference");
  // The untouched family still passes, and uncached compiles left no folder behind (they used
  // a fixed /tmp/kforge-cubins-<uid> that was never cleaned).
  const CliResult good = check_spoiled_vecadd(dir, [](nlohmann::json&) {});
  EXPECT_EQ(good.rc, 0) << good.err;
  for (const auto& e : fs::directory_iterator(dir / "tmp")) ADD_FAILURE() << "left behind: " << e.path();
}

// A compile pool the system cannot give all its threads used to abort ("terminate called
// without an active exception"). Under a memory limit, check either runs with fewer threads or
// fails with one line, never by a signal.
TEST(CliCheck, ThreadStartFailureIsNotACrash) {
  const fs::path dir = fresh_test_dir("kforge_cli_threads");
  fs::copy(kFamilies / "vecadd", dir / "specs");
  const CliResult r = run_kforge({"--spec-dir", (dir / "specs").string(), "check", "--family", "vecadd", "--sample",
                                  "1", "--no-cache", "-j", "1000"},
                                 dir, "ulimit -v 1500000;");
  EXPECT_LT(r.rc, 128) << "killed by a signal: " << r.err;
  EXPECT_EQ(r.err.find("terminate called"), std::string::npos) << r.err;
  if (r.rc != 0) {
    const auto lines = r.err_lines();
    ASSERT_FALSE(lines.empty());
    EXPECT_EQ(lines.back().rfind("kforge: ", 0), 0u) << r.err;
  }
}
