// kforge baseline import: store timings of other implementations (PyTorch backends, cuBLAS)
// measured by tools/compare_torch.py or tools/bench_gemm, so `best` can show the ratio.
#include <cstdio>
#include <fstream>

#include "cli/common.hpp"

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
    std::ifstream in(file);
    if (!in) throw std::runtime_error("cannot read " + file);
    nlohmann::json list;
    try {
      list = nlohmann::json::parse(in);
    } catch (const std::exception& e) {
      throw std::runtime_error(file + ": " + e.what());
    }
    if (!list.is_array()) throw std::runtime_error(file + ": expected a JSON list");
    Store store(g.db);
    size_t n = 0;
    for (const auto& j : list) {
      BaselineRecord b;
      b.family = j.at("family").get<std::string>();
      const Family f = load_family(g, b.family);
      b.shape = validate_shape(f, assignment_from_json(j.at("shape")));
      b.backend = j.at("backend").get<std::string>();
      b.median_us = j.at("median_us").get<double>();
      const auto& d = j.at("device");
      b.device.name = d.at("name").get<std::string>();
      b.device.cc = d.at("cc").get<int>();
      b.device.sm_count = d.at("sm_count").get<int>();
      b.device.driver = d.value("driver", "");
      // Match the device kforge's workers recorded (same name, cc and SMs), driver included.
      for (const auto& known : store.devices())
        if (known.name == b.device.name && known.cc == b.device.cc &&
            known.sm_count == b.device.sm_count && b.device.driver.empty())
          b.device.driver = known.driver;
      b.extra = j;
      store.add_baseline(b);
      ++n;
    }
    std::printf("imported %zu baseline timing(s) into %s\n", n, g.db.c_str());
  });
}

}  // namespace kf::cli
