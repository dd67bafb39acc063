#include <cstdio>

#include "cli/common.hpp"
#include "store/store_copy.hpp"

namespace kf::cli {

void add_db(CLI::App& app, Globals&) {
  auto* cmd = app.add_subcommand("db", "Database maintenance");
  cmd->require_subcommand(1);
  auto* migrate = cmd->add_subcommand(
      "migrate", "Copy every result of one database into a new one (SQLite file <-> postgresql://...)");
  static std::string from, to;
  migrate->add_option("--from", from, "Source: a results.db file or a postgresql:// URL")->required();
  migrate->add_option("--to", to, "Destination (new or empty): a file or a postgresql:// URL")->required();
  set_action(migrate, [] {
    const auto copied = copy_store(from, to);
    size_t total = 0;
    std::string parts;
    for (const auto& [table, rows] : copied) {
      total += rows;
      parts += (parts.empty() ? "" : ", ") + table + " " + std::to_string(rows);
    }
    std::printf("copied %zu row(s): %s\n", total, parts.c_str());
  });
}

}  // namespace kf::cli
