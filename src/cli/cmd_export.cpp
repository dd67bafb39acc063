// kforge export: stored winners, or any config (--config), as standalone source, C launcher and
// manifest.
#include <spdlog/spdlog.h>

#include <cstdio>

#include "campaign/refresh.hpp"
#include "cli/common.hpp"
#include "export/export.hpp"
#include "family/user_config.hpp"

namespace kf::cli {

namespace {

std::optional<DeviceKey> device_named(Store& store, const std::string& device) {
  if (device.empty()) return std::nullopt;
  for (const auto& d : store.devices())
    if (d.name == device) return d;
  throw std::runtime_error("no results for device " + device);
}

// The stored winner of each shape. With regate (exporting the winners themselves), a winner timed with an
// older kernel source is re-gated and re-timed on the local GPU first, or refused with the command that
// refreshes it: export never writes an ungated kernel. Without (--config best only takes its config), it is
// used as stored.
std::vector<EvaluationRecord> stored_winners(Store& store, const Family& f, const std::vector<Shape>& shapes,
                                             const std::optional<DeviceKey>& only, const std::string& db,
                                             const CampaignOptions* regate = nullptr) {
  std::vector<EvaluationRecord> out;
  for (const auto& s : shapes) {
    if (regate) {
      out.push_back(gated_winner(store, f, s, only, *regate, 3).record);
      continue;
    }
    auto best = best_current(store, f, s, only);
    if (!best) throw std::runtime_error("no gated result for " + to_string(s) + " in " + db);
    if (best->stale)
      spdlog::warn("{}: the stored winner was timed with an older kernel source or timing method; taking its config", to_string(s));
    out.push_back(std::move(best->record));
  }
  return out;
}

}  // namespace

void add_export(CLI::App& app, Globals& g) {
  auto* cmd = app.add_subcommand("export", "Write the best kernel(s), or a given config, as standalone CUDA source");
  static std::string family, suite, out = "exported", name, arch, device, config;
  static std::vector<std::string> shapes, defines;
  static bool json = false, torch = false;
  cmd->add_option("--family", family, "Family name")->required();
  cmd->add_option("--shape", shapes, "Shape, e.g. M=4096,N=4096,K=4096,dtype=f16 (repeatable)");
  cmd->add_option("--suite", suite, "Named shape suite of the family (default: every shape with results, as best)");
  cmd->add_option("--config", config,
                  "Export this config instead of the winners: K=V,... (others from the family's first default) or "
                  "best[,K=V,...] (the stored winner with overrides); ';NAME=V' adds defines");
  cmd->add_option("--define", defines, "Extra #define NAME=V rendered into every kernel (repeatable)");
  cmd->add_option("--out", out, "Output folder")->capture_default_str();
  cmd->add_option("--name", name, "Launcher name (several shapes: prefix)");
  cmd->add_option("--arch", arch, "Target, e.g. sm_90 (default: the measured device's; with --config: sm_90)");
  cmd->add_option("--device", device, "Use results of this device name (default: any)");
  cmd->add_flag("--json", json, "Print the manifest");
  cmd->add_flag("--torch", torch,
                "Also write torch/: the kernel(s) as the torch custom op kforge::<name> (torch/load.py builds and loads it)");
  set_action(cmd, [&g] {
    const Family f = load_family(g, family);
    ExportInput in;
    in.family = &f;
    in.out_dir = out;
    in.name = name;
    in.base_arch = arch;
    in.db_path = g.db;
    in.torch = torch;
    in.defines = parse_defines(f, defines);
    if (!config.empty()) {
      if (shapes.empty() && suite.empty()) throw std::runtime_error("--config needs --shape or --suite");
      std::optional<Store> store;  // opened only for "best"
      for (const auto& s : select_shapes(f, shapes, suite)) {
        const auto stored_best = [&]() -> Config {
          if (!store) store.emplace(g.db, Store::Access::ReadOnly);
          return complete_stored_config(f, stored_winners(*store, f, {s}, device_named(*store, device), g.db)
                                               .front()
                                               .config);
        };
        const UserVariant v = parse_user_variant(f, config, stored_best);
        for (const auto& [define, value] : v.defines) in.defines[define] = value;
        in.winners.push_back(unmeasured_record(f, v.config, s));
      }
      if (in.base_arch.empty()) in.base_arch = "sm_90";
      in.db_path.clear();
    } else {
      Store store(g.db, Store::Access::ReadOnly);
      std::vector<Shape> selected;
      if (shapes.empty() && suite.empty()) {
        selected = store.shapes(f.name);  // everything stored, as `best` shows
        if (selected.empty()) throw std::runtime_error("no results for " + f.name + " in " + g.db);
      } else {
        selected = select_shapes(f, shapes, suite);
      }
      const CampaignOptions regate = base_campaign_options(g);
      in.winners = stored_winners(store, f, selected, device_named(store, device), g.db, &regate);
    }
    const ExportOutput res = export_kernels(in);
    if (json) return print_json(res.manifest);
    for (const auto& p : res.files) std::printf("wrote %s\n", p.string().c_str());
  });
}

}  // namespace kf::cli
