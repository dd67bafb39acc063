#include "campaign/campaign.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>

#include "campaign/current_results.hpp"
#include "campaign/evaluate_job.hpp"
#include "campaign/progress.hpp"
#include "campaign/sanitize.hpp"
#include "campaign/search_loop.hpp"
#include "campaign/seeding.hpp"
#include "campaign/side_by_side.hpp"
#include "compile/compiler.hpp"
#include "eval/worker_client.hpp"
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

// Workers: one per GPU. "--gpus all" starts device 0, 1, ... until one has no device.
std::vector<std::unique_ptr<WorkerClient>> start_workers(const CampaignOptions& o,
                                                         std::vector<DeviceLimits>& devices) {
  std::vector<std::unique_ptr<WorkerClient>> workers;
  std::vector<int> ids = o.gpus;
  const bool all = ids.empty();
  if (all) ids = {0};
  for (size_t i = 0; i < ids.size(); ++i) {
    auto argv = o.worker_argv;
    argv.push_back("--device");
    argv.push_back(std::to_string(ids[i]));
    auto w = std::make_unique<WorkerClient>(argv, o.eval_timeout_s);
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

// Work shared between the loop (which owns the strategy) and the GPU threads.
struct Queues {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<EvalJob> jobs;
  std::deque<JobResult> results;
  size_t in_flight = 0;  // queued or being evaluated
  bool closing = false;
  std::string fatal;  // set when an evaluation could not be recorded
};

struct Totals {
  std::mutex mu;
  double compile_s = 0, gpu_s = 0;
  size_t compiled = 0, cache_hits = 0;
};

void gpu_thread(WorkerClient& worker, const DeviceLimits& device, JobContext ctx, Queues& q,
                Totals& totals) {
  for (;;) {
    EvalJob job;
    {
      std::unique_lock lock(q.mu);
      q.cv.wait(lock, [&] { return !q.jobs.empty() || q.closing; });
      if (q.jobs.empty()) return;
      job = std::move(q.jobs.front());
      q.jobs.pop_front();
    }
    ctx.device = &device;
    JobResult r;
    try {
      r = evaluate_job(ctx, worker, std::move(job));
    } catch (const std::exception& e) {
      // The store or the spec failed, not the kernel: stop the campaign with the reason.
      std::lock_guard lock(q.mu);
      if (q.fatal.empty()) q.fatal = e.what();
      --q.in_flight;
      q.cv.notify_all();
      continue;
    }
    {
      std::lock_guard lock(totals.mu);
      totals.gpu_s += r.gpu_s;
      if (r.kernel_from_cache)
        ++totals.cache_hits;
      else if (r.compile_ms > 0) {
        totals.compile_s += r.compile_ms / 1000.0;
        ++totals.compiled;
      }
    }
    {
      std::lock_guard lock(q.mu);
      q.results.push_back(std::move(r));
      --q.in_flight;
    }
    q.cv.notify_all();
  }
}

// Re-measures the stored top-K of a shape side by side in one worker session.
std::vector<ShapeOutcome::Remeasured> remeasure_top(Store& store, std::mutex& store_mu,
                                                    const Family& family, const Shape& shape,
                                                    const DeviceLimits& device,
                                                    WorkerClient& worker, CubinCache& cache,
                                                    const CampaignOptions& o) {
  std::vector<EvaluationRecord> top;
  {
    std::lock_guard lock(store_mu);
    top = store.top(family.name, shape, device_key(device), static_cast<size_t>(o.remeasure_top_k));
  }
  if (top.size() < 2) return {};
  std::vector<Contender> contenders;
  for (const auto& e : top) {
    const Config c = complete_stored_config(family, e.config);
    contenders.push_back({to_string(c), c, {}});
  }
  SideBySideOptions options;
  options.timing = o.timing;
  options.seed = o.seed;
  options.compile_threads = 1;  // the top-K are in the cubin cache already
  const auto results = time_side_by_side(family, shape, device, worker, cache, contenders, options);
  std::vector<ShapeOutcome::Remeasured> out;
  for (size_t i = 0; i < results.size(); ++i)
    if (results[i].timing) out.push_back({contenders[i].config, *results[i].timing, false});
  if (out.empty()) return out;
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return a.timing.median_us < b.timing.median_us;
  });
  // A config ties with the winner when their 95% confidence intervals overlap.
  for (auto& r : out) r.tied_with_best = r.timing.ci_lo_us <= out.front().timing.ci_hi_us;
  return out;
}

// A campaign's evaluations as the search loop sees them: each config is rendered and handed
// to the compile pool, then queued for the GPU threads; results come back as they finish.
class LiveEvaluator final : public LoopEvaluator {
 public:
  LiveEvaluator(Queues& q, std::vector<std::thread>& threads, CompilePool& pool, const Family& family,
                const Shape& shape, const std::string& arch)
      : q_(q), threads_(threads), pool_(pool), family_(family), shape_(shape), arch_(arch) {}
  ~LiveEvaluator() override { close(); }

  void submit(const Config& c) override {
    EvalJob job;
    job.config = c;
    job.compiled = pool_.submit(render_variant(family_, c, shape_), arch_);
    {
      std::lock_guard lock(q_.mu);
      q_.jobs.push_back(std::move(job));
      ++q_.in_flight;
    }
    q_.cv.notify_all();
  }

  std::vector<LoopResult> collect(std::chrono::milliseconds wait) override {
    std::deque<JobResult> results;
    std::string fatal;
    {
      std::unique_lock lock(q_.mu);
      if (wait.count() > 0) q_.cv.wait_for(lock, wait, [&] { return !q_.results.empty() || !q_.fatal.empty(); });
      results.swap(q_.results);
      fatal = q_.fatal;
    }
    if (!fatal.empty()) {
      close();
      throw std::runtime_error(fatal);
    }
    std::vector<LoopResult> out;
    for (auto& r : results) out.push_back({std::move(r.observation), to_string(r.status), r.tflops});
    return out;
  }

  // Stops the GPU threads once the jobs queued are done (at once, dropping them, after a fatal error).
  void close() {
    {
      std::lock_guard lock(q_.mu);
      q_.closing = true;
      if (!q_.fatal.empty()) q_.jobs.clear();
    }
    q_.cv.notify_all();
    for (auto& t : threads_)
      if (t.joinable()) t.join();
  }

 private:
  Queues& q_;
  std::vector<std::thread>& threads_;
  CompilePool& pool_;
  const Family& family_;
  const Shape& shape_;
  std::string arch_;
};

struct ShapeRun {
  Store& store;
  std::mutex& store_mu;
  const Family& family;
  const CampaignOptions& o;
  int64_t campaign_id;
  CompilePool& pool;
  CubinCache& cache;
  std::vector<std::unique_ptr<WorkerClient>>& workers;
  const std::vector<DeviceLimits>& devices;
  Totals& totals;
  Clock::time_point campaign_start;
};

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

ShapeOutcome run_shape(ShapeRun& run, const Shape& shape, size_t shape_index, size_t shape_count) {
  const Family& family = run.family;
  const CampaignOptions& o = run.o;
  const DeviceLimits& device = run.devices.front();
  const DeviceKey dkey = device_key(device);
  const std::string arch = device.arch();
  ShapeOutcome outcome;
  outcome.shape = shape;

  const SearchSpace space = make_space(pin_params(family, o.fixed), shape, device);
  spdlog::info("{}: compiling the reference kernel", to_string(shape));
  const auto ref = compile_variant(render_reference(family, shape), arch, &run.cache);
  if (!ref.ok)
    throw std::runtime_error("reference kernel of " + family.name + " does not compile: " +
                             ref.log.substr(0, ref.log.find('\n')));

  // What the store knows: never re-run a recorded config whose kernel is still the one it would compile now;
  // one recorded with another kernel source (the family's template changed since) is stale and runs again.
  // Retry an interrupted one once.
  std::set<std::string> done_keys;
  std::vector<Observation> known;
  std::deque<Config> retries;
  size_t done_by_campaign = 0, stale = 0;
  {
    std::lock_guard lock(run.store_mu);
    KernelSourceCheck check(family, shape);
    std::set<std::string> stale_keys;
    for (const auto& e : run.store.evaluations(family.name, shape, dkey)) {
      if (e.status == Status::Interrupted) continue;
      const Config config = complete_stored_config(family, e.config);
      const std::string key = to_string(config);
      if (check.stale(e, config)) {
        stale_keys.insert(key);
        continue;
      }
      done_keys.insert(key);
      known.push_back({config, e.status == Status::Ok && e.timing ? std::optional<double>(e.timing->median_us)
                                                                  : std::nullopt});
      if (e.campaign_id == run.campaign_id) ++done_by_campaign;
    }
    for (const auto& key : stale_keys) stale += done_keys.count(key) ? 0 : 1;
    if (stale)
      spdlog::info("{}: {} recorded config(s) were measured with another kernel source; they run again",
                   to_string(shape), stale);
    for (const auto& [stored_key, n] : run.store.interrupted_counts(family.name, shape, dkey)) {
      const Config config = complete_stored_config(family, parse_assignment(stored_key));
      const std::string key = to_string(config);
      if (done_keys.count(key)) continue;
      if (n >= 2) {
        done_keys.insert(key);  // killed its worker twice: give up on it
        spdlog::warn("{} was interrupted {} times; not retried", key, n);
      } else {
        retries.push_back(config);
      }
    }
  }

  spdlog::info("{}: {} recorded result(s) for this shape; seeding ({}) and starting {}", to_string(shape),
               known.size(), o.seeding, o.strategy);
  StrategyContext sctx;
  sctx.space = &space;
  sctx.seed = o.seed + shape_index;
  sctx.known = known;
  {
    std::lock_guard lock(run.store_mu);
    sctx.seeds = seed_configs(run.store, family, shape, dkey, space, parse_seeding(o.seeding));
  }
  sctx.options = o.strategy_options;
  std::unique_ptr<Strategy> strategy;
  if (o.listed.empty()) {
    strategy = make_strategy(o.strategy, sctx);
  } else {
    const auto it = o.listed.find(to_string(shape));
    strategy = make_listed_strategy(it == o.listed.end() ? std::vector<Config>{} : it->second, sctx);
  }

  // The space is never counted: the strategy's running out of configs ends a shape whose
  // budget does not. Retries were dispatched (and counted) before the interruption: they
  // come on top.
  size_t allowed = std::numeric_limits<size_t>::max();
  if (o.budget.evals_per_shape)
    allowed = (o.budget.evals_per_shape > done_by_campaign ? o.budget.evals_per_shape - done_by_campaign : size_t{0}) +
              retries.size();
  Progress progress("[" + std::to_string(shape_index + 1) + "/" + std::to_string(shape_count) +
                        " " + to_string(shape) + "]",
                    progress_total(space, o, allowed, done_keys), o.quiet);

  Queues q;
  JobContext ctx{&run.store, &run.store_mu, &family, &shape, nullptr, run.campaign_id,
                 ref.cubin_path.string(), o.seed, o.timing};
  std::vector<std::thread> threads;
  for (size_t i = 0; i < run.workers.size(); ++i)
    threads.emplace_back(gpu_thread, std::ref(*run.workers[i]), std::cref(run.devices[i]), ctx,
                         std::ref(q), std::ref(run.totals));
  LiveEvaluator evaluator(q, threads, run.pool, family, shape, arch);

  LoopRules rules;
  // Keep enough compiles in flight that a GPU never waits for NVRTC.
  rules.depth = campaign_depth(run.workers.size(), o.compile_threads);
  rules.allowed = allowed;
  rules.plateau = o.budget.plateau;
  rules.stop = [&] {
    return (o.budget.time_s > 0 && seconds_since(run.campaign_start) >= o.budget.time_s) || g_stop_requested.load();
  };
  LoopHooks hooks;
  hooks.on_result = [&](const LoopResult& r) { progress.record(r.status, r.observation.time_us, r.tflops); };
  hooks.before_first_dispatch = [&] { spdlog::info("{}: compiling the first configs", to_string(shape)); };
  const LoopOutcome loop = run_search_loop(*strategy, evaluator, rules, {done_keys, retries}, hooks);
  outcome.evaluated = loop.evaluated;
  outcome.cut_short = loop.cut_short;
  evaluator.close();
  progress.finish();

  {
    std::lock_guard lock(run.store_mu);
    if (auto b = best_current(run.store, family, shape, dkey)) outcome.best = b->record;
  }
  if (o.remeasure_top_k > 1 && !g_stop_requested.load())
    outcome.remeasured = remeasure_top(run.store, run.store_mu, family, shape, device,
                                       *run.workers.front(), run.cache, o);
  if ((o.sanitize || family.sanitize) && !g_stop_requested.load()) {
    FinalistRun finalists{&run.store, &run.store_mu, &family, shape, &device, run.campaign_id, &run.cache,
                          ref.cubin_path.string(), o.seed, static_cast<size_t>(std::max(1, o.remeasure_top_k)),
                          SanitizeJob{find_compute_sanitizer(), o.worker_argv, o.gpus.empty() ? 0 : o.gpus.front(),
                                      o.sanitize_timeout_s, ""}};
    if (sanitize_finalists(finalists) > 0) {  // a failed finalist cannot be the winner
      std::lock_guard lock(run.store_mu);
      const auto b = best_current(run.store, family, shape, dkey);
      outcome.best = b ? std::optional(b->record) : std::nullopt;
    }
  }
  return outcome;
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
  Totals totals;
  ShapeRun run{store, store_mu, family, o, campaign_id, pool, cache, workers, devices, totals, start};

  CampaignOutcome out;
  out.campaign_id = campaign_id;
  for (size_t i = 0; i < shapes.size() && !g_stop_requested.load(); ++i) {
    if (o.budget.time_s > 0 && seconds_since(start) >= o.budget.time_s) break;
    out.shapes.push_back(run_shape(run, shapes[i], i, shapes.size()));
  }
  const bool stopped = g_stop_requested.load() || out.shapes.size() < shapes.size() ||
                       std::any_of(out.shapes.begin(), out.shapes.end(),
                                   [](const ShapeOutcome& s) { return s.cut_short; });
  out.status = stopped ? "stopped" : "done";
  store.set_campaign_status(campaign_id, out.status);
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
  auto workers = start_workers(options, devices);
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
  auto workers = start_workers(o, devices);
  store.set_campaign_status(campaign_id, "running");
  return run_recorded(store, family, campaign_id, rec->shapes, o, workers, devices);
}

}  // namespace kf
