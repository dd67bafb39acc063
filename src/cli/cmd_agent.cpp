#include <cstdio>

#include "cli/common.hpp"
#include "distributed/agent.hpp"
#include "store/sql.hpp"

namespace kf::cli {

std::vector<int> parse_gpu_list(const std::string& text);  // cmd_search.cpp

void add_agent(CLI::App& app, Globals& g) {
  auto* cmd = app.add_subcommand(
      "agent", "Serve distributed campaigns (search --distributed) from a shared PostgreSQL --db, one per node");
  static AgentOptions o;
  static std::string gpus = "all", lease = "60", wait = "10m";
  cmd->add_option("--gpus", gpus, "GPUs to use: all, or a list like 0,1")->capture_default_str();
  cmd->add_option("--compile-jobs", o.compile_threads, "NVRTC threads (default: all cores)")
      ->check(whole_number(1, kMaxThreads));
  cmd->add_option("--timeout", o.eval_timeout_s, "Seconds before a hung evaluation is killed")
      ->check(positive_seconds())
      ->capture_default_str();
  cmd->add_option("--campaign", o.campaign_id, "Serve this campaign only, and exit when it ends")
      ->check(whole_number(1));
  cmd->add_option("--lease", lease, "A claimed item not renewed for this long is re-claimed by others")
      ->check(duration())
      ->capture_default_str();
  cmd->add_option("--wait", wait, "How long to wait for a first campaign before exiting")
      ->check(duration())
      ->capture_default_str();
  set_action(cmd, [&g] {
    if (!sql::is_postgres_url(g.db))
      throw std::runtime_error("agent: --db must name a shared PostgreSQL database (postgresql://...), not " + g.db);
    AgentOptions opts = o;
    opts.spec_dir = spec_dir(g);
    opts.cache_dir = cache_dir(g);
    opts.worker_argv = base_campaign_options(g).worker_argv;
    if (gpus != "all") opts.gpus = parse_gpu_list(gpus);
    opts.lease_s = parse_duration(lease);
    opts.wait_s = parse_duration(wait);
    opts.stale_s = std::max(120.0, 2 * opts.lease_s);
    Store store(g.db);
    install_stop_handler();
    const AgentOutcome out = run_agent(store, opts);
    std::printf("agent %s: %zu evaluation(s) recorded, %zu discarded (lease lost), %zu refused\n",
                out.agent_id.c_str(), out.evaluated, out.discarded, out.refused);
  });
}

}  // namespace kf::cli
