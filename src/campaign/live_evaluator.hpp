// A campaign's evaluations as the search loop sees them (the worker and queue plumbing): each
// config is rendered and handed to the compile pool, then queued for one thread per GPU, which
// runs evaluate_job against its worker; results come back as they finish.
#pragma once
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "campaign/evaluate_job.hpp"
#include "campaign/fair_lock.hpp"
#include "campaign/search_loop.hpp"

namespace kf {

class CompilePool;

// Workers: one per GPU (argv + "--device N"). No ids: device 0, 1, ... until one has no device.
std::vector<std::unique_ptr<WorkerClient>> start_workers(const std::vector<std::string>& worker_argv,
                                                         const std::vector<int>& gpus, double eval_timeout_s,
                                                         std::vector<DeviceLimits>& devices);

// Compile and GPU time summed over a campaign's evaluations.
struct EvalTotals {
  std::mutex mu;
  double compile_s = 0, gpu_s = 0;
  size_t compiled = 0, cache_hits = 0;
};

class LiveEvaluator final : public LoopEvaluator {
 public:
  // Starts one thread per worker; ctx.device is set per thread from devices. worker_locks (one per worker, or
  // none): held around each evaluation, for shapes whose evaluators share the workers (a suite searched at once).
  LiveEvaluator(std::vector<std::unique_ptr<WorkerClient>>& workers, const std::vector<DeviceLimits>& devices,
                const JobContext& ctx, CompilePool& pool, const std::string& arch, EvalTotals& totals,
                const std::vector<std::unique_ptr<FairLock>>& worker_locks = {});
  ~LiveEvaluator() override { close(); }
  LiveEvaluator(const LiveEvaluator&) = delete;
  LiveEvaluator& operator=(const LiveEvaluator&) = delete;

  void submit(const Config& c) override;
  // Throws std::runtime_error when an evaluation could not be recorded (the store or the spec failed).
  std::vector<LoopResult> collect(std::chrono::milliseconds wait) override;
  // Ends a collect that is waiting (the loop may dispatch again: its suite quota grew).
  void wake();
  // Stops the GPU threads once the jobs queued are done (at once, dropping them, after a fatal error).
  void close();
  // Seconds the workers spent on this evaluator's evaluations (the shape's search, for the finalists' time cap).
  double gpu_s() const;

 private:
  void gpu_thread(WorkerClient& worker, const DeviceLimits& device, FairLock* worker_lock);
  void add_totals(const JobResult& r);

  const JobContext ctx_;
  CompilePool& pool_;
  const std::string arch_;
  EvalTotals& totals_;
  double gpu_s_ = 0;  // guarded by totals_.mu
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<EvalJob> jobs_;
  std::deque<JobResult> results_;
  bool closing_ = false;
  bool woken_ = false;
  std::string fatal_;  // set when an evaluation could not be recorded
  std::vector<std::thread> threads_;
};

}  // namespace kf
