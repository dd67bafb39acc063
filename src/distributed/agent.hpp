// `kforge agent`: one per node. Claims work items of distributed campaigns from the shared
// PostgreSQL store, evaluates them with its own workers (one per GPU), compile pool and cubin
// cache, and records each result under its lease (src/distributed/work_queue.hpp). Exits when no
// campaign it could serve is running any more.
#pragma once
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "store/store.hpp"

namespace kf {

struct AgentOptions {
  std::filesystem::path spec_dir;        // where the family specs named by work items are
  std::filesystem::path cache_dir;       // this node's cubin cache
  std::vector<std::string> worker_argv;  // "--device N" is appended
  std::vector<int> gpus;                 // empty: all visible
  size_t compile_threads = 0;            // 0: hardware concurrency
  double eval_timeout_s = 60;            // watchdog per evaluation
  double lease_s = 60;                   // a lease not renewed for this long expires
  int64_t campaign_id = 0;               // 0: any running campaign for this device
  double wait_s = 600;                   // how long to wait for a first campaign to appear
  double stale_s = 120;                  // a coordinator silent this long is gone
  double poll_s = 0.5;                   // idle polling interval
};

struct AgentOutcome {
  size_t evaluated = 0;  // items completed by this agent
  size_t discarded = 0;  // results thrown away because the lease was lost
  size_t refused = 0;    // items whose kernel source differed from the coordinator's
  std::string agent_id;
};

// Throws std::runtime_error (one line) when no worker starts or the store fails for good.
AgentOutcome run_agent(Store& store, const AgentOptions& o);

}  // namespace kf
