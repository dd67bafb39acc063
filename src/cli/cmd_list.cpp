#include "cli/common.hpp"
#include "cli/table.hpp"

namespace kf::cli {

void add_list(CLI::App& app, Globals& g) {
  auto* cmd = app.add_subcommand("list", "List the kernel families in the spec folder");
  static bool json = false;
  cmd->add_flag("--json", json, "Machine-readable output");
  set_action(cmd, [&g] {
    Table table({{"family", "name", 12, true}, {"params", "params", 7}, {"configs", "configs", 9},
                 {"description", "description", 0, true}});
    for (const auto& path : find_family_specs(spec_dir(g))) {
      const Family f = kf::load_family(path);
      size_t product = 1;
      for (const auto& p : f.params) product *= p.values.size();
      nlohmann::json suites = nlohmann::json::object();
      for (const auto& [name, shapes] : f.suites) suites[name] = shapes.size();
      table.add({{"name", f.name}, {"description", f.description}, {"params", f.params.size()},
                 {"configs", product}, {"suites", suites}, {"spec", path.string()}});
    }
    print_table(table, json);
  });
}

}  // namespace kf::cli
