// kforge baseline import: store timings of other implementations (PyTorch backends, cuBLAS)
// measured by tools/compare_torch.py or tools/bench_gemm, so `best` can show the ratio.
#include <cstdio>

#include "cli/common.hpp"
#include "importers/baselines.hpp"

namespace kf::cli {

void add_baseline(CLI::App& app, Globals& g) {
  auto* cmd = app.add_subcommand("baseline", "Store baseline timings measured by tools/");
  auto* imp = cmd->add_subcommand("import", "Import a JSON list of baseline timings");
  cmd->require_subcommand(1);
  static std::string file;
  imp->add_option("file", file,
                  "JSON list of {family, shape{}, backend, median_us, device{name,cc,sm_count}}")
      ->required();
  set_action(imp, [&g] {
    const nlohmann::json list = read_baseline_file(file);
    Store store(g.db);
    // Every record is checked first and all are stored in one transaction: a bad record
    // stores nothing, and a record stored before is not stored twice.
    const auto records = parse_baseline_records(
        list, file, [&g](const std::string& name) { return load_family(g, name); }, store.devices());
    const size_t added = store.add_baselines(records);
    std::printf("imported %zu baseline timing(s) into %s (%zu already there)\n", added, g.db.c_str(),
                records.size() - added);
  });
}

}  // namespace kf::cli
