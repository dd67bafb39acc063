// kforge list: the families in the spec folder. A spec that fails to load does not hide the
// others: the good ones are listed, each bad one gets one line on stderr naming its file, and
// the exit code is 1 (a spec folder with a broken spec is not in order).
#include <cstdio>

#include "cli/common.hpp"
#include "cli/table.hpp"

namespace kf::cli {

namespace {
// "<file>: <error>", one line; the file is named once even when the error names it already.
std::string spec_error_line(const std::filesystem::path& path, std::string error) {
  if (auto nl = error.find('\n'); nl != std::string::npos) error.resize(nl);
  if (error.find(path.filename().string()) == std::string::npos) error = path.string() + ": " + error;
  return error;
}
}  // namespace

void add_list(CLI::App& app, Globals& g) {
  auto* cmd = app.add_subcommand("list", "List the kernel families in the spec folder");
  static bool json = false;
  cmd->add_flag("--json", json, "Machine-readable output");
  set_action(cmd, [&g] {
    Table table({{"family", "name", 12, true}, {"params", "params", 7}, {"configs", "configs", 9},
                 {"description", "description", 0, true}});
    std::vector<std::string> bad;
    for (const auto& path : find_family_specs(spec_dir(g))) {
      try {
        const Family f = kf::load_family(path);
        size_t product = 1;
        for (const auto& p : f.params) product *= p.values.size();
        nlohmann::json suites = nlohmann::json::object();
        for (const auto& [name, shapes] : f.suites) suites[name] = shapes.size();
        table.add({{"name", f.name}, {"description", f.description}, {"params", f.params.size()},
                   {"configs", product}, {"suites", suites}, {"spec", path.string()}});
      } catch (const std::exception& e) {
        bad.push_back(spec_error_line(path, e.what()));
      }
    }
    print_table(table, json);
    std::fflush(stdout);
    for (const auto& line : bad) std::fprintf(stderr, "kforge: %s\n", line.c_str());
    if (!bad.empty()) throw ReportedFailure();
  });
}

}  // namespace kf::cli
