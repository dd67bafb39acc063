#include <iostream>

#include "cli/common.hpp"
#include "eval/worker/protocol_channel.hpp"
#include "eval/worker/worker.hpp"

namespace kf::cli {

void add_worker(CLI::App& app, Globals&) {
  auto* cmd = app.add_subcommand(
      "worker",
      "Serve evaluations on one GPU: JSON-line requests on stdin, replies on the descriptor named by "
      "KFORGE_PROTOCOL_FD (default: stdout, which then goes to stderr); started by search");
  static int device = 0;
  cmd->add_option("--device", device, "CUDA device index")->check(whole_number(0, 1023))->capture_default_str();
  set_action(cmd, [] {
    FdOStream out(take_protocol_channel());
    const int rc = run_worker(device, std::cin, out);
    if (rc != 0) std::exit(rc);
  });
}

}  // namespace kf::cli
