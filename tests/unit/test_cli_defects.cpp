// The command line's smaller promises, each once broken: negative counts, databases created for
// a mistyped --db or unreadable when read-only, hints that do not survive a shell, control
// characters in an error line, the reference counted as a config, one bad spec hiding the others,
// a mistyped command, and unknown option values that were not usage errors. Runs the binary.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "cli/campaign_report.hpp"
#include "cli/common.hpp"
#include "cli/unknown_command.hpp"
#include "cli_run.hpp"
#include "store/store.hpp"
#include "test_dir.hpp"
#include "util/shell_quote.hpp"

namespace fs = std::filesystem;

namespace {

const fs::path kFamilies = fs::path(KFORGE_TEST_DIR) / "families";

std::string describe(const std::vector<std::string>& args) {
  std::string what;
  for (const auto& a : args) what += sh_word(a) + " ";
  return what;
}

// One line, "kforge: ...", naming each of `needles`.
void expect_one_line_error(const CliResult& r, int rc, const std::vector<std::string>& needles,
                           const std::string& what) {
  EXPECT_EQ(r.rc, rc) << what << "\n" << r.err;
  const auto lines = r.err_lines();
  ASSERT_EQ(lines.size(), 1u) << what << ": stderr is\n" << r.err;
  EXPECT_EQ(lines[0].rfind("kforge: ", 0), 0u) << what << ": " << lines[0];
  for (const auto& n : needles) EXPECT_NE(lines[0].find(n), std::string::npos) << what << ": " << lines[0] << " lacks " << n;
}

CliResult kforge_in(const fs::path& dir, const fs::path& db, const fs::path& specs, std::vector<std::string> args,
                    const std::string& prefix = "") {
  std::vector<std::string> full = {"--db", db.string(), "--spec-dir", specs.string()};
  full.insert(full.end(), args.begin(), args.end());
  return run_kforge(full, dir, prefix);
}

// The words /bin/sh makes of `text`, one per line.
std::vector<std::string> shell_words(const std::string& text, const fs::path& dir) {
  const fs::path out = dir / "words";
  // NUL-separated: a word may hold a newline.
  const std::string cmd = "/bin/sh -c " + sh_word("printf '%s\\0' " + text) + " > " + sh_word(out.string());
  if (std::system(cmd.c_str()) != 0) return {"<shell failed>"};
  std::ifstream in(out);
  std::vector<std::string> words;
  for (std::string w; std::getline(in, w, '\0');) words.push_back(w);
  return words;
}

// A database holding one ok vecadd result at N=4096,dtype=f16.
void write_vecadd_result(const fs::path& db) {
  kf::Store store(db);
  kf::EvaluationRecord e;
  e.family = "vecadd";
  e.config = {{"BLOCK", int64_t{128}}, {"VEC", int64_t{2}}, {"BUG", std::string("none")}, {"SMEM_KB", int64_t{0}}};
  e.shape = {{"N", int64_t{4096}}, {"dtype", std::string("f16")}};
  e.device = {"NVIDIA H100", 90, 132, "560.0"};
  e.status = kf::Status::Ok;
  e.timing = kf::TimingStats{};
  e.timing->median_us = 3.5;
  e.timing->reps = 10;
  store.add_evaluation(e);
}

// root ignores file modes: the prefix that drops to an unprivileged user, or nullopt where none can.
std::optional<std::string> unprivileged_prefix() {
  if (::geteuid() != 0) return "";
  if (std::system("setpriv --version > /dev/null 2>&1") != 0) return std::nullopt;
  return "setpriv --reuid=65534 --regid=65534 --clear-groups";
}

}  // namespace

// `replay --depth -1` ran with 18446744073709551615 configs in flight; --plateau -1 was taken.
TEST(CliDefects, ReplayRefusesNegativeAndZeroCounts) {
  const fs::path dir = fresh_test_dir("kforge_cli_replay_counts");
  for (const auto& [option, value] : std::vector<std::pair<std::string, std::string>>{
           {"--depth", "-1"}, {"--depth", "0"}, {"--depth", "1.5"}, {"--plateau", "-1"}, {"--plateau", "x"}}) {
    const std::vector<std::string> args = {"replay", "--family", "vecadd", "--shape", "N=4096,dtype=f16", option, value};
    expect_one_line_error(kforge_in(dir, dir / "never.db", kFamilies / "vecadd", args), 2, {option, value},
                          describe(args));
  }
  EXPECT_FALSE(fs::exists(dir / "never.db"));
}

// results, resume, refresh and bench used to create an empty database for a mistyped --db.
TEST(CliDefects, CommandsThatNeedStoredResultsRefuseAMissingDatabase) {
  const fs::path dir = fresh_test_dir("kforge_cli_missing_store");
  const fs::path db = dir / "typo.db";
  const std::vector<std::vector<std::string>> commands = {
      {"results", "--format", "t4", "--family", "vecadd", "--shape", "N=4096,dtype=f16", "--out", "out.json"},
      {"resume", "1"},
      {"refresh", "--family", "vecadd", "--suite", "small"},
      {"bench", "--family", "vecadd", "--shape", "N=4096,dtype=f16", "--config", "best"}};
  for (const auto& cmd : commands) {
    expect_one_line_error(kforge_in(dir, db, kFamilies / "vecadd", cmd), 1, {"typo.db", "no such database"},
                          describe(cmd));
    EXPECT_FALSE(fs::exists(db)) << cmd.front() << " created " << db;
  }
}

// results opened its database for writing, so a read-only one (someone else's, a shipped file)
// could not be exported.
TEST(CliDefects, ResultsReadsAReadOnlyDatabase) {
  const auto prefix = unprivileged_prefix();
  if (!prefix) GTEST_SKIP() << "root without setpriv";
  const fs::path dir = fresh_test_dir("kforge_cli_results_ro");
  fs::create_directories(dir / "ro");
  write_vecadd_result(dir / "ro" / "r.db");
  ::chmod((dir / "ro" / "r.db").c_str(), 0444);
  ::chmod((dir / "ro").c_str(), 0555);
  ::chmod(dir.c_str(), 0755);
  const fs::path out_dir = fresh_test_dir("kforge_cli_results_ro_out");
  ::chmod(out_dir.c_str(), 0777);
  const CliResult r = kforge_in(out_dir, dir / "ro" / "r.db", kFamilies / "vecadd",
                                {"results", "--format", "t4", "--family", "vecadd", "--shape", "N=4096,dtype=f16",
                                 "--out", (out_dir / "t4.json").string()},
                                *prefix);
  ::chmod((dir / "ro").c_str(), 0755);
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(fs::exists(out_dir / "t4.json")) << r.err;
  EXPECT_NE(r.err.find("1 results (1 ok)"), std::string::npos) << r.err;
}

TEST(CliDefects, ShellQuoteKeepsEveryWordWhole) {
  const fs::path dir = fresh_test_dir("kforge_cli_shell_quote");
  const std::vector<std::string> words = {"plain/path.db", "my runs/r.db", "it's", "", "$HOME", "a\"b", "*", "~x",
                                          "semi;colon", "back\\slash", "new\nline", "postgresql://u:***@h/db"};
  std::string line;
  for (const auto& w : words) line += kf::shell_quote(w) + " ";
  EXPECT_EQ(shell_words(line, dir), words);
  EXPECT_EQ(kf::shell_quote("N=4096,dtype=f16"), "N=4096,dtype=f16");  // nothing to quote: left as it is
}

// The global options every printed hint starts with: the database (a password masked) and the
// spec folder when one was given.
TEST(CliDefects, HintsCarryTheDatabaseAndSpecFolder) {
  kf::cli::Globals g;
  g.db = "my runs/r.db";
  EXPECT_EQ(kf::cli::resume_command(g, 3), "kforge --db 'my runs/r.db' resume 3");
  g.spec_dir = "/specs/it's here";
  EXPECT_EQ(kf::cli::resume_command(g, 3), "kforge --db 'my runs/r.db' --spec-dir '/specs/it'\\''s here' resume 3");
  g.db = "postgresql://me:secret@host/db";
  g.spec_dir.clear();
  EXPECT_EQ(kf::cli::kforge_command(g).find("secret"), std::string::npos) << kf::cli::kforge_command(g);
}

// A campaign cut short by --time printed no way back; the hint it prints now reaches the same
// database (a path with a space) and specs when pasted into a shell.
TEST(CliDefects, AStoppedCampaignPrintsAResumeCommandThatRuns) {
  const fs::path dir = fresh_test_dir("kforge_cli_resume_hint");
  fs::create_directories(dir / "my runs");
  const fs::path db = dir / "my runs" / "r.db";
  const std::string worker = "KFORGE_WORKER=" + sh_word("python3 -S " + std::string(KFORGE_TEST_DIR) +
                                                        "/fakes/fake_worker.py ok 1");
  const CliResult first = kforge_in(dir, db, kFamilies / "toy",
                                    {"-q", "search", "--family", "toy", "--shape", "N=4096,dtype=f16", "--strategy",
                                     "exhaustive", "--time", "1s", "--gpus", "0", "--top-k", "0", "--compile-jobs", "2"},
                                    worker + " KFORGE_FAKE_EVAL_S=0.3");
  ASSERT_EQ(first.rc, 0) << first.err;
  const std::string mark = "resume with: ";
  const size_t at = first.out.find(mark);
  ASSERT_NE(at, std::string::npos) << first.out;
  std::string hint = first.out.substr(at + mark.size());
  hint.resize(hint.find('\n'));
  EXPECT_EQ(hint, "kforge --db " + kf::shell_quote(db.string()) + " --spec-dir " +
                      kf::shell_quote((kFamilies / "toy").string()) + " resume 1");
  ASSERT_EQ(hint.rfind("kforge ", 0), 0u);
  // Run as printed (the binary for "kforge"): it finishes the campaign.
  const std::string cmd = "cd " + sh_word(dir.string()) + " && " + worker + " " + sh_word(kforge_binary()) + " -q" +
                          hint.substr(6) + " > resumed.out 2>&1";
  EXPECT_EQ(std::system(cmd.c_str()), 0);
  std::ifstream in(dir / "resumed.out");
  const std::string resumed((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // It continues campaign 1: done, or stopped again by the rest of its 1 s on a loaded machine.
  const bool continued = resumed.find("campaign 1 done") != std::string::npos ||
                         resumed.find("campaign 1 stopped") != std::string::npos;
  EXPECT_TRUE(continued) << resumed;
}

// A newline in --define split the error line (only "define 'A': value '1" was printed).
TEST(CliDefects, ControlCharactersInDefinesAreOneLineUsageErrors) {
  const fs::path dir = fresh_test_dir("kforge_cli_define_newline");
  const std::vector<std::vector<std::string>> commands = {
      {"bench", "--family", "vecadd", "--shape", "N=4096,dtype=f16", "--config", "BLOCK=64", "--define", "A=1\nB=2"},
      {"bench", "--family", "vecadd", "--shape", "N=4096,dtype=f16", "--config", "BLOCK=64;A=1\nB=2"},
      {"bench", "--family", "vecadd", "--shape", "N=4096,dtype=f16", "--config", "BLOCK=64", "--define", "A=1\tB"},
      {"export", "--family", "vecadd", "--shape", "N=4096,dtype=f16", "--config", "BLOCK=64", "--ungated", "--define",
       "A=1\nB=2"},
      {"search", "--family", "vecadd", "--fix", "BLOCK=64\nB"}};
  for (const auto& cmd : commands)
    expect_one_line_error(kforge_in(dir, dir / "never.db", kFamilies / "vecadd", cmd), 2, {"control character"},
                          describe(cmd));
  const CliResult r = kforge_in(dir, dir / "never.db", kFamilies / "vecadd", commands[0]);
  EXPECT_NE(r.err.find("--define"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("A=1\\nB=2"), std::string::npos) << "the value, escaped: " << r.err;
}

// check counted the reference kernel as a compiled config: "ok 3" of "checked 2".
TEST(CliDefects, CheckCountsTheReferenceApart) {
  const fs::path dir = fresh_test_dir("kforge_cli_check_reference");
  const CliResult r = run_kforge({"-q", "--spec-dir", (kFamilies / "vecadd").string(), "check", "--family", "vecadd",
                                  "--sample", "2", "--no-cache", "-j", "2", "--json"},
                                 dir, "TMPDIR=" + sh_word(dir.string()));
  ASSERT_EQ(r.rc, 0) << r.err;
  const auto rows = nlohmann::json::parse(r.out);
  ASSERT_EQ(rows.size(), 1u) << r.out;
  EXPECT_EQ(rows[0]["checked"], 2);
  EXPECT_EQ(rows[0]["compiled_ok"].get<int>() + rows[0]["failed"].get<int>(), 2) << r.out;
  EXPECT_EQ(rows[0]["reference_ok"], true) << r.out;
  // The table has the reference in a column of its own.
  const CliResult text = run_kforge({"-q", "--spec-dir", (kFamilies / "vecadd").string(), "check", "--family",
                                     "vecadd", "--sample", "2", "--no-cache", "-j", "2"},
                                    dir, "TMPDIR=" + sh_word(dir.string()));
  ASSERT_EQ(text.rc, 0) << text.err;
  EXPECT_NE(text.out.find("reference"), std::string::npos) << text.out;
}

// One malformed spec made `list` fail whole: the good families went unlisted.
TEST(CliDefects, ListShowsTheGoodFamiliesAndOneLinePerBadSpec) {
  const fs::path dir = fresh_test_dir("kforge_cli_list_bad");
  fs::copy(kFamilies / "vecadd", dir / "specs");
  std::ofstream(dir / "specs" / "broken.json") << "{\"name\": \"broken\", ";
  std::ofstream(dir / "specs" / "empty.json") << "{}";
  const CliResult r = run_kforge({"--spec-dir", (dir / "specs").string(), "list"}, dir);
  EXPECT_EQ(r.rc, 1) << r.err;
  EXPECT_NE(r.out.find("vecadd"), std::string::npos) << r.out;
  const auto lines = r.err_lines();
  ASSERT_EQ(lines.size(), 2u) << r.err;
  EXPECT_EQ(lines[0].rfind("kforge: ", 0), 0u) << lines[0];
  EXPECT_NE(lines[0].find("broken.json"), std::string::npos) << lines[0];
  EXPECT_NE(lines[1].find("empty.json"), std::string::npos) << lines[1];
  // --json: the good families as before, on stdout.
  const CliResult j = run_kforge({"--spec-dir", (dir / "specs").string(), "list", "--json"}, dir);
  const auto rows = nlohmann::json::parse(j.out);
  ASSERT_EQ(rows.size(), 1u) << j.out;
  EXPECT_EQ(rows[0]["name"], "vecadd");
}

// "kforge serach" said only "A subcommand is required".
TEST(CliDefects, AMistypedCommandIsNamed) {
  const fs::path dir = fresh_test_dir("kforge_cli_mistyped");
  expect_one_line_error(run_kforge({"serach", "--family", "vecadd"}, dir), 2,
                        {"unknown command 'serach'", "did you mean 'search'"}, "serach");
  expect_one_line_error(run_kforge({"--db", "x.db", "-q", "bets"}, dir), 2, {"'bets'", "'best'"}, "bets");
  expect_one_line_error(run_kforge({"frobnicate"}, dir), 2, {"unknown command 'frobnicate'"}, "frobnicate");
  EXPECT_EQ(run_kforge({"frobnicate"}, dir).err.find("did you mean"), std::string::npos);
  EXPECT_EQ(kf::cli::edit_distance("serach", "search"), 1u);
  EXPECT_EQ(kf::cli::edit_distance("", "list"), 4u);
  EXPECT_FALSE(fs::exists(dir / "x.db"));
}

// Unknown --format, --strategy, --arch values were failed commands (exit 1), not usage errors.
TEST(CliDefects, UnknownOptionValuesAreUsageErrorsNamingTheAccepted) {
  const fs::path dir = fresh_test_dir("kforge_cli_option_values");
  struct Case {
    std::vector<std::string> args;
    std::vector<std::string> needles;
  };
  const std::vector<Case> cases = {
      {{"results", "--format", "xml", "--family", "vecadd", "--shape", "N=4096,dtype=f16", "--out", "o.json"},
       {"--format", "xml", "kernel-tuner-cache", "t4"}},
      {{"search", "--family", "vecadd", "--strategy", "genetic"}, {"--strategy", "genetic", "evo", "exhaustive"}},
      {{"check", "--family", "vecadd", "--arch", "sm_1"}, {"--arch", "sm_1", "sm_90"}},
      {{"export", "--family", "vecadd", "--shape", "N=4096,dtype=f16", "--config", "BLOCK=64", "--ungated", "--arch",
        "sm_1"},
       {"--arch", "sm_1", "sm_90"}},
      {{"search", "--family", "vecadd", "--schedule", "parallel"}, {"--schedule", "parallel", "interleave"}},
      {{"search", "--family", "vecadd", "--seeding", "db"}, {"--seeding", "db", "store"}},
      {{"replay", "--family", "vecadd", "--shape", "N=4096,dtype=f16", "--strategies", "evo,genetic"},
       {"--strategies", "genetic", "anneal"}},
      {{"results", "--format", "t4", "--family", "vecadd", "--shape", "N=4096,dtype=f16", "--out", "o.json",
        "--campaign", "-2"},
       {"--campaign"}}};
  for (const auto& c : cases)
    expect_one_line_error(kforge_in(dir, dir / "never.db", kFamilies / "vecadd", c.args), 2, c.needles,
                          describe(c.args));
  EXPECT_FALSE(fs::exists(dir / "never.db"));
}
