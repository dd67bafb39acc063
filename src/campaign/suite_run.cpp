#include "campaign/suite_run.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

#include "campaign/shape_search.hpp"
#include "compile/compiler.hpp"
#include "campaign/suite_schedule.hpp"

namespace kf {

namespace {

// What the schedule starts from: this campaign's evaluations (a resume), the best current time on this
// device, and the fastest stored baseline.
SuiteShapeStart shape_start(ShapeRun& run, const ShapeSearch& s) {
  SuiteShapeStart start;
  start.evaluated = s.known.done_by_campaign;
  for (const auto& o : s.known.known)
    if (o.time_us && (!start.best_us || *o.time_us < *start.best_us)) start.best_us = o.time_us;
  std::lock_guard lock(run.store_mu);
  for (const auto& b : typical_baselines(run.store.baselines(run.family.name, s.shape, device_key(run.devices.front()))))
    if (b.median_us > 0 && (!start.baseline_us || b.median_us < *start.baseline_us)) start.baseline_us = b.median_us;
  return start;
}

}  // namespace

std::vector<ShapeOutcome> run_suite(ShapeRun& run, const std::vector<Shape>& shapes) {
  const size_t n = shapes.size();
  for (size_t i = 0; i < run.workers.size(); ++i) run.worker_locks.push_back(std::make_unique<FairLock>());

  // Reference kernels compile and strategies seed for all shapes at once.
  std::vector<std::unique_ptr<ShapeSearch>> searches(n);
  for_each_shape(n, [&](size_t i) { searches[i] = prepare_shape_search(run, shapes[i], i, n); });

  std::vector<SuiteShapeStart> starts;
  for (const auto& s : searches) starts.push_back(shape_start(run, *s));
  // The pipeline is sized to the compile pool (every NVRTC thread busy), each shape held to the depth it
  // would have searched with alone.
  SuiteScheduleOptions options;
  options.max_per_shape = campaign_depth(run.workers.size(), run.o.compile_threads);
  const size_t slots = std::max(options.max_per_shape, 2 * run.workers.size() + run.pool.threads());
  SuiteSchedule schedule(std::move(starts), slots, options);
  spdlog::info("suite of {} shapes searched at once: {} configs in flight, shared by expected gain", n, slots);

  size_t total = 0;
  for (const auto& s : searches)
    total = s->allowed == std::numeric_limits<size_t>::max() || total == std::numeric_limits<size_t>::max()
                ? std::numeric_limits<size_t>::max()
                : total + s->allowed;
  Progress progress("[suite of " + std::to_string(n) + "]",
                    Progress::Total{total == std::numeric_limits<size_t>::max() ? 0 : total, false}, run.o.quiet,
                    run.campaign_start);
  progress.set_detail([&schedule] { return schedule.line(); });

  std::vector<LoopOutcome> loops(n);
  for_each_shape(n, [&](size_t i) {
    const SuiteSlot slot{&schedule, i};
    try {
      loops[i] = search_shape(run, *searches[i], progress, &slot);
    } catch (...) {
      schedule.finished(i);
      throw;
    }
    schedule.finished(i);
  });
  progress.finish();
  for (size_t i = 0; i < n; ++i)
    spdlog::info("{}: {} evaluations ({})", to_string(shapes[i]), loops[i].evaluated, to_string(loops[i].stopped_by));

  std::vector<ShapeOutcome> outcomes;
  for (size_t i = 0; i < n; ++i) outcomes.push_back(conclude_shape(run, *searches[i], loops[i]));
  return outcomes;
}

}  // namespace kf
