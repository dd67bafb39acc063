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
#include "compile/compiler.hpp"
#include "family/render.hpp"
#include "strategy/strategy.hpp"

namespace kf {

std::atomic<bool> g_stop_requested{false};

size_t campaign_depth(size_t gpus, size_t compile_threads) { return gpus * 2 + std::max<size_t>(2, compile_threads); }

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// The family with pinned parameters reduced to their one value (validated against the domain).
Family pin_params(const Family& family, const Config& fixed) {
  Family pinned = family;
  for (const auto& [name, value] : fixed) {
    auto it = std::find_if(pinned.params.begin(), pinned.params.end(),
                           [&](const ParamSpec& p) { return p.name == name; });
    if (it == pinned.params.end()) throw std::runtime_error("--fix: unknown parameter '" + name + "'");
    if (std::find(it->values.begin(), it->values.end(), value) == it->values.end())
      throw std::runtime_error("--fix: " + name + "=" + to_string(value) + " is not in its domain");
    it->values = {value};
    it->weights.clear();  // a pin overrides the prior
  }
  return pinned;
}

// The progress line's total: the evaluation budget, or for a budget-less exhaustive campaign
// an estimate of the valid configs left (the space's own count would take minutes).
Progress::Total progress_total(const SearchSpace& space, const CampaignOptions& o, size_t allowed,
                               const std::set<std::string>& done_keys) {
  if (allowed != std::numeric_limits<size_t>::max()) return {allowed, false};
  if (o.strategy != "exhaustive") return {0, false};
  std::mt19937_64 rng(o.seed);
  const double estimate = space.estimate_valid(rng, 200);
  // The store may know configs outside this (pinned) space: count only the space's own.
  size_t done_here = 0;
  for (const auto& key : done_keys) done_here += space.valid(parse_assignment(key)) ? 1 : 0;
  const double left = std::max(0.0, estimate - static_cast<double>(done_here));
  return {static_cast<size_t>(std::llround(left)), true};
}

// The space is never counted: the strategy's running out of configs ends a shape whose budget
// does not. Retries were dispatched (and counted) before the interruption: they come on top.
size_t evaluations_allowed(const CampaignOptions& o, const KnownResults& known) {
  if (!o.budget.evals_per_shape) return std::numeric_limits<size_t>::max();
  const size_t per_shape = o.budget.evals_per_shape;
  return (per_shape > known.done_by_campaign ? per_shape - known.done_by_campaign : size_t{0}) +
         known.retries.size();
}

std::string compile_reference(ShapeRun& run, const Shape& shape, const std::string& arch) {
  spdlog::info("{}: compiling the reference kernel", to_string(shape));
  const auto ref = compile_variant(render_reference(run.family, shape), arch, &run.cache);
  if (!ref.ok)
    throw std::runtime_error("reference kernel of " + run.family.name + " does not compile: " +
                             ref.log.substr(0, ref.log.find('\n')));
  return ref.cubin_path.string();
}

// The shape's strategy, told what the store knows and seeded as --seeding says (or the
// configs listed for it: `kforge refresh`).
std::unique_ptr<Strategy> shape_strategy(ShapeRun& run, const Shape& shape, size_t shape_index,
                                         const SearchSpace& space, const KnownResults& known) {
  const CampaignOptions& o = run.o;
  spdlog::info("{}: {} recorded result(s) for this shape; seeding ({}) and starting {}", to_string(shape),
               known.known.size(), o.seeding, o.strategy);
  StrategyContext sctx;
  sctx.space = &space;
  sctx.seed = o.seed + shape_index;
  sctx.known = known.known;
  {
    std::lock_guard lock(run.store_mu);
    sctx.seeds = seed_configs(run.store, run.family, shape, device_key(run.devices.front()), space,
                              parse_seeding(o.seeding));
  }
  sctx.options = o.strategy_options;
  if (o.listed.empty()) return make_strategy(o.strategy, sctx);
  const auto it = o.listed.find(to_string(shape));
  return make_listed_strategy(it == o.listed.end() ? std::vector<Config>{} : it->second, sctx);
}

// The search proper: the strategy's configs through the compile pool and the GPU threads until
// the stop rule (budget, plateau, campaign time, Ctrl-C, exhaustion) ends it.
LoopOutcome search_shape(ShapeRun& run, const Shape& shape, const std::string& ref_cubin, Strategy& strategy,
                         KnownResults known, size_t allowed, Progress& progress) {
  const CampaignOptions& o = run.o;
  JobContext ctx{&run.store, &run.store_mu, &run.family, &shape, nullptr, run.campaign_id,
                 ref_cubin, o.seed, o.timing};
  LiveEvaluator live(run.workers, run.devices, ctx, run.pool, run.devices.front().arch(), run.totals);
  const auto remote = o.remote ? o.remote->evaluator(run.family, shape) : nullptr;  // a distributed campaign
  LoopEvaluator& evaluator = remote ? *remote : live;
  LoopRules rules;
  // Keep enough compiles in flight that a GPU never waits for NVRTC.
  rules.depth = o.remote ? o.remote->depth() : campaign_depth(run.workers.size(), o.compile_threads);
  rules.stop.budget(allowed).plateau(o.budget.plateau).time(run.campaign_start, o.budget.time_s)
      .interrupt(g_stop_requested);
  LoopHooks hooks;
  hooks.on_result = [&](const LoopResult& r) { progress.record(r.status, r.observation.time_us, r.tflops); };
  hooks.before_first_dispatch = [&] { spdlog::info("{}: compiling the first configs", to_string(shape)); };
  const LoopOutcome loop =
      run_search_loop(strategy, evaluator, rules, {std::move(known.done_keys), std::move(known.retries)}, hooks);
  live.close();
  return loop;
}

ShapeOutcome run_shape(ShapeRun& run, const Shape& shape, size_t shape_index, size_t shape_count) {
  const DeviceLimits& device = run.devices.front();
  const SearchSpace space = make_space(pin_params(run.family, run.o.fixed), shape, device);
  // A distributed campaign's agents compile the reference themselves.
  const std::string ref_cubin = run.o.remote ? "" : compile_reference(run, shape, device.arch());
  KnownResults known;
  {
    std::lock_guard lock(run.store_mu);
    known = known_results(run.store, run.family, shape, device_key(device), run.campaign_id);
  }
  const auto strategy = shape_strategy(run, shape, shape_index, space, known);
  const size_t allowed = evaluations_allowed(run.o, known);
  Progress progress("[" + std::to_string(shape_index + 1) + "/" + std::to_string(shape_count) + " " +
                        to_string(shape) + "]",
                    progress_total(space, run.o, allowed, known.done_keys), run.o.quiet, run.campaign_start);
  const LoopOutcome loop = search_shape(run, shape, ref_cubin, *strategy, std::move(known), allowed, progress);
  progress.finish();

  ShapeOutcome outcome;
  outcome.shape = shape;
  outcome.evaluated = loop.evaluated;
  outcome.cut_short = loop.cut_short();
  if (!run.o.remote) finish_shape(run, shape, ref_cubin, outcome);  // re-measure, sanitizer: a local GPU
  return outcome;
}

// A distributed campaign's shapes all search at once, each with its own strategy, so that every
// agent finds work (a suite spreads over the agents). A shape that fails stops the others.
std::vector<ShapeOutcome> run_shapes_side_by_side(ShapeRun& run, const std::vector<Shape>& shapes) {
  std::vector<ShapeOutcome> outcomes(shapes.size());
  std::vector<std::string> failures(shapes.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < shapes.size(); ++i)
    threads.emplace_back([&, i] {
      try {
        outcomes[i] = run_shape(run, shapes[i], i, shapes.size());
      } catch (const std::exception& e) {
        failures[i] = e.what();
        g_stop_requested = true;
      }
    });
  for (auto& t : threads) t.join();
  for (const auto& f : failures)
    if (!f.empty()) throw std::runtime_error(f);
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

  CampaignOutcome out;
  out.campaign_id = campaign_id;
  if (o.remote) {
    out.shapes = run_shapes_side_by_side(run, shapes);
  } else {
    for (size_t i = 0; i < shapes.size() && !g_stop_requested.load(); ++i) {
      if (o.budget.time_s > 0 && seconds_since(start) >= o.budget.time_s) break;
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
