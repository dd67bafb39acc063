#include <cstdio>

#include "cli/common.hpp"

namespace kf::cli {

void add_list(CLI::App& app, Globals& g) {
  auto* cmd = app.add_subcommand("list", "List the kernel families in the spec folder");
  static bool json = false;
  cmd->add_flag("--json", json, "Machine-readable output");
  set_action(cmd, [&g] {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& path : find_family_specs(spec_dir(g))) {
      const Family f = kf::load_family(path);
      size_t product = 1;
      for (const auto& p : f.params) product *= p.values.size();
      nlohmann::json suites = nlohmann::json::object();
      for (const auto& [name, shapes] : f.suites) suites[name] = shapes.size();
      out.push_back({{"name", f.name}, {"description", f.description},
                     {"params", f.params.size()}, {"configs", product},
                     {"suites", suites}, {"spec", path.string()}});
    }
    if (json) return print_json(out);
    std::printf("%-12s %7s %9s  %s\n", "family", "params", "configs", "description");
    for (const auto& f : out)
      std::printf("%-12s %7zu %9zu  %s\n", f["name"].get<std::string>().c_str(),
                  f["params"].get<size_t>(), f["configs"].get<size_t>(),
                  f["description"].get<std::string>().c_str());
  });
}

}  // namespace kf::cli
