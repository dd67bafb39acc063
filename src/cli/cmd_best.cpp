#include <spdlog/spdlog.h>

#include <cstdio>
#include <set>

#include "cli/common.hpp"
#include "cli/device_choice.hpp"
#include "cli/table.hpp"
#include "export/commands.hpp"
#include "family/render.hpp"
#include "util/shell_quote.hpp"
#include "winner/baseline_ratio.hpp"
#include "winner/current_results.hpp"
#include "winner/refresh_command.hpp"

namespace kf::cli {

namespace {

double tflops_of(const EvaluationRecord& e) {
  return e.timing && e.timing->median_us > 0 ? e.flops / (e.timing->median_us * 1e-6) / 1e12 : 0;
}

// The commands that profile the winner, building for its real target (sm_90a for a wgmma
// kernel: nvcc's plain -arch=sm_90 cannot assemble those instructions) with the same flags
// the export's manifest gives.
std::string ncu_commands(const Globals& g, const Family& f, const Shape& s, const EvaluationRecord& best) {
  const std::string name = "kf_" + f.name + "_best";
  const Variant v = render_variant(f, complete_stored_config(f, best.config), s);
  const std::string arch = "sm_" + std::to_string(best.device.cc > 0 ? best.device.cc : 90) + v.arch_suffix;
  return kforge_command(g) + " export --family " + f.name + " --shape " + to_string(s) +
         " --out ncu_" + f.name + " --name " + name + "\n" + "cd ncu_" + f.name + " && " +
         exporter::build_command(name, arch, exporter::nvcc_flags(v.options)) + "\n" + exporter::ncu_command(name);
}

// `best --pareto`: per shape, the records on the time/energy front, fastest first.
void print_pareto(const Store& store, const Family& f, const std::vector<Shape>& shapes, const DeviceChoice& here,
                  bool json) {
  Table table({{"shape", "shape", 44, true},
               {"median us", "median_us", 10},
               {"W", "power_w", 5, false, 0},
               {"uJ", "energy_uj", 8, false, 1},
               {"device", "device", 24, true},
               {"config", "config", 0, true}});
  size_t without = 0;
  for (const auto& s : shapes) {
    auto front = pareto_front(store, f, s, here.key);
    if (front.empty() && here.fallback) front = pareto_front(store, f, s, std::nullopt);
    if (front.empty()) ++without;
    for (const auto& e : front)
      table.add({{"shape", to_json(s)},
                 {"median_us", e.timing->median_us},
                 {"power_w", e.timing->power_w},
                 {"energy_uj", e.timing->energy_uj},
                 {"device", e.device.name},
                 {"config", to_json(e.config)}},
                {{"shape", to_string(s)}, {"median_us", fmt_us(e.timing->median_us)}, {"config", to_string(e.config)}});
  }
  print_table(table, json);
  if (without > 0)
    spdlog::warn("{} of {} shape(s) have no current record with energy measured (the worker measures it through NVML)",
                 without, shapes.size());
}

}  // namespace

void add_best(CLI::App& app, Globals& g) {
  auto* cmd = app.add_subcommand("best", "Show the best stored kernel per shape");
  static std::string family, suite, device = "local";
  static std::vector<std::string> shapes;
  static bool json = false, ncu = false, pareto = false;
  static std::string objective_text = "time";
  cmd->add_option("--family", family, "Family name")->required();
  add_shape_options(cmd, shapes, suite);
  cmd->add_option("--device", device,
                  "Whose results: local (this machine's GPU; a shape it has none for shows another device's, "
                  "said once), all, or a stored device's name or part of it (e.g. H100)")
      ->check(printable_text())
      ->capture_default_str();
  cmd->add_option("--objective", objective_text,
                  "What best means: time (a launch's), energy (a launch's, where the worker measured it through "
                  "NVML) or edp (energy x time)")
      ->check(CLI::IsMember({"time", "energy", "edp"}))
      ->capture_default_str();
  cmd->add_flag("--pareto", pareto,
                "List each shape's time/energy Pareto front (its current records no other is both faster and "
                "more frugal than) instead of one winner");
  cmd->add_flag("--json", json, "Machine-readable output");
  cmd->add_flag("--ncu", ncu, "Print the commands that profile the winner with Nsight Compute");
  set_action(cmd, [&g] {
    const Family f = load_family(g, family);
    std::vector<Shape> selected;
    if (shapes.empty() && suite.empty()) {
      Store probe(g.db, Store::Access::ReadOnly);
      selected = probe.shapes(f.name);  // everything stored
      if (selected.empty()) throw std::runtime_error("no results for " + f.name + " in " + g.db);
    } else {
      selected = select_shapes(f, shapes, suite);
    }
    Store store(g.db, Store::Access::ReadOnly);
    const DeviceChoice here = choose_device(store, device);
    const Objective objective = parse_objective(objective_text);
    if (pareto) return print_pareto(store, f, selected, here, json);
    Table table({{"shape", "shape", 44, true},
                 {"median us", "median_us", 10},
                 {"TFLOP/s", "tflops", 8, false, 1},
                 {"W", "power_w", 5, false, 0},
                 {"uJ", "energy_uj", 8, false, 1},
                 {"vs baselines", "ratios", 24, true},
                 {"device", "device", 24, true},
                 {"config", "config", 0, true}});
    std::string ncu_text;
    std::vector<Shape> elsewhere;  // shapes answered from another device's results than the local GPU's
    std::set<std::string> elsewhere_devices;
    size_t missing_energy = 0;  // shapes without a winner (by energy or edp: none measured energy)
    size_t unpaired = 0;        // ratios from stored times, not timed beside the winner
    for (const auto& s : selected) {
      auto found = best_current(store, f, s, here.key, objective);
      if (!found && here.fallback) {
        found = best_current(store, f, s, std::nullopt, objective);
        if (found) {
          elsewhere.push_back(s);
          elsewhere_devices.insert(found->record.device.name);
        }
      }
      const std::optional<EvaluationRecord> best = found ? std::optional(found->record) : std::nullopt;
      if (!best) ++missing_energy;
      nlohmann::json j = {{"shape", to_json(s)}};
      std::map<std::string, std::string> text{{"shape", to_string(s)}};
      // Other tools' records (`import --store`) never win: listed apart, so a shape with only those says why
      // it has no winner.
      const ImportedRecords imported = imported_records(store, f, s, std::nullopt);
      if (imported.fastest) {
        j["imported"] = {{"records", imported.timed},
                         {"fastest_us", imported.fastest->timing->median_us},
                         {"config", to_json(imported.fastest->config)},
                         {"device", imported.fastest->device.name}};
        if (!best)
          text["config"] = "- (only imported records: " + std::to_string(imported.timed) + ", fastest " +
                           fmt_us(imported.fastest->timing->median_us) + " us; kforge's gate never ran them)";
      }
      if (best && best->timing) {
        std::string ratios;
        j["config"] = to_json(best->config);
        j["median_us"] = best->timing->median_us;
        j["ci_us"] = {best->timing->ci_lo_us, best->timing->ci_hi_us};
        j["tflops"] = tflops_of(*best);
        if (best->timing->power_w > 0) {  // (not measured: absent, shown as "-")
          j["power_w"] = best->timing->power_w;
          j["energy_uj"] = best->timing->energy_uj;
        }
        j["device"] = best->device.name;
        j["stale"] = found->stale;  // timed with an older kernel source: no result of the current one yet
        nlohmann::json base = nlohmann::json::object();
        for (const BaselineRatio& b : baseline_ratios(store.baselines(f.name, s, best->device),
                                                             to_json(complete_stored_config(f, best->config)),
                                                             best->timing->median_us)) {
          base[b.backend] = {{"median_us", b.median_us}, {"speedup", b.speedup}, {"side_by_side", b.side_by_side}};
          char buf[96];
          std::snprintf(buf, sizeof buf, "%s%s %.2fx%s", ratios.empty() ? "" : " ",
                        b.backend.substr(b.backend.find('.') + 1).c_str(), b.speedup, b.side_by_side ? "" : "*");
          ratios += buf;
          if (!b.side_by_side) ++unpaired;
        }
        j["baselines"] = base;
        text["median_us"] = fmt_us(best->timing->median_us);
        text["device"] = best->device.name;
        text["ratios"] = ratios.empty() ? "-" : ratios;
        text["config"] = to_string(best->config) + (!found->stale          ? ""
                                                    : found->source_stale ? "  (stale: timed with an older kernel source)"
                                                                          : "  (stale: timed with an older timing method)");
        if (found->ranked_by) {  // a faster single record lost to this one side by side
          j["ranked_by_campaign"] = found->ranked_by;
          text["config"] += "  (first side by side: campaign " + std::to_string(found->ranked_by) + ")";
        }
        if (ncu) {
          j["ncu"] = ncu_commands(g, f, s, *best);
          ncu_text += "\n" + j["ncu"].get<std::string>() + "\n";
        }
      }
      table.add(j, text);
    }
    print_table(table, json);
    if (!json && ncu) std::printf("%s", ncu_text.c_str());
    if (!json && unpaired > 0)
      std::printf("* ratio of stored times from separate runs, not timed beside this winner (tools/compare_torch.py "
                  "--baselines-out records both)\n");
    if (objective != Objective::Time && missing_energy > 0)
      spdlog::warn("{} of {} shape(s) have no record with energy measured (the worker measures it through NVML); "
                   "no winner by {} for them", missing_energy, selected.size(), to_string(objective));
    if (!elsewhere.empty()) {
      std::string others;
      for (const auto& d : elsewhere_devices) others += (others.empty() ? "" : ", ") + d;
      spdlog::warn("{} of {} shape(s) have no result on this {}, only {}'s (shown); `{} --from-device {}` re-times "
                   "them here{}",
                   elsewhere.size(), selected.size(), here.local, others,
                   refresh_command(store, f, elsewhere.front()), shell_quote(*elsewhere_devices.begin()),
                   elsewhere.size() > 1 ? " (that shape; the others likewise)" : "");
    }
  });
}

}  // namespace kf::cli
