// One evaluation on the orchestrator side: wait for the compile, reject what cannot run,
// write the attempt, ask the worker, commit the evaluation.
#pragma once
#include <future>
#include <mutex>
#include <string>

#include "core/objective.hpp"
#include "compile/compiler.hpp"
#include "eval/client/worker_client.hpp"
#include "store/store.hpp"
#include "strategy/strategy.hpp"

namespace kf {

struct EvalJob {
  Config config;
  std::future<CompiledKernel> compiled;
};

struct JobResult {
  Observation observation;  // the objective's value (time_us holds it, whatever the unit)
  std::optional<double> time_us;  // the launch's time
  Status status = Status::Ok;
  double tflops = 0;
  double gpu_s = 0;       // wall time spent in the worker
  double compile_ms = 0;  // NVRTC time when compiled now (0 when cached)
  bool kernel_from_cache = false;
};

// Where evaluate_job records what it does, when not straight into the store: a distributed
// agent records under its lease on the work item (src/distributed/agent.cpp), and a write whose lease
// was lost throws (the result is discarded: another agent owns the item now).
class JobRecorder {
 public:
  virtual ~JobRecorder() = default;
  virtual int64_t add_evaluation(const EvaluationRecord& e) = 0;  // no attempt (not dispatched)
  virtual int64_t begin_attempt(const EvaluationRecord& what) = 0;  // before dispatch
  virtual int64_t finish_attempt(int64_t attempt, const EvaluationRecord& e) = 0;
};

struct JobContext {
  Store* store = nullptr;
  std::mutex* store_mu = nullptr;
  const Family* family = nullptr;
  const Shape* shape = nullptr;
  const DeviceLimits* device = nullptr;
  int64_t campaign_id = 0;
  std::string ref_cubin;
  uint64_t seed = 1;
  TimingOptions timing;
  JobRecorder* recorder = nullptr;  // null: the store, under store_mu
  Objective objective = Objective::Time;  // what the strategy is told (the store keeps every measurement)
};

// Why a compiled kernel cannot launch on the device (registers or shared memory), or "".
std::string resource_violation(const KernelInfo& k, const ResolvedLaunch& launch,
                               const DeviceLimits& d);

JobResult evaluate_job(const JobContext& ctx, WorkerClient& worker, EvalJob job);

}  // namespace kf
