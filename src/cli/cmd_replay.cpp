// kforge replay: benchmark strategies offline against a recorded space (a stored exhaustive
// campaign, or an imported Kernel Tuner / T4 file). No GPU needed.
#include <cstdio>
#include <algorithm>
#include <fstream>
#include <optional>
#include <thread>

#include "cli/common.hpp"
#include "importers/import.hpp"
#include "replay/replay.hpp"
#include "replay/report.hpp"

namespace kf::cli {

namespace {

struct StoredSpace {
  RecordedSpace space;
  DeviceKey device;  // the device whose evaluations it holds
};

// Every stored evaluation of (family, shape) on one device becomes a recorded point; the
// device with the most evaluations is used unless one is named.
StoredSpace space_from_store(const Globals& g, const std::string& family_name,
                               const std::string& shape_text, const std::string& device_name) {
  const Family f = load_family(g, family_name);
  const Shape shape = parse_shape(f, shape_text);
  Store store(g.db);
  std::map<std::string, std::vector<EvaluationRecord>> by_device;
  for (auto& e : store.evaluations(f.name, shape))
    if (e.status != Status::Interrupted) by_device[e.device.name].push_back(std::move(e));
  if (by_device.empty())
    throw std::runtime_error("no stored evaluations of " + f.name + " at " + to_string(shape));
  std::string chosen = device_name;
  if (chosen.empty())
    for (const auto& [name, evals] : by_device)
      if (chosen.empty() || evals.size() > by_device[chosen].size()) chosen = name;
  if (!by_device.count(chosen)) throw std::runtime_error("no evaluations on device " + chosen);
  std::vector<RecordedPoint> points;
  size_t dropped = 0;
  for (const auto& e : by_device[chosen]) {
    const Config config = complete_stored_config(f, e.config);
    try {
      validate_config(f, config);
    } catch (const SpecError&) {
      ++dropped;  // a value the family no longer has (sdpa_fwd's MMA=simt / wmma moved to sdpa_basic)
      continue;
    }
    points.push_back({config, e.status == Status::Ok && e.timing ? std::optional<double>(e.timing->median_us)
                                                                 : std::nullopt});
  }
  if (dropped)
    std::fprintf(stderr, "replay: %zu recorded config(s) with values outside %s's current domains left out\n",
                 dropped, f.name.c_str());
  if (points.empty()) throw std::runtime_error("no recorded config of " + f.name + " is in its current space");
  // Each domain narrowed to the values that were recorded (in spec order): a parameter the
  // campaigns pinned is pinned in the replay too, so no strategy spends moves on it.
  std::vector<ParamSpec> params;
  for (const auto& p : f.params) {
    ParamSpec narrowed{p.name, {}};
    for (const auto& v : p.values)
      for (const auto& pt : points)
        if (pt.config.at(p.name) == v) {
          narrowed.values.push_back(v);
          break;
        }
    params.push_back(std::move(narrowed));
  }
  return {RecordedSpace(params, points, f.name + " " + to_string(shape) + " on " + chosen,
                        {{"family", f.name}, {"shape", to_json(shape)}, {"device", chosen}}),
          by_device[chosen].front().device};
}

// The fastest successful configs of another stored shape on the space's device: what a
// campaign on a new shape is seeded with when that shape is its nearest stored neighbour.
std::vector<Config> neighbour_seeds(const Globals& g, const std::string& family_name,
                                    const std::string& shape_text, const DeviceKey& device,
                                    size_t count = 8) {
  const Family f = load_family(g, family_name);
  const Shape shape = parse_shape(f, shape_text);
  std::vector<Config> out;
  for (const auto& e : Store(g.db).top(f.name, shape, device, count))
    out.push_back(complete_stored_config(f, e.config));
  if (out.empty())
    throw std::runtime_error("--seed-from: no successful evaluation of " + to_string(shape) + " on " + device.name);
  return out;
}

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
  static std::string family, shape, device, import_file, strategies = "evo,anneal,random", csv, seed_from;
  static ReplayOptions o;
  static bool json = false;
  cmd->add_option("--family", family, "Family whose stored evaluations form the space");
  cmd->add_option("--shape", shape, "Shape of the stored (exhaustive) campaign");
  cmd->add_option("--device", device, "Device name (default: the one with most evaluations)");
  cmd->add_option("--import", import_file, "A Kernel Tuner cache or T4 file instead of the store");
  cmd->add_option("--strategies", strategies, "Comma-separated strategies")->capture_default_str();
  cmd->add_option("--seeds", o.seeds, "Runs per strategy")->capture_default_str();
  cmd->add_option("--budget", o.budget, "Evaluations per run (default: the whole space)");
  cmd->add_option("--csv", csv, "Write the best-so-far curves as CSV (tools/plot_replay.py)");
  cmd->add_option("--seed-from", seed_from,
                  "Also replay each strategy seeded with the 8 best stored configs of this other shape "
                  "(as a campaign on a new shape is), reported as <strategy>+seeded");
  cmd->add_flag("--json", json, "Machine-readable output");
  set_action(cmd, [&g] {
    if (import_file.empty() == family.empty())
      throw std::runtime_error("give either --family and --shape, or --import FILE");
    if (!seed_from.empty() && family.empty()) throw std::runtime_error("--seed-from needs --family");
    std::optional<DeviceKey> stored_device;
    const RecordedSpace space = [&] {
      if (!import_file.empty()) return import_recorded(import_file);
      StoredSpace s = space_from_store(g, family, shape, device);
      stored_device = s.device;
      return std::move(s.space);
    }();
    ReplayOptions opts = o;
    opts.threads = std::max(1u, std::thread::hardware_concurrency());
    ReplayReport report = replay(space, split_list(strategies), opts);
    if (!seed_from.empty()) {
      opts.seed_configs = neighbour_seeds(g, family, seed_from, *stored_device);
      size_t held = 0;
      for (const auto& c : opts.seed_configs) held += space.find(c) ? 1 : 0;
      std::fprintf(stderr, "seeded from %s: %zu of its %zu best configs are in the recorded space\n",
                   seed_from.c_str(), held, opts.seed_configs.size());
      for (auto& s : replay(space, split_list(strategies), opts).strategies) {
        s.strategy += "+seeded";
        report.strategies.push_back(std::move(s));
      }
    }
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
