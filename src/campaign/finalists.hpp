// The end of a shape's search: the winner is the fastest stored result of a current kernel; the
// top K are re-measured side by side in one worker session (ties: overlapping CIs), and with
// --sanitize the finalists run under compute-sanitizer, a failed one losing the win.
#pragma once
#include <cstdint>
#include <mutex>
#include <string>

#include "campaign/campaign.hpp"

namespace kf {

class CubinCache;
class WorkerClient;

struct ShapeFinish {
  Store& store;
  std::mutex& store_mu;
  const Family& family;
  const Shape& shape;
  const DeviceLimits& device;
  WorkerClient& worker;  // the first GPU's: the re-measure runs there
  CubinCache& cache;
  const CampaignOptions& options;
  int64_t campaign_id = 0;
  std::string ref_cubin;
};

// Re-measures the stored top-K of the shape side by side, fastest first (empty below two).
std::vector<ShapeOutcome::Remeasured> remeasure_top(const ShapeFinish& f);

// Fills outcome.best and outcome.remeasured; skips the re-measure and the sanitizer after Ctrl-C.
void finish_shape(const ShapeFinish& f, ShapeOutcome& outcome);

}  // namespace kf
