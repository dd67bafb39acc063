// kforge replay: benchmark strategies offline against a recorded space (a stored exhaustive
// campaign, or an imported Kernel Tuner / T4 file) through a campaign's search loop. No GPU needed.
#include <cstdio>
#include <algorithm>
#include <fstream>
#include <optional>
#include <thread>

#include "cli/common.hpp"
#include "importers/import.hpp"
#include "replay/replay.hpp"
#include "replay/report.hpp"
#include "replay/stored_space.hpp"
#include "campaign/campaign.hpp"
#include "strategy/strategy.hpp"
#include "util/progress_line.hpp"

namespace kf::cli {

namespace {

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

// The command line of `kforge replay`.
struct ReplayArgs {
  std::string family, shape, device, import_file, strategies = "evo,anneal,random", csv, seed_from, options;
  ReplayOptions o;
  bool json = false;
};

// --options: a JSON object of strategy options by strategy name.
nlohmann::json strategy_options(const std::string& text) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception&) {
    throw std::runtime_error("--options is not JSON: " + text);
  }
  if (!j.is_object()) throw std::runtime_error("--options must be a JSON object by strategy name");
  return j;
}

// The space to replay: an imported file, or the stored evaluations of one shape (then also the
// device they were measured on, for --seed-from).
RecordedSpace recorded_space(const Globals& g, const ReplayArgs& a, std::optional<DeviceKey>& stored_device) {
  if (!a.import_file.empty()) return import_recorded(a.import_file);
  const Family f = load_family(g, a.family);
  Store store(g.db, Store::Access::ReadOnly);
  StoredSpace s = stored_space(store, f, parse_shape(f, a.shape), a.device);
  stored_device = s.device;
  return std::move(s.space);
}

void run_replay(const Globals& g, const ReplayArgs& a) {
  if (a.import_file.empty() == a.family.empty())
    throw std::runtime_error("give either --family and --shape, or --import FILE");
  if (!a.seed_from.empty() && a.family.empty()) throw std::runtime_error("--seed-from needs --family");
  std::optional<DeviceKey> stored_device;
  const RecordedSpace space = recorded_space(g, a, stored_device);
  ReplayOptions opts = a.o;
  if (!a.options.empty()) opts.strategy_options = strategy_options(a.options);
  opts.threads = std::max(1u, std::thread::hardware_concurrency());
  const auto names = split_list(a.strategies);
  const size_t runs = names.size() * static_cast<size_t>(std::max(0, opts.seeds)) * (a.seed_from.empty() ? 1 : 2);
  ProgressLine progress("replay " + space.name(), "runs", runs, false, g.quiet);
  size_t runs_before = 0;  // of earlier replay() calls
  opts.on_run = [&](size_t done, size_t) { progress.update(runs_before + done); };
  if (!g.quiet)
    std::fprintf(stderr, "replay: %zu recorded configs, %d seed(s) x %zu strateg%s, %zu config(s) in flight\n",
                 space.size(), opts.seeds, names.size(), names.size() == 1 ? "y" : "ies", opts.depth);
  ReplayReport report = replay(space, names, opts);
  if (!a.seed_from.empty()) {
    const Family f = load_family(g, a.family);
    Store store(g.db, Store::Access::ReadOnly);
    opts.seed_configs = neighbour_seeds(store, f, parse_shape(f, a.seed_from), *stored_device);
    size_t held = 0;
    for (const auto& c : opts.seed_configs) held += space.find(c) ? 1 : 0;
    std::fprintf(stderr, "seeded from %s: %zu of its %zu best configs are in the recorded space\n",
                 a.seed_from.c_str(), held, opts.seed_configs.size());
    runs_before = report.strategies.size() * static_cast<size_t>(opts.seeds);
    for (auto& s : replay(space, names, opts).strategies) {
      s.strategy += "+seeded";
      report.strategies.push_back(std::move(s));
    }
  }
  progress.finish(runs);
  if (!a.csv.empty()) {
    std::ofstream out(a.csv);
    if (!out) throw std::runtime_error("cannot write " + a.csv);
    out << curves_csv(report);
  }
  if (a.json)
    print_json(kf::to_json(report));
  else
    std::fputs(format_table(report).c_str(), stdout);
}

}  // namespace

void add_replay(CLI::App& app, Globals& g) {
  auto* cmd = app.add_subcommand("replay", "Benchmark strategies offline on a recorded space");
  static ReplayArgs a;
  cmd->add_option("--family", a.family, "Family whose stored evaluations form the space");
  cmd->add_option("--shape", a.shape, "Shape of the stored (exhaustive) campaign");
  cmd->add_option("--device", a.device, "Device name (default: the one with most evaluations)");
  cmd->add_option("--import", a.import_file, "A Kernel Tuner cache or T4 file instead of the store");
  cmd->add_option("--strategies", a.strategies, "Comma-separated strategies")
      ->check(list_of(strategy_names()))
      ->capture_default_str();
  cmd->add_option("--seeds", a.o.seeds, "Runs per strategy")
      ->check(whole_number(1, 100000))
      ->capture_default_str();
  cmd->add_option("--budget", a.o.budget, "Evaluations per run (default: the whole space)")
      ->check(whole_number(1));
  cmd->add_option("--csv", a.csv, "Write the best-so-far curves as CSV (tools/plot_replay.py)");
  cmd->add_option("--seed-from", a.seed_from,
                  "Also replay each strategy seeded with the 8 best stored configs of this other shape "
                  "(as a campaign on a new shape is), reported as <strategy>+seeded");
  // Checked on the text: size_t options would take "-1" as 2^64-1.
  cmd->add_option("--depth", a.o.depth,
                  "Configs in flight, as in a campaign's pipeline (default: a campaign's on one GPU)")
      ->check(whole_number(1, 100000));
  cmd->add_option("--plateau", a.o.plateau, "Stop a run after this many evaluations without a new best (0: off)")
      ->check(whole_number(0));
  cmd->add_option("--options", a.options,
                  "Strategy options as JSON, by strategy: '{\"evo\": {\"screen\": 1}}' (docs: src/strategy/*.cpp)");
  cmd->add_flag("--json", a.json, "Machine-readable output");
  a.o.depth = campaign_depth(1, 0);
  set_action(cmd, [&g] { run_replay(g, a); });
}

}  // namespace kf::cli
