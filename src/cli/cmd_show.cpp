#include <cstdio>

#include "cli/common.hpp"

namespace kf::cli {

void add_show(CLI::App& app, Globals& g) {
  auto* cmd = app.add_subcommand("show", "List campaigns and their status counts");
  static bool json = false;
  cmd->add_flag("--json", json, "Machine-readable output");
  set_action(cmd, [&g] {
    Store store(g.db, Store::Access::ReadOnly);
    nlohmann::json out = nlohmann::json::array();
    for (const auto& c : store.campaigns()) {
      nlohmann::json shapes = nlohmann::json::array();
      for (const auto& s : c.shapes) shapes.push_back(to_string(s));
      out.push_back({{"id", c.id}, {"family", c.family}, {"strategy", c.strategy},
                     {"seed", c.seed}, {"status", c.status}, {"shapes", shapes},
                     {"device", c.device ? c.device->name : ""}, {"created_at", c.created_at},
                     {"updated_at", c.updated_at}, {"counts", store.status_counts(c.id)}});
    }
    if (json) return print_json(out);
    if (out.empty()) {
      std::printf("no campaigns in %s\n", g.db.c_str());
      return;
    }
    std::printf("%4s %-10s %-10s %-8s %6s %-20s %s\n", "id", "family", "strategy", "status",
                "shapes", "started", "evaluations");
    for (const auto& c : out) {
      std::string counts;
      int total = 0;
      for (const auto& [k, v] : c["counts"].items()) {
        counts += " " + k + " " + std::to_string(v.get<int>());
        total += v.get<int>();
      }
      std::printf("%4lld %-10s %-10s %-8s %6zu %-20s %d:%s\n", c["id"].get<long long>(),
                  c["family"].get<std::string>().c_str(), c["strategy"].get<std::string>().c_str(),
                  c["status"].get<std::string>().c_str(), c["shapes"].size(),
                  c["created_at"].get<std::string>().substr(0, 19).c_str(), total, counts.c_str());
    }
  });
}

}  // namespace kf::cli
