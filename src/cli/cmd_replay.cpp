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

}  // namespace

void add_replay(CLI::App& app, Globals& g) {
  auto* cmd = app.add_subcommand("replay", "Benchmark strategies offline on a recorded space");
  static std::string family, shape, device, import_file, strategies = "evo,anneal,random", csv, seed_from, options;
  static ReplayOptions o;
  static bool json = false;
  cmd->add_option("--family", family, "Family whose stored evaluations form the space");
  cmd->add_option("--shape", shape, "Shape of the stored (exhaustive) campaign");
  cmd->add_option("--device", device, "Device name (default: the one with most evaluations)");
  cmd->add_option("--import", import_file, "A Kernel Tuner cache or T4 file instead of the store");
  cmd->add_option("--strategies", strategies, "Comma-separated strategies")->capture_default_str();
  cmd->add_option("--seeds", o.seeds, "Runs per strategy")
      ->check(whole_number(1, 100000))
      ->capture_default_str();
  cmd->add_option("--budget", o.budget, "Evaluations per run (default: the whole space)")
      ->check(whole_number(1));
  cmd->add_option("--csv", csv, "Write the best-so-far curves as CSV (tools/plot_replay.py)");
  cmd->add_option("--seed-from", seed_from,
                  "Also replay each strategy seeded with the 8 best stored configs of this other shape "
                  "(as a campaign on a new shape is), reported as <strategy>+seeded");
  cmd->add_option("--depth", o.depth,
                  "Configs in flight, as in a campaign's pipeline (default: a campaign's on one GPU)");
  cmd->add_option("--plateau", o.plateau, "Stop a run after this many evaluations without a new best (0: off)");
  cmd->add_option("--options", options,
                  "Strategy options as JSON, by strategy: '{\"evo\": {\"screen\": 1}}' (docs: src/strategy/*.cpp)");
  cmd->add_flag("--json", json, "Machine-readable output");
  o.depth = campaign_depth(1, 0);
  set_action(cmd, [&g] {
    if (o.depth == 0) throw std::runtime_error("--depth must be at least 1");
    if (import_file.empty() == family.empty())
      throw std::runtime_error("give either --family and --shape, or --import FILE");
    if (!seed_from.empty() && family.empty()) throw std::runtime_error("--seed-from needs --family");
    std::optional<DeviceKey> stored_device;
    const RecordedSpace space = [&] {
      if (!import_file.empty()) return import_recorded(import_file);
      const Family f = load_family(g, family);
      Store store(g.db, Store::Access::ReadOnly);
      StoredSpace s = stored_space(store, f, parse_shape(f, shape), device);
      stored_device = s.device;
      return std::move(s.space);
    }();
    ReplayOptions opts = o;
    if (!options.empty()) {
      try {
        opts.strategy_options = nlohmann::json::parse(options);
      } catch (const nlohmann::json::exception&) {
        throw std::runtime_error("--options is not JSON: " + options);
      }
      if (!opts.strategy_options.is_object()) throw std::runtime_error("--options must be a JSON object by strategy name");
    }
    opts.threads = std::max(1u, std::thread::hardware_concurrency());
    const auto names = split_list(strategies);
    const size_t runs = names.size() * static_cast<size_t>(std::max(0, opts.seeds)) * (seed_from.empty() ? 1 : 2);
    ProgressLine progress("replay " + space.name(), "runs", runs, false, g.quiet);
    size_t runs_before = 0;  // of earlier replay() calls
    opts.on_run = [&](size_t done, size_t) { progress.update(runs_before + done); };
    if (!g.quiet)
      std::fprintf(stderr, "replay: %zu recorded configs, %d seed(s) x %zu strateg%s, %zu config(s) in flight\n",
                   space.size(), opts.seeds, names.size(), names.size() == 1 ? "y" : "ies", opts.depth);
    ReplayReport report = replay(space, names, opts);
    if (!seed_from.empty()) {
      const Family f = load_family(g, family);
      Store store(g.db, Store::Access::ReadOnly);
      opts.seed_configs = neighbour_seeds(store, f, parse_shape(f, seed_from), *stored_device);
      size_t held = 0;
      for (const auto& c : opts.seed_configs) held += space.find(c) ? 1 : 0;
      std::fprintf(stderr, "seeded from %s: %zu of its %zu best configs are in the recorded space\n",
                   seed_from.c_str(), held, opts.seed_configs.size());
      runs_before = report.strategies.size() * static_cast<size_t>(opts.seeds);
      for (auto& s : replay(space, names, opts).strategies) {
        s.strategy += "+seeded";
        report.strategies.push_back(std::move(s));
      }
    }
    progress.finish(runs);
    if (!csv.empty()) {
      std::ofstream out(csv);
      if (!out) throw std::runtime_error("cannot write " + csv);
      out << curves_csv(report);
    }
    if (json)
      print_json(kf::to_json(report));
    else
      std::fputs(format_table(report).c_str(), stdout);
  });
}

}  // namespace kf::cli
