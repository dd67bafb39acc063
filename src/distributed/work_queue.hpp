// The work queue of distributed campaigns, in the PostgreSQL store (tables dist_campaigns,
// dist_agents, dist_work; docs/distributed.md). A coordinator publishes work items (shape,
// config, kernel hash) for its campaign; agents claim them with FOR UPDATE SKIP LOCKED and hold
// them under a lease that a heartbeat renews. A lease that expires (the agent died) makes the
// item claimable again: its open attempt is closed as interrupted, and an item whose lease
// expired twice is abandoned (it kills whoever runs it). Completing an item stores its
// evaluation and marks the item done in one transaction, only while the lease token is still
// the claimer's: an item is never evaluated twice to completion.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "store/store.hpp"

namespace kf {

// A write whose lease was lost (the item was re-claimed by another agent): nothing was stored.
struct LeaseLost : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Device identity as one text key: results mix only between identical devices.
std::string device_text(const DeviceKey& d);

struct WorkItem {
  int64_t id = 0;
  int64_t campaign_id = 0;
  std::string family;
  Shape shape;
  Config config;
  std::string variant_hash;
  std::string lease_token;
  nlohmann::json campaign_options;  // timing, seed, eval timeout: how to evaluate
};

// What a coordinator gets back for one item.
struct WorkResult {
  int64_t item = 0;
  bool abandoned = false;  // its lease expired twice: no result
  std::optional<EvaluationRecord> evaluation;
};

class WorkQueue {
 public:
  // Creates the queue's tables if missing. Throws StoreError for a SQLite store: distributed
  // campaigns need a database that several machines share.
  explicit WorkQueue(Store& store);

  // ---- coordinator ----
  void open_campaign(int64_t campaign_id, const std::string& family, const nlohmann::json& options);
  // The device the campaign runs on: set by the first agent that registers, else nullopt.
  std::optional<DeviceLimits> campaign_device(int64_t campaign_id);
  void set_campaign_device(int64_t campaign_id, const DeviceLimits& d);
  // The newest agent seen alive (heartbeat within stale_s), if any: its device.
  std::optional<DeviceLimits> live_agent_device(double stale_s);
  size_t live_agents(double stale_s);
  // GPUs of the agents seen alive within stale_s (each agent says how many it serves with).
  size_t live_gpus(double stale_s);
  int64_t publish(int64_t campaign_id, const std::string& family, const Shape& s, const Config& c,
                  const std::string& variant_hash, const DeviceKey& d);
  // Finished (done or abandoned) items of one shape of a campaign not yet returned; each once.
  std::vector<WorkResult> take_finished(int64_t campaign_id, const Shape& s);
  void heartbeat_campaign(int64_t campaign_id);
  // state "done" or "stopped": agents stop claiming its items; pending ones are withdrawn.
  void close_campaign(int64_t campaign_id, const std::string& state);

  // ---- agent ----
  void register_agent(const std::string& agent, const DeviceLimits& d, size_t gpus);
  // Claims up to n items for the agent's device (of campaign_id only, when non-zero).
  std::vector<WorkItem> claim(const std::string& agent, const DeviceKey& d, size_t n, double lease_s,
                              int64_t campaign_id);
  // Renews every lease the agent holds and its own heartbeat.
  void heartbeat_agent(const std::string& agent, double lease_s);
  // Attempt written and tied to the item, only if the lease is still the agent's (else LeaseLost).
  int64_t begin_attempt(const WorkItem& item, const EvaluationRecord& what);
  // The evaluation stored and the item done, in one transaction, only if the lease still holds.
  int64_t complete(const WorkItem& item, std::optional<int64_t> attempt, const EvaluationRecord& e);
  // An item the agent cannot run (its kernel source differs from the coordinator's): abandoned.
  void refuse(const WorkItem& item, const std::string& why);
  // Items leased but never dispatched go back to pending (a clean shutdown).
  void release(const std::string& agent);
  // Campaigns still running (coordinator seen within stale_s) that this device could serve.
  std::vector<int64_t> running_campaigns(double stale_s);
  void agent_exits(const std::string& agent);

 private:
  Store& store_;
};

}  // namespace kf
