// What every subcommand shares: global options, locating specs and the database, shapes.
#pragma once
#include <CLI/CLI.hpp>

#include <filesystem>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "family/family.hpp"
#include "store/store.hpp"

namespace kf::cli {

struct Globals {
  std::string db = "results.db";
  std::string spec_dir;   // default: ./search_spaces, else the one beside the binary (data_dir)
  std::string cache_dir;  // default: .kforge-cache next to the database file (in the current folder for PostgreSQL)
  bool verbose = false;
  bool quiet = false;
};

// A subcommand's action; exceptions become "kforge: <message>" and exit code 1.
using Action = std::function<void()>;
void set_action(CLI::App* cmd, Action action);
// Runs the action chosen on the command line; returns the process exit code.
int run_selected(CLI::App& app);
// A bad value found after parsing (a duration, a --gpus list): reported like a parse error.
struct UsageError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};
// Exit codes: 0 done, 1 the command failed, 2 the command line is wrong (unknown option, bad
// value); every error is one line "kforge: <message>" on stderr.
constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;
// Prints "kforge: <message>" (its first line) on stderr; returns kExitUsage.
int usage_error(const std::string& message);
// Thrown by an action that has already printed its errors (one line each): exit code 1, and
// nothing more is printed.
struct ReportedFailure : std::runtime_error {
  ReportedFailure() : std::runtime_error("failure already reported") {}
};

// "kforge --db <db> [--spec-dir <dir>]", each word shell-quoted (a PostgreSQL password masked):
// the start of every command kforge prints as a hint, so the hint reaches the same database and
// specs when pasted into a shell.
std::string kforge_command(const Globals& g);

// The folder holding search_spaces/ and kernel_templates/ found from the binary's own place
// (installed: ../share/kforge; build tree: the file kforge-data-dir.txt beside it); empty if none.
std::filesystem::path data_dir();
// --spec-dir, else ./search_spaces, else data_dir()/search_spaces.
std::filesystem::path spec_dir(const Globals& g);
std::filesystem::path cache_dir(const Globals& g);
Family load_family(const Globals& g, const std::string& name);
// Shapes from --shape (repeatable) or --suite (default suite "default" when neither is given).
std::vector<Shape> select_shapes(const Family& f, const std::vector<std::string>& shape_args,
                                 const std::string& suite);
// The executable itself, to start workers with.
std::string self_exe();
// "8h", "30m", "90s", "1.5h", "120" (seconds) -> seconds; throws UsageError for
// anything else, and for a duration that is not finite and positive (-5h, nan, inf, 0) or
// longer than a year.
double parse_duration(const std::string& text);

// Option validators, checked on the text before CLI11 converts it (an unsigned option would
// otherwise take "-5" as 2^64-5). Their messages become "kforge: --opt: <problem>".
// A whole number in [min, max], written in decimal.
CLI::Validator whole_number(int64_t min, int64_t max = int64_t{1} << 40);
// "auto" (the rounds stop when the answer is known: eval/round_rule) or a whole number from 1 to 1000.
CLI::Validator rounds_or_auto();
// Its value: 0 for "auto".
int parse_rounds(const std::string& text);
// A number of seconds, finite, > 0 and at most a year.
CLI::Validator positive_seconds();
// A finite number in [min, max] (CLI::Range lets NaN through).
CLI::Validator number_in(double min, double max);
// A duration parse_duration accepts.
CLI::Validator duration();
// Text without control characters (a newline in --define would split the error line).
CLI::Validator printable_text();
// One of the given words: "expected one of a, b; got 'x'".
CLI::Validator one_of(std::vector<std::string> words);
// A comma-separated list of such words (replay --strategies).
CLI::Validator list_of(std::vector<std::string> words);
// A target architecture DeviceLimits::for_arch knows (sm_90, sm_90a, ...).
CLI::Validator known_arch();
// Upper bound of thread-count options (--compile-jobs, -j).
constexpr int64_t kMaxThreads = 1024;
void print_json(const nlohmann::json& j);
std::string fmt_us(double us);

// Adds a --shape/--suite pair to a subcommand.
void add_shape_options(CLI::App* cmd, std::vector<std::string>& shapes, std::string& suite);

// Subcommands, one file each.
void add_list(CLI::App& app, Globals& g);
void add_check(CLI::App& app, Globals& g);
void add_search(CLI::App& app, Globals& g);
void add_resume(CLI::App& app, Globals& g);
void add_best(CLI::App& app, Globals& g);
void add_show(CLI::App& app, Globals& g);
void add_export(CLI::App& app, Globals& g);
void add_ablate(CLI::App& app, Globals& g);
void add_bench(CLI::App& app, Globals& g);
void add_replay(CLI::App& app, Globals& g);
void add_import(CLI::App& app, Globals& g);
void add_results(CLI::App& app, Globals& g);
void add_baseline(CLI::App& app, Globals& g);
void add_worker(CLI::App& app, Globals& g);
void add_refresh(CLI::App& app, Globals& g);
void add_db(CLI::App& app, Globals& g);
void add_agent(CLI::App& app, Globals& g);

}  // namespace kf::cli

#include "campaign/campaign.hpp"
namespace kf::cli {
// SIGINT/SIGTERM: finish the evaluation in flight, then stop (a second signal exits at once).
void install_stop_handler();
// Cache folder, worker command and verbosity from the global options.
CampaignOptions base_campaign_options(const Globals& g);
}  // namespace kf::cli
