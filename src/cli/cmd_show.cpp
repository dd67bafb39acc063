#include <cstdio>

#include "cli/common.hpp"
#include "cli/table.hpp"

namespace kf::cli {

void add_show(CLI::App& app, Globals& g) {
  auto* cmd = app.add_subcommand("show", "List campaigns and their status counts");
  static bool json = false;
  cmd->add_flag("--json", json, "Machine-readable output");
  set_action(cmd, [&g] {
    Store store(g.db, Store::Access::ReadOnly);
    const auto campaigns = store.campaigns();
    if (campaigns.empty() && !json) {
      std::printf("no campaigns in %s\n", g.db.c_str());
      return;
    }
    Table table({{"id", "id", 4}, {"family", "family", 10, true}, {"strategy", "strategy", 10, true},
                 {"status", "status", 8, true}, {"shapes", "shapes", 6}, {"started", "created_at", 20, true},
                 {"evaluations", "counts", 0, true}});
    for (const auto& c : campaigns) {
      nlohmann::json shapes = nlohmann::json::array();
      for (const auto& s : c.shapes) shapes.push_back(to_string(s));
      const auto counts = store.status_counts(c.id);
      std::string count_text;
      int total = 0;
      for (const auto& [status, n] : counts) {
        count_text += " " + status + " " + std::to_string(n);
        total += n;
      }
      table.add({{"id", c.id}, {"family", c.family}, {"strategy", c.strategy}, {"seed", c.seed},
                 {"status", c.status}, {"shapes", shapes}, {"device", c.device ? c.device->name : ""},
                 {"created_at", c.created_at}, {"updated_at", c.updated_at}, {"counts", counts}},
                {{"shapes", std::to_string(c.shapes.size())},
                 {"created_at", c.created_at.substr(0, 19)},
                 {"counts", std::to_string(total) + ":" + count_text}});
    }
    print_table(table, json);
  });
}

}  // namespace kf::cli
