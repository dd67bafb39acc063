#include "distributed/coordinator.hpp"

#include <spdlog/spdlog.h>

#include <atomic>
#include <chrono>
#include <map>
#include <thread>

#include "campaign/search_loop.hpp"
#include "core/objective.hpp"
#include "distributed/work_queue.hpp"
#include "family/render.hpp"

namespace kf {

namespace {

using Clock = std::chrono::steady_clock;

// One shape's configs as work items; their results as the agents record them.
class QueueEvaluator final : public LoopEvaluator {
 public:
  QueueEvaluator(WorkQueue& q, int64_t campaign_id, const Family& family, const Shape& shape, const DeviceKey& device,
                 Objective objective)
      : q_(q), campaign_id_(campaign_id), family_(family), shape_(shape), device_(device), objective_(objective) {}

  void submit(const Config& c) override {
    const std::string hash = render_variant(family_, c, shape_).hash;
    int64_t id = 0;
    try {
      id = q_.publish(campaign_id_, family_.name, shape_, c, hash, device_);
    } catch (const ConnectionLost& e) {  // not committed: publish again on a new connection
      spdlog::warn("{}", e.what());
      id = q_.publish(campaign_id_, family_.name, shape_, c, hash, device_);
    }
    pending_[id] = c;
  }

  std::vector<LoopResult> collect(std::chrono::milliseconds wait) override {
    const auto deadline = Clock::now() + wait;
    for (;;) {
      std::vector<WorkResult> finished;
      try {
        finished = q_.take_finished(campaign_id_, shape_);
      } catch (const ConnectionLost& e) {  // rolled back: the same results come at the next call
        spdlog::warn("{}", e.what());
      }
      if (!finished.empty() || Clock::now() >= deadline) return results(finished);
      std::this_thread::sleep_for(std::min<Clock::duration>(std::chrono::milliseconds(100), deadline - Clock::now()));
    }
  }

 private:
  std::vector<LoopResult> results(const std::vector<WorkResult>& finished) {
    std::vector<LoopResult> out;
    for (const auto& w : finished) {
      auto it = pending_.find(w.item);
      if (it == pending_.end()) continue;  // not this run's (cannot happen: items are per campaign and shape)
      LoopResult r;
      r.observation.config = it->second;
      pending_.erase(it);
      if (!w.evaluation) {
        r.status = "interrupted";  // abandoned: its lease expired on every claimer
      } else {
        const EvaluationRecord& e = *w.evaluation;
        r.status = to_string(e.status);
        if (e.status == Status::Ok && e.timing) {
          r.observation.time_us = objective_value(*e.timing, objective_);
          r.time_us = e.timing->median_us;
          r.tflops = e.flops / (e.timing->median_us * 1e-6) / 1e12;
        }
      }
      out.push_back(std::move(r));
    }
    return out;
  }

  WorkQueue& q_;
  int64_t campaign_id_;
  const Family& family_;
  Shape shape_;
  DeviceKey device_;
  Objective objective_;
  std::map<int64_t, Config> pending_;  // item id -> the config as the strategy proposed it
};

class WorkQueueEvaluations final : public RemoteEvaluations {
 public:
  WorkQueueEvaluations(Store& store, size_t min_agents) : q_(store), min_agents_(min_agents) {}
  ~WorkQueueEvaluations() override { stop_heartbeat(); }

  DeviceLimits device() override {
    bool said = false;
    for (;;) {
      if (q_.live_agents(kAgentStaleS) >= min_agents_)
        if (auto d = q_.live_agent_device(kAgentStaleS)) {
          device_ = *d;
          return *d;
        }
      if (!said)
        spdlog::info("waiting for {} agent(s) to register (kforge agent --db ... on each GPU node)", min_agents_);
      said = true;
      if (g_stop_requested.load()) throw std::runtime_error("stopped before any agent registered");
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
  }

  void started(int64_t campaign_id, const std::string& family, const nlohmann::json& options) override {
    campaign_id_ = campaign_id;
    objective_ = parse_objective(options.value("objective", std::string("time")));
    q_.open_campaign(campaign_id, family, options);
    q_.set_campaign_device(campaign_id, device_);
    heartbeat_ = std::thread([this] {
      while (!stop_) {
        try {
          q_.heartbeat_campaign(campaign_id_);
        } catch (const std::exception& e) {
          spdlog::warn("campaign {}: heartbeat failed: {}", campaign_id_, e.what());
        }
        for (int i = 0; i < 20 && !stop_; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(250));
      }
    });
    spdlog::info("campaign {}: work items for {} ({}); agents with another device leave them", campaign_id,
                 device_.name, device_text(device_key(device_)));
  }

  std::unique_ptr<LoopEvaluator> evaluator(const Family& family, const Shape& shape) override {
    return std::make_unique<QueueEvaluator>(q_, campaign_id_, family, shape, device_key(device_), objective_);
  }

  // Two items per GPU the agents had when the shape started, so no GPU waits for the strategy.
  size_t depth() override { return std::max<size_t>(4, 2 * q_.live_gpus(kAgentStaleS) + 2); }

  void finished(const std::string& status) override {
    stop_heartbeat();
    q_.close_campaign(campaign_id_, status);
  }

 private:
  static constexpr double kAgentStaleS = 120;
  void stop_heartbeat() {
    stop_ = true;
    if (heartbeat_.joinable()) heartbeat_.join();
  }

  WorkQueue q_;
  size_t min_agents_;
  DeviceLimits device_;
  int64_t campaign_id_ = 0;
  Objective objective_ = Objective::Time;  // the campaign's, from its options
  std::atomic<bool> stop_{false};
  std::thread heartbeat_;
};

}  // namespace

std::shared_ptr<RemoteEvaluations> make_work_queue_evaluations(Store& store, size_t min_agents) {
  return std::make_shared<WorkQueueEvaluations>(store, std::max<size_t>(1, min_agents));
}

}  // namespace kf
