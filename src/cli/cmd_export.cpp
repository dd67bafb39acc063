// kforge export: the stored winner(s) as standalone source, C launcher and manifest.
#include <spdlog/spdlog.h>

#include <cstdio>

#include "campaign/current_results.hpp"
#include "cli/common.hpp"
#include "export/export.hpp"

namespace kf::cli {

void add_export(CLI::App& app, Globals& g) {
  auto* cmd = app.add_subcommand("export", "Write the best kernel(s) as standalone CUDA source");
  static std::string family, suite, out = "exported", name, arch, device;
  static std::vector<std::string> shapes;
  static bool json = false;
  cmd->add_option("--family", family, "Family name")->required();
  add_shape_options(cmd, shapes, suite);
  cmd->add_option("--out", out, "Output folder")->capture_default_str();
  cmd->add_option("--name", name, "Launcher name (several shapes: prefix)");
  cmd->add_option("--arch", arch, "Target, e.g. sm_90 (default: the measured device's)");
  cmd->add_option("--device", device, "Use results of this device name (default: any)");
  cmd->add_flag("--json", json, "Print the manifest");
  set_action(cmd, [&g] {
    const Family f = load_family(g, family);
    const auto selected = select_shapes(f, shapes, suite);
    Store store(g.db);
    std::optional<DeviceKey> only;
    if (!device.empty())
      for (const auto& d : store.devices())
        if (d.name == device) only = d;
    if (!device.empty() && !only) throw std::runtime_error("no results for device " + device);
    ExportInput in;
    in.family = &f;
    in.out_dir = out;
    in.name = name;
    in.base_arch = arch;
    in.db_path = g.db;
    for (const auto& s : selected) {
      auto best = best_current(store, f, s, only);
      if (!best) throw std::runtime_error("no gated result for " + to_string(s) + " in " + g.db);
      if (best->stale)
        spdlog::warn("{}: the stored winner was timed with an older kernel source; exporting its current kernel",
                     to_string(s));
      in.winners.push_back(std::move(best->record));
    }
    const ExportOutput res = export_kernels(in);
    if (json) return print_json(res.manifest);
    for (const auto& p : res.files) std::printf("wrote %s\n", p.string().c_str());
  });
}

}  // namespace kf::cli
