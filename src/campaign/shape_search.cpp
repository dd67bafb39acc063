#include "campaign/shape_search.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <limits>
#include <random>
#include <set>
#include <stdexcept>
#include <thread>

#include "campaign/finalists.hpp"
#include "campaign/live_evaluator.hpp"
#include "campaign/seeding.hpp"
#include "campaign/suite_schedule.hpp"
#include "compile/compiler.hpp"
#include "family/render.hpp"

namespace kf {

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

namespace {

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
std::unique_ptr<Strategy> shape_strategy(ShapeRun& run, const ShapeSearch& s) {
  const CampaignOptions& o = run.o;
  spdlog::info("{}: {} recorded result(s) for this shape; seeding ({}) and starting {}", to_string(s.shape),
               s.known.known.size(), o.seeding, o.strategy);
  StrategyContext sctx;
  sctx.space = &s.space;
  sctx.seed = o.seed + s.index;
  sctx.known = s.known.known;
  {
    std::lock_guard lock(run.store_mu);
    sctx.seeds = seed_configs(run.store, run.family, s.shape, device_key(run.devices.front()), s.space,
                              parse_seeding(o.seeding));
  }
  sctx.options = o.strategy_options;
  if (o.listed.empty()) return make_strategy(o.strategy, sctx);
  const auto it = o.listed.find(to_string(s.shape));
  return make_listed_strategy(it == o.listed.end() ? std::vector<Config>{} : it->second, sctx);
}

}  // namespace

std::unique_ptr<ShapeSearch> prepare_shape_search(ShapeRun& run, const Shape& shape, size_t index, size_t count) {
  const DeviceLimits& device = run.devices.front();
  auto s = std::make_unique<ShapeSearch>(shape, index, count, make_space(pin_params(run.family, run.o.fixed), shape, device));
  // A distributed campaign's agents compile the reference themselves.
  if (!run.o.remote) s->ref_cubin = compile_reference(run, shape, device.arch());
  {
    std::lock_guard lock(run.store_mu);
    s->known = known_results(run.store, run.family, shape, device_key(device), run.o.objective, run.campaign_id);
  }
  s->strategy = shape_strategy(run, *s);
  s->allowed = evaluations_allowed(run.o, s->known);
  return s;
}

Progress shape_progress(const ShapeRun& run, const ShapeSearch& s) {
  return Progress("[" + std::to_string(s.index + 1) + "/" + std::to_string(s.count) + " " + to_string(s.shape) + "]",
                  progress_total(s.space, run.o, s.allowed, s.known.done_keys), run.o.quiet, run.campaign_start);
}

// Runs f(i) for every shape in its own thread; the first failure stops the others (as Ctrl-C would) and
// is rethrown once all have ended.
void for_each_shape(size_t n, const std::function<void(size_t)>& f) {
  std::vector<std::string> failures(n);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < n; ++i)
    threads.emplace_back([&, i] {
      try {
        f(i);
      } catch (const std::exception& e) {
        failures[i] = e.what();
        g_stop_requested = true;
      }
    });
  for (auto& t : threads) t.join();
  for (const auto& msg : failures)
    if (!msg.empty()) throw std::runtime_error(msg);
}

LoopOutcome search_shape(ShapeRun& run, ShapeSearch& s, Progress& progress, const SuiteSlot* slot) {
  const CampaignOptions& o = run.o;
  JobContext ctx{&run.store, &run.store_mu, &run.family, &s.shape, nullptr, run.campaign_id,
                 s.ref_cubin, o.seed, o.timing};
  ctx.objective = o.objective;
  LiveEvaluator live(run.workers, run.devices, ctx, run.pool, run.devices.front().arch(), run.totals,
                     run.worker_locks);
  const auto remote = o.remote ? o.remote->evaluator(run.family, s.shape) : nullptr;  // a distributed campaign
  LoopEvaluator& evaluator = remote ? *remote : live;
  LoopRules rules;
  // Keep enough compiles in flight that a GPU never waits for NVRTC.
  rules.depth = o.remote ? o.remote->depth() : campaign_depth(run.workers.size(), o.compile_threads);
  rules.stop.budget(s.allowed).plateau(o.budget.plateau).time(run.campaign_start, run.search_time_s)
      .interrupt(g_stop_requested);
  if (slot) {
    rules.stop.add(std::make_unique<SuiteQuota>(*slot->schedule, slot->index));
    slot->schedule->on_grow(slot->index, [&live] { live.wake(); });
  }
  LoopHooks hooks;
  hooks.on_result = [&](const LoopResult& r) {
    progress.record(r.status, r.time_us, r.tflops);
    if (slot) slot->schedule->record(slot->index, r.observation.time_us);
  };
  hooks.before_first_dispatch = [&] { spdlog::info("{}: compiling the first configs", to_string(s.shape)); };
  KnownResults& known = s.known;
  const LoopOutcome loop =
      run_search_loop(*s.strategy, evaluator, rules, {std::move(known.done_keys), std::move(known.retries)}, hooks);
  if (slot) slot->schedule->on_grow(slot->index, {});
  live.close();
  s.search_s = live.gpu_s();
  return loop;
}

ShapeOutcome conclude_shape(ShapeRun& run, const ShapeSearch& s, const LoopOutcome& loop) {
  ShapeOutcome outcome;
  outcome.shape = s.shape;
  outcome.evaluated = loop.evaluated;
  outcome.cut_short = loop.cut_short();
  if (!run.o.remote) finish_shape(run, s.shape, s.ref_cubin, s.search_s, outcome);  // re-measure, sanitizer: a local GPU
  return outcome;
}

}  // namespace kf
