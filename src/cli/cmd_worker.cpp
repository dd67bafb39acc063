#include <iostream>

#include "cli/common.hpp"
#include "eval/worker.hpp"

namespace kf::cli {

void add_worker(CLI::App& app, Globals&) {
  auto* cmd = app.add_subcommand(
      "worker", "Serve evaluations on one GPU over stdin/stdout (started by search; JSON lines)");
  static int device = 0;
  cmd->add_option("--device", device, "CUDA device index")->capture_default_str();
  set_action(cmd, [] {
    const int rc = run_worker(device, std::cin, std::cout);
    if (rc != 0) std::exit(rc);
  });
}

}  // namespace kf::cli
