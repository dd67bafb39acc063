#include "campaign/live_evaluator.hpp"

#include <stdexcept>

#include "compile/compiler.hpp"
#include "family/render.hpp"

namespace kf {

std::vector<std::unique_ptr<WorkerClient>> start_workers(const std::vector<std::string>& worker_argv,
                                                         const std::vector<int>& gpus, double eval_timeout_s,
                                                         std::vector<DeviceLimits>& devices) {
  std::vector<std::unique_ptr<WorkerClient>> workers;
  std::vector<int> ids = gpus;
  const bool all = ids.empty();
  if (all) ids = {0};
  for (size_t i = 0; i < ids.size(); ++i) {
    auto argv = worker_argv;
    argv.push_back("--device");
    argv.push_back(std::to_string(ids[i]));
    auto w = std::make_unique<WorkerClient>(argv, eval_timeout_s);
    try {
      devices.push_back(w->device());
    } catch (const std::exception& e) {
      if (all && !workers.empty()) break;  // past the last visible GPU
      throw std::runtime_error(std::string(e.what()));
    }
    workers.push_back(std::move(w));
    if (all && ids.size() < 64) ids.push_back(ids.back() + 1);
  }
  return workers;
}

LiveEvaluator::LiveEvaluator(std::vector<std::unique_ptr<WorkerClient>>& workers,
                             const std::vector<DeviceLimits>& devices, const JobContext& ctx, CompilePool& pool,
                             const std::string& arch, EvalTotals& totals,
                             const std::vector<std::unique_ptr<FairLock>>& worker_locks)
    : ctx_(ctx), pool_(pool), arch_(arch), totals_(totals) {
  for (size_t i = 0; i < workers.size(); ++i) {
    FairLock* lock = i < worker_locks.size() ? worker_locks[i].get() : nullptr;
    threads_.emplace_back([this, &w = *workers[i], &d = devices[i], lock] { gpu_thread(w, d, lock); });
  }
}

void LiveEvaluator::submit(const Config& c) {
  EvalJob job;
  job.config = c;
  job.compiled = pool_.submit(render_variant(*ctx_.family, c, *ctx_.shape), arch_);
  {
    std::lock_guard lock(mu_);
    jobs_.push_back(std::move(job));
  }
  cv_.notify_all();
}

std::vector<LoopResult> LiveEvaluator::collect(std::chrono::milliseconds wait) {
  std::deque<JobResult> results;
  std::string fatal;
  {
    std::unique_lock lock(mu_);
    if (wait.count() > 0)
      cv_.wait_for(lock, wait, [&] { return !results_.empty() || !fatal_.empty() || woken_; });
    woken_ = false;
    results.swap(results_);
    fatal = fatal_;
  }
  if (!fatal.empty()) {
    close();
    throw std::runtime_error(fatal);
  }
  std::vector<LoopResult> out;
  for (auto& r : results) out.push_back({std::move(r.observation), to_string(r.status), r.tflops, r.time_us});
  return out;
}

void LiveEvaluator::wake() {
  {
    std::lock_guard lock(mu_);
    woken_ = true;
  }
  cv_.notify_all();
}

void LiveEvaluator::close() {
  {
    std::lock_guard lock(mu_);
    closing_ = true;
    if (!fatal_.empty()) jobs_.clear();
  }
  cv_.notify_all();
  for (auto& t : threads_)
    if (t.joinable()) t.join();
}

void LiveEvaluator::add_totals(const JobResult& r) {
  std::lock_guard lock(totals_.mu);
  totals_.gpu_s += r.gpu_s;
  gpu_s_ += r.gpu_s;
  if (r.kernel_from_cache) {
    ++totals_.cache_hits;
  } else if (r.compile_ms > 0) {
    totals_.compile_s += r.compile_ms / 1000.0;
    ++totals_.compiled;
  }
}

double LiveEvaluator::gpu_s() const {
  std::lock_guard lock(totals_.mu);
  return gpu_s_;
}

void LiveEvaluator::gpu_thread(WorkerClient& worker, const DeviceLimits& device, FairLock* worker_lock) {
  JobContext ctx = ctx_;
  ctx.device = &device;
  for (;;) {
    EvalJob job;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return !jobs_.empty() || closing_; });
      if (jobs_.empty()) return;
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    JobResult r;
    try {
      std::unique_lock<FairLock> held;  // served in order: no shape starves another
      if (worker_lock) held = std::unique_lock(*worker_lock);
      r = evaluate_job(ctx, worker, std::move(job));
    } catch (const std::exception& e) {
      // The store or the spec failed, not the kernel: stop the campaign with the reason.
      std::lock_guard lock(mu_);
      if (fatal_.empty()) fatal_ = e.what();
      cv_.notify_all();
      continue;
    }
    add_totals(r);
    {
      std::lock_guard lock(mu_);
      results_.push_back(std::move(r));
    }
    cv_.notify_all();
  }
}

}  // namespace kf
