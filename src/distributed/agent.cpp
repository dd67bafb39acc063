#include "distributed/agent.hpp"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <cstdio>
#include <random>
#include <thread>

#include "campaign/campaign.hpp"
#include "campaign/evaluate_job.hpp"
#include "compile/compiler.hpp"
#include "distributed/work_queue.hpp"
#include "eval/client/worker_client.hpp"

namespace kf {

namespace {

using Clock = std::chrono::steady_clock;

std::string new_agent_id() {
  char host[256] = "host";
  ::gethostname(host, sizeof host - 1);
  std::random_device rd;
  char tag[9];
  std::snprintf(tag, sizeof tag, "%08x", rd());
  return std::string(host) + ":" + std::to_string(::getpid()) + ":" + tag;
}

// One worker per GPU; with no list, devices 0, 1, ... until one has none. Only GPUs identical to
// the first serve: a node's results must all belong to one device identity.
std::vector<std::unique_ptr<WorkerClient>> start_agent_workers(const AgentOptions& o, double timeout_s,
                                                               std::vector<DeviceLimits>& devices) {
  std::vector<std::unique_ptr<WorkerClient>> workers;
  std::vector<int> ids = o.gpus.empty() ? std::vector<int>{0} : o.gpus;
  for (size_t i = 0; i < ids.size(); ++i) {
    auto argv = o.worker_argv;
    argv.push_back("--device");
    argv.push_back(std::to_string(ids[i]));
    auto w = std::make_unique<WorkerClient>(argv, timeout_s);
    DeviceLimits d;
    try {
      d = w->device();
    } catch (const std::exception& e) {
      if (o.gpus.empty() && !workers.empty()) break;
      throw std::runtime_error(e.what());
    }
    if (!devices.empty() && device_text(device_key(d)) != device_text(device_key(devices.front()))) {
      spdlog::warn("GPU {} ({}) differs from GPU {} ({}); it does not serve", ids[i], d.name, ids[0],
                   devices.front().name);
    } else {
      devices.push_back(d);
      workers.push_back(std::move(w));
    }
    if (o.gpus.empty() && ids.size() < 64) ids.push_back(ids.back() + 1);
  }
  return workers;
}

// evaluate_job's writes, made under the item's lease.
class LeasedRecorder final : public JobRecorder {
 public:
  LeasedRecorder(WorkQueue& q, WorkItem item) : q_(q), item_(std::move(item)) {}
  int64_t add_evaluation(const EvaluationRecord& e) override {
    return again_once([&] { return q_.complete(item_, std::nullopt, e); });
  }
  int64_t begin_attempt(const EvaluationRecord& what) override {
    return again_once([&] { return q_.begin_attempt(item_, what); });
  }
  int64_t finish_attempt(int64_t attempt, const EvaluationRecord& e) override {
    return again_once([&] { return q_.complete(item_, attempt, e); });
  }

 private:
  // A write cut off with its connection was rolled back (or, if the COMMIT itself was cut off,
  // it went through and the second try finds the lease gone): sending it once more is safe.
  template <class F>
  static int64_t again_once(F write) {
    try {
      return write();
    } catch (const ConnectionLost& e) {
      spdlog::warn("{}", e.what());
      return write();
    }
  }
  WorkQueue& q_;
  WorkItem item_;
};

// What an item needs besides its config: the family, its shape's reference cubin, how to time.
struct ShapeContext {
  std::shared_ptr<const Family> family;
  Shape shape;
  std::string ref_cubin;
};

struct Job {
  std::shared_ptr<const ShapeContext> shape;
  std::unique_ptr<LeasedRecorder> recorder;
  JobContext ctx;
  EvalJob eval;
};

class Agent {
 public:
  Agent(Store& store, const AgentOptions& o) : store_(store), o_(o), queue_(store), id_(new_agent_id()) {}

  AgentOutcome run() {
    workers_ = start_agent_workers(o_, o_.eval_timeout_s, devices_);
    const DeviceLimits& device = devices_.front();
    const size_t threads = o_.compile_threads ? o_.compile_threads : std::max(1u, std::thread::hardware_concurrency());
    cache_ = std::make_unique<CubinCache>(o_.cache_dir);
    pool_ = std::make_unique<CompilePool>(threads, cache_.get());
    depth_ = campaign_depth(workers_.size(), threads);
    queue_.register_agent(id_, device, workers_.size());
    spdlog::info("agent {}: {} GPU(s) {}, serving {} on {}", id_, workers_.size(), device.name,
                 o_.campaign_id ? "campaign " + std::to_string(o_.campaign_id) : std::string("any campaign"),
                 store_.path().string());
    std::thread heartbeat([this] { heartbeat_loop(); });
    std::vector<std::thread> gpus;
    for (size_t i = 0; i < workers_.size(); ++i) gpus.emplace_back([this, i] { gpu_loop(i); });
    std::string failure;
    try {
      claim_loop();
    } catch (const std::exception& e) {
      failure = e.what();
    }
    {
      std::lock_guard lock(mu_);
      closing_ = true;
      // After a failure their leases expire and others re-claim them; after Ctrl-C, release()
      // below hands them back at once.
      if (!failure.empty() || g_stop_requested.load()) jobs_.clear();
    }
    cv_.notify_all();
    for (auto& t : gpus) t.join();
    stop_heartbeat_ = true;
    heartbeat.join();
    if (failure.empty() && fatal_.empty()) {
      queue_.release(id_);
      queue_.agent_exits(id_);
    }
    if (!failure.empty()) throw std::runtime_error(failure);
    if (!fatal_.empty()) throw std::runtime_error(fatal_);
    outcome_.agent_id = id_;
    return outcome_;
  }

 private:
  void claim_loop() {
    const auto started = Clock::now();
    bool served = false;
    for (;;) {
      {
        std::lock_guard lock(mu_);
        if (!fatal_.empty()) return;
      }
      if (g_stop_requested.load()) return;
      size_t room = 0;
      {
        std::lock_guard lock(mu_);
        room = depth_ > in_flight_ ? depth_ - in_flight_ : 0;
      }
      std::vector<WorkItem> items;
      try {
        if (room) items = queue_.claim(id_, device_key(devices_.front()), room, o_.lease_s, o_.campaign_id);
      } catch (const ConnectionLost& e) {  // rolled back: claim again on a new connection
        spdlog::warn("{}", e.what());
        continue;
      }
      for (auto& item : items) {
        served = true;
        dispatch(std::move(item));
      }
      if (!items.empty()) continue;
      size_t busy = 0;
      {
        std::lock_guard lock(mu_);
        busy = in_flight_;
      }
      if (busy == 0 && nothing_to_serve(served, started)) return;
      std::unique_lock lock(mu_);
      cv_.wait_for(lock, std::chrono::duration<double>(o_.poll_s));
    }
  }

  // No running campaign for this agent: after it served one (or was told which), or after waiting.
  bool nothing_to_serve(bool served, Clock::time_point started) {
    const auto running = queue_.running_campaigns(o_.stale_s);
    bool mine = false;
    for (int64_t c : running) mine = mine || o_.campaign_id == 0 || c == o_.campaign_id;
    if (mine) {
      seen_campaign_ = true;  // it may end before this agent gets any of its items
      return false;
    }
    if (served || seen_campaign_ || o_.campaign_id) {
      spdlog::info("agent {}: no campaign left to serve; exiting", id_);
      return true;
    }
    if (std::chrono::duration<double>(Clock::now() - started).count() >= o_.wait_s) {
      spdlog::info("agent {}: no distributed campaign appeared in {:g} s; exiting", id_, o_.wait_s);
      return true;
    }
    return false;
  }

  std::shared_ptr<const ShapeContext> shape_context(const WorkItem& item) {
    const std::string key = item.family + "/" + to_string(item.shape);
    if (auto it = shapes_.find(key); it != shapes_.end()) return it->second;
    auto& family = families_[item.family];
    if (!family) family = std::make_shared<const Family>(load_family_named(item.family, o_.spec_dir));
    auto ctx = std::make_shared<ShapeContext>();
    ctx->family = family;
    ctx->shape = item.shape;
    const auto ref = compile_variant(render_reference(*family, item.shape), devices_.front().arch(), cache_.get());
    if (!ref.ok)
      throw std::runtime_error("reference kernel of " + family->name + " does not compile: " +
                               ref.log.substr(0, ref.log.find('\n')));
    ctx->ref_cubin = ref.cubin_path.string();
    shapes_[key] = ctx;
    return ctx;
  }

  void dispatch(WorkItem item) {
    auto shape = shape_context(item);
    Variant v = render_variant(*shape->family, item.config, item.shape);
    if (v.hash != item.variant_hash) {
      // Another template or spec than the coordinator's: its result would not be the kernel asked for.
      spdlog::warn("work item {}: kernel source differs from the coordinator's ({} here, {} there); refused",
                   item.id, v.hash.substr(0, 12), item.variant_hash.substr(0, 12));
      queue_.refuse(item, "the agent's kernel source differs from the coordinator's");
      ++outcome_.refused;
      return;
    }
    const CampaignOptions opts = campaign_options_from_json(item.campaign_options);
    auto job = std::make_unique<Job>();
    job->shape = shape;
    job->recorder = std::make_unique<LeasedRecorder>(queue_, item);
    job->ctx = JobContext{&store_, &store_mu_, shape->family.get(), &shape->shape, nullptr, item.campaign_id,
                          shape->ref_cubin, opts.seed, opts.timing};
    job->ctx.recorder = job->recorder.get();
    job->ctx.objective = opts.objective;
    job->eval.config = item.config;
    job->eval.compiled = pool_->submit(std::move(v), devices_.front().arch());
    {
      std::lock_guard lock(mu_);
      jobs_.push_back(std::move(job));
      ++in_flight_;
    }
    cv_.notify_all();
  }

  void gpu_loop(size_t gpu) {
    for (;;) {
      std::unique_ptr<Job> job;
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [&] { return !jobs_.empty() || closing_; });
        if (jobs_.empty()) return;
        job = std::move(jobs_.front());
        jobs_.pop_front();
      }
      job->ctx.device = &devices_[gpu];
      std::string failure;
      bool done = false;
      try {
        evaluate_job(job->ctx, *workers_[gpu], std::move(job->eval));
        done = true;
      } catch (const LeaseLost& e) {
        spdlog::warn("{}", e.what());
        std::lock_guard lock(mu_);
        ++outcome_.discarded;
      } catch (const std::exception& e) {
        failure = e.what();
      }
      {
        std::lock_guard lock(mu_);
        if (done) ++outcome_.evaluated;
        if (!failure.empty() && fatal_.empty()) fatal_ = failure;
        --in_flight_;
      }
      cv_.notify_all();
    }
  }

  void heartbeat_loop() {
    const auto period = std::chrono::duration<double>(std::max(0.05, o_.lease_s / 3));
    auto next = Clock::now();
    while (!stop_heartbeat_) {
      if (Clock::now() >= next) {
        try {
          queue_.heartbeat_agent(id_, o_.lease_s);
        } catch (const ConnectionLost& e) {
          spdlog::warn("{}", e.what());  // the next beat re-opens the connection (or fails for good)
          continue;
        } catch (const std::exception& e) {
          std::lock_guard lock(mu_);
          if (fatal_.empty()) fatal_ = e.what();
          cv_.notify_all();
          return;
        }
        next = Clock::now() + std::chrono::duration_cast<Clock::duration>(period);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }

  Store& store_;
  const AgentOptions& o_;
  WorkQueue queue_;
  const std::string id_;
  std::vector<DeviceLimits> devices_;
  std::vector<std::unique_ptr<WorkerClient>> workers_;
  std::unique_ptr<CubinCache> cache_;
  std::unique_ptr<CompilePool> pool_;
  size_t depth_ = 1;
  std::map<std::string, std::shared_ptr<const Family>> families_;
  std::map<std::string, std::shared_ptr<const ShapeContext>> shapes_;
  std::mutex store_mu_;  // JobContext wants one; the recorder's writes go through the queue
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::unique_ptr<Job>> jobs_;
  size_t in_flight_ = 0;
  bool closing_ = false;
  std::string fatal_;
  std::atomic<bool> stop_heartbeat_{false};
  AgentOutcome outcome_;
  bool seen_campaign_ = false;
};

}  // namespace

AgentOutcome run_agent(Store& store, const AgentOptions& o) { return Agent(store, o).run(); }

}  // namespace kf
