#include <charconv>
#include <cstdlib>
#include <csignal>
#include <sstream>
#include <unistd.h>

#include "core/objective.hpp"
#include "cli/campaign_report.hpp"
#include "cli/common.hpp"
#include "distributed/coordinator.hpp"
#include "store/sql.hpp"
#include "strategy/strategy.hpp"

namespace kf::cli {

namespace {

extern "C" void on_sigint(int) {
  // First Ctrl-C: finish the evaluation in flight and stop cleanly. Second: leave now; the
  // attempt in flight becomes "interrupted" on resume.
  if (g_stop_requested.exchange(true)) _exit(130);
  const char msg[] = "\nstopping after the evaluations in flight (Ctrl-C again to abort)\n";
  (void)!write(STDERR_FILENO, msg, sizeof msg - 1);
}

}  // namespace

// "0,1" -> {0, 1}; throws UsageError naming the bad item.
std::vector<int> parse_gpu_list(const std::string& text) {
  std::vector<int> out;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');) {
    int v = -1;
    const char* end = item.data() + item.size();
    auto [ptr, ec] = std::from_chars(item.data(), end, v);
    if (item.empty() || ec != std::errc() || ptr != end || v < 0 || v > 1023)
      throw UsageError("--gpus: expected all or device numbers like 0,1, got '" + text + "'");
    out.push_back(v);
  }
  if (out.empty()) throw UsageError("--gpus: expected all or device numbers like 0,1, got '" + text + "'");
  return out;
}

void install_stop_handler() {
  struct sigaction sa {};
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

CampaignOptions base_campaign_options(const Globals& g) {
  CampaignOptions o;
  o.cache_dir = cache_dir(g);
  o.worker_argv = {self_exe(), "worker"};
  // KFORGE_WORKER: another worker command, split on spaces (a wrapper; the tests' stand-in).
  if (const char* w = std::getenv("KFORGE_WORKER"); w && *w) {
    std::stringstream words(w);
    o.worker_argv.clear();
    for (std::string word; words >> word;) o.worker_argv.push_back(word);
  }
  o.quiet = g.quiet;
  return o;
}

void add_search(CLI::App& app, Globals& g) {
  auto* cmd = app.add_subcommand("search", "Search a family's space on the local GPU(s)");
  static std::string family, suite, time_budget, gpus = "all";
  static std::vector<std::string> shapes;
  static CampaignOptions o;
  static bool json = false, cold_l2 = false, distributed = false;
  static size_t min_agents = 1;
  cmd->add_option("--family", family, "Family name (see `kforge list`)")->required();
  add_shape_options(cmd, shapes, suite);
  cmd->add_option("--strategy", o.strategy, "exhaustive | random | evo | anneal")
      ->check(one_of(strategy_names()))
      ->capture_default_str();
  cmd->add_option("--seed", o.seed, "Seed of the strategy and the inputs")
      ->check(whole_number(0))
      ->capture_default_str();
  cmd->add_option("--evals", o.budget.evals_per_shape, "Evaluations per shape (0: no limit)")
      ->check(whole_number(0));
  cmd->add_option("--time", time_budget,
                  "Wall-time budget for the campaign, the finalists' re-measure included, e.g. 8h, 30m")
      ->check(duration());
  cmd->add_option("--plateau", o.budget.plateau,
                  "Stop a shape after N evaluations without a new best (0: off)")
      ->check(whole_number(0));
  cmd->add_option("--gpus", gpus, "GPUs to use: all, or a list like 0,1")->capture_default_str();
  cmd->add_option("--timeout", o.eval_timeout_s, "Seconds before a hung evaluation is killed")
      ->check(positive_seconds())
      ->capture_default_str();
  cmd->add_option("--compile-jobs", o.compile_threads, "NVRTC threads (default: all cores)")
      ->check(whole_number(1, kMaxThreads));
  cmd->add_option("--top-k", o.remeasure_top_k, "Re-measure the top K interleaved at the end")
      ->check(whole_number(0, 1000))
      ->capture_default_str();
  static std::string objective = "time";
  cmd->add_option("--objective", objective,
                  "What to minimise: time, or a launch's energy (energy) or energy x time (edp), which the worker "
                  "measures through NVML (a machine without it measures none: every config then counts as failed); "
                  "with energy or edp the finalists' re-measure, a ranking by time, is skipped")
      ->check(CLI::IsMember({"time", "energy", "edp"}))
      ->capture_default_str();
  static bool energy = false;
  cmd->add_flag("--energy", energy,
                "Also measure each timed config's power and energy (NVML, about 0.15 s more an evaluation on an H200; on with "
                "--objective energy or edp)");
  static std::string finalist_rounds = "auto";
  cmd->add_option("--finalist-rounds", finalist_rounds,
                  "Rounds of the top-K re-measure: auto (until the fastest's interval separates from the rest or a "
                  "tie is established, at most 21 and the time cap) or a fixed N")
      ->check(rounds_or_auto())
      ->capture_default_str();
  cmd->add_option("--finalist-share", o.finalist_share,
                  "With auto: the re-measure's time cap as a share of the shape's search (worker seconds)")
      ->check(number_in(0, 100))
      ->capture_default_str();
  cmd->add_option("--finalist-min-s", o.finalist_min_s, "With auto: the time cap's floor in seconds")
      ->check(number_in(0, 86400))
      ->capture_default_str();
  cmd->add_option("--schedule", o.schedule,
                  "Several shapes: interleave (searched at once, the GPU shared by expected gain) | sequential")
      ->check(one_of({"interleave", "sequential"}))
      ->capture_default_str();
  static std::string fixed;
  cmd->add_option("--fix", fixed, "Pin parameters, e.g. KV_SPLITS=1,PIPE_QK=0 (search the rest)")
      ->check(printable_text());
  cmd->add_option("--seeding", o.seeding,
                  "First configs from: store (stored results, then defaults) | defaults | none")
      ->check(one_of({"store", "defaults", "none"}))
      ->capture_default_str();
  cmd->add_flag("--cold-l2", cold_l2, "Also time plain launches with L2 flushed before each");
  cmd->add_flag("--sanitize", o.sanitize,
                "Run each shape's top-K finalists once under compute-sanitizer memcheck and racecheck; "
                "best/export skip a kernel that fails (default: the spec's \"sanitize\")");
  cmd->add_flag("--json", json, "Print the outcome as JSON");
  cmd->add_flag("--distributed", distributed,
                "Publish the evaluations as work items that `kforge agent` processes serve (needs --db postgresql://...)");
  cmd->add_option("--agents", min_agents, "With --distributed: start once this many agents are alive")
      ->check(whole_number(1, 100000))
      ->capture_default_str();
  set_action(cmd, [&g] {
    if (distributed && !sql::is_postgres_url(g.db))
      throw UsageError("--distributed needs a shared PostgreSQL database (--db postgresql://...), not " + g.db);
    const Family f = load_family(g, family);
    const auto selected = select_shapes(f, shapes, suite);
    CampaignOptions opts = o;
    const CampaignOptions base = base_campaign_options(g);
    opts.cache_dir = base.cache_dir;
    opts.worker_argv = base.worker_argv;
    opts.quiet = g.quiet;
    opts.timing.cold_l2 = cold_l2;
    opts.finalist_rounds = parse_rounds(finalist_rounds);
    opts.objective = parse_objective(objective);
    if (energy || opts.objective != Objective::Time) opts.timing.energy_ms = kEnergyWindowMs;
    if (!time_budget.empty()) opts.budget.time_s = parse_duration(time_budget);
    if (!fixed.empty()) opts.fixed = parse_assignment(fixed);
    if (gpus != "all") opts.gpus = parse_gpu_list(gpus);
    Store store(g.db);
    install_stop_handler();
    if (distributed) {
      opts.remote = make_work_queue_evaluations(store, min_agents);
      opts.quiet = true;  // shapes search side by side: one progress line each would interleave
    }
    const auto outcome = run_campaign(store, f, selected, opts);
    report_outcome(outcome, json, g);
  });
}

void add_resume(CLI::App& app, Globals& g) {
  auto* cmd = app.add_subcommand("resume", "Continue a stopped or killed campaign");
  static int64_t id = 0;
  static bool json = false;
  static std::string time_budget;
  cmd->add_option("campaign", id, "Campaign id (see `kforge show`)")->required()->check(whole_number(1));
  cmd->add_option("--time", time_budget,
                  "Wall-time budget for this run (default: the campaign's own, counted afresh)")
      ->check(duration());
  cmd->add_flag("--json", json, "Print the outcome as JSON");
  set_action(cmd, [&g] {
    Store store(g.db, Store::Access::ReadWriteExisting);  // a mistyped --db holds no campaign to resume
    const auto rec = store.campaign(id);
    if (!rec) throw std::runtime_error("no campaign " + std::to_string(id) + " in " + g.db);
    const Family f = load_family(g, rec->family);
    install_stop_handler();
    CampaignOptions overrides = base_campaign_options(g);
    if (!time_budget.empty()) overrides.budget.time_s = parse_duration(time_budget);
    const auto outcome = resume_campaign(store, f, id, overrides);
    report_outcome(outcome, json, g);
  });
}

}  // namespace kf::cli
