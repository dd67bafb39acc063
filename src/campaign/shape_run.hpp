// What one run of a campaign shares across its shapes: the store, the family and options, the
// compile pool and cubin cache, one worker per GPU and its device, the totals, the start time, and the
// workers' locks when several shapes search at once.
#pragma once
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "campaign/campaign.hpp"
#include "campaign/fair_lock.hpp"
#include "campaign/live_evaluator.hpp"

namespace kf {

class CompilePool;
class CubinCache;

struct ShapeRun {
  Store& store;
  std::mutex& store_mu;
  const Family& family;
  const CampaignOptions& o;
  int64_t campaign_id;
  CompilePool& pool;
  CubinCache& cache;
  std::vector<std::unique_ptr<WorkerClient>>& workers;
  const std::vector<DeviceLimits>& devices;  // devices[i] is workers[i]'s
  EvalTotals& totals;
  std::chrono::steady_clock::time_point campaign_start;
  // The searches' wall-time budget from campaign_start (seconds; 0: none): --time less the finalists' reserve.
  double search_time_s = 0;
  // One per worker when several shapes' evaluators share the workers (suite_run.cpp); empty otherwise.
  std::vector<std::unique_ptr<FairLock>> worker_locks = {};
};

}  // namespace kf
