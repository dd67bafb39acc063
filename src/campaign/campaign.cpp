#include "campaign/campaign.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <mutex>
#include <random>
#include <set>
#include <stdexcept>
#include <thread>

#include "campaign/finalists.hpp"
#include "campaign/known_results.hpp"
#include "campaign/live_evaluator.hpp"
#include "campaign/progress.hpp"
#include "campaign/sanitize.hpp"
#include "campaign/search_loop.hpp"
#include "campaign/seeding.hpp"
#include "campaign/shape_run.hpp"
#include "campaign/shape_search.hpp"
#include "campaign/suite_run.hpp"
#include "compile/compiler.hpp"
#include "strategy/strategy.hpp"

namespace kf {

std::atomic<bool> g_stop_requested{false};

size_t campaign_depth(size_t gpus, size_t compile_threads) { return gpus * 2 + std::max<size_t>(2, compile_threads); }

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// One shape after another (a single shape, or --schedule sequential): each searched, then concluded.
ShapeOutcome run_shape(ShapeRun& run, const Shape& shape, size_t shape_index, size_t shape_count) {
  const auto search = prepare_shape_search(run, shape, shape_index, shape_count);
  Progress progress = shape_progress(run, *search);
  const LoopOutcome loop = search_shape(run, *search, progress);
  progress.finish();
  return conclude_shape(run, *search, loop);
}

// A distributed campaign's shapes all search at once, each with its own strategy, so that every
// agent finds work (a suite spreads over the agents). A shape that fails stops the others.
std::vector<ShapeOutcome> run_shapes_side_by_side(ShapeRun& run, const std::vector<Shape>& shapes) {
  std::vector<ShapeOutcome> outcomes(shapes.size());
  for_each_shape(shapes.size(), [&](size_t i) { outcomes[i] = run_shape(run, shapes[i], i, shapes.size()); });
  return outcomes;
}

CampaignOutcome run_recorded(Store& store, const Family& family, int64_t campaign_id,
                             const std::vector<Shape>& shapes, const CampaignOptions& o,
                             std::vector<std::unique_ptr<WorkerClient>>& workers,
                             const std::vector<DeviceLimits>& devices) {
  const auto start = Clock::now();
  CubinCache cache(o.cache_dir);
  const size_t threads =
      o.compile_threads ? o.compile_threads : std::max(1u, std::thread::hardware_concurrency());
  CompilePool pool(threads, &cache);
  std::mutex store_mu;
  EvalTotals totals;
  ShapeRun run{store, store_mu, family, o, campaign_id, pool, cache, workers, devices, totals, start};
  if (o.budget.time_s > 0) run.search_time_s = o.budget.time_s - finalist_reserve_s(o, shapes.size());

  CampaignOutcome out;
  out.campaign_id = campaign_id;
  if (o.remote) {
    out.shapes = run_shapes_side_by_side(run, shapes);
  } else if (shapes.size() > 1 && o.schedule == "interleave") {
    out.shapes = run_suite(run, shapes);
  } else {
    for (size_t i = 0; i < shapes.size() && !g_stop_requested.load(); ++i) {
      if (run.search_time_s > 0 && seconds_since(start) >= run.search_time_s) break;
      out.shapes.push_back(run_shape(run, shapes[i], i, shapes.size()));
    }
  }
  const bool stopped = g_stop_requested.load() || out.shapes.size() < shapes.size() ||
                       std::any_of(out.shapes.begin(), out.shapes.end(),
                                   [](const ShapeOutcome& s) { return s.cut_short; });
  out.status = stopped ? "stopped" : "done";
  store.set_campaign_status(campaign_id, out.status);
  if (o.remote) o.remote->finished(out.status);
  out.wall_s = seconds_since(start);
  out.compile_s = totals.compile_s;
  out.gpu_s = totals.gpu_s;
  out.compiled = totals.compiled;
  out.cache_hits = totals.cache_hits;
  out.status_counts = store.status_counts(campaign_id);
  return out;
}

}  // namespace

CampaignOutcome run_campaign(Store& store, const Family& family, const std::vector<Shape>& shapes,
                             const CampaignOptions& options) {
  if (shapes.empty()) throw std::runtime_error("no shapes to search");
  const auto names = strategy_names();  // an unknown name fails before anything runs
  if (options.listed.empty() && std::find(names.begin(), names.end(), options.strategy) == names.end()) {
    std::string known;
    for (const auto& n : names) known += (known.empty() ? "" : ", ") + n;
    throw std::runtime_error("unknown strategy '" + options.strategy + "' (known: " + known + ")");
  }
  pin_params(family, options.fixed);  // a bad --fix fails before anything runs
  parse_seeding(options.seeding);     // so does a bad --seeding
  if (options.schedule != "interleave" && options.schedule != "sequential")
    throw std::runtime_error("unknown schedule '" + options.schedule + "' (known: interleave, sequential)");
  if (options.sanitize || family.sanitize) find_compute_sanitizer();  // and a missing compute-sanitizer
  std::vector<DeviceLimits> devices;
  std::vector<std::unique_ptr<WorkerClient>> workers;
  if (options.remote)
    devices.push_back(options.remote->device());
  else
    workers = start_workers(options.worker_argv, options.gpus, options.eval_timeout_s, devices);
  CampaignRecord rec;
  rec.family = family.name;
  rec.strategy = options.strategy;
  rec.seed = options.seed;
  rec.shapes = shapes;
  rec.budget = {{"evals", options.budget.evals_per_shape},
                {"time_s", options.budget.time_s},
                {"plateau", options.budget.plateau}};
  rec.options = to_json(options);
  rec.status = "running";
  rec.device = device_key(devices.front());
  const int64_t id = store.create_campaign(rec);
  if (options.remote) options.remote->started(id, family.name, rec.options);
  spdlog::info("campaign {}: {} on {} shape(s), strategy {}, {} GPU(s): {}", id, family.name,
               shapes.size(), options.strategy, workers.size(), devices.front().name);
  return run_recorded(store, family, id, shapes, options, workers, devices);
}

CampaignOutcome resume_campaign(Store& store, const Family& family, int64_t campaign_id,
                                const CampaignOptions& overrides) {
  const auto rec = store.campaign(campaign_id);
  if (!rec) throw std::runtime_error("no campaign " + std::to_string(campaign_id));
  if (rec->family != family.name)
    throw std::runtime_error("campaign " + std::to_string(campaign_id) + " is of family " +
                             rec->family);
  CampaignOptions o = campaign_options_from_json(rec->options);
  // Where to find things may differ on this machine; what to search may not.
  o.worker_argv = overrides.worker_argv;
  o.cache_dir = overrides.cache_dir;
  o.quiet = overrides.quiet;
  if (!overrides.gpus.empty()) o.gpus = overrides.gpus;
  if (overrides.budget.time_s > 0) o.budget.time_s = overrides.budget.time_s;
  const auto closed = store.close_interrupted(campaign_id);
  if (!closed.empty())
    spdlog::warn("campaign {}: {} evaluation(s) were in flight when it stopped; each is retried once",
                 campaign_id, closed.size());
  std::vector<DeviceLimits> devices;
  auto workers = start_workers(o.worker_argv, o.gpus, o.eval_timeout_s, devices);
  store.set_campaign_status(campaign_id, "running");
  return run_recorded(store, family, campaign_id, rec->shapes, o, workers, devices);
}

}  // namespace kf
