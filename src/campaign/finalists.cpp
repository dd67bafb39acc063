#include "campaign/finalists.hpp"

#include <algorithm>

#include "campaign/sanitize.hpp"
#include "sidebyside/side_by_side.hpp"
#include "winner/current_results.hpp"
#include "winner/finalist_ranking.hpp"

namespace kf {

double finalist_cap_s(const CampaignOptions& o, double search_s) {
  return std::max(o.finalist_min_s, o.finalist_share * std::max(0.0, search_s));
}

double finalist_reserve_s(const CampaignOptions& o, size_t shapes) {
  if (o.budget.time_s <= 0 || o.remeasure_top_k < 2 || o.objective != Objective::Time) return 0;
  const double want = static_cast<double>(shapes) * o.finalist_min_s + o.finalist_share * o.budget.time_s;
  return std::min(want, 0.25 * o.budget.time_s);
}

Finalists remeasure_top(const ShapeRun& run, const Shape& shape, double search_s) {
  const CampaignOptions& o = run.o;
  const DeviceLimits& device = run.devices.front();
  std::vector<EvaluationRecord> top;
  {
    std::lock_guard lock(run.store_mu);
    top = run.store.top(run.family.name, shape, device_key(device), static_cast<size_t>(o.remeasure_top_k));
  }
  if (top.size() < 2) return {};
  std::vector<Contender> contenders;
  for (const auto& e : top) {
    const Config c = complete_stored_config(run.family, e.config);
    contenders.push_back({to_string(c), c, {}});
  }
  SideBySideOptions options;
  options.until_decided = o.finalist_rounds <= 0;
  options.rounds = options.until_decided ? kMaxAutoRounds : o.finalist_rounds;
  options.max_s = options.until_decided ? finalist_cap_s(o, search_s) : 0;
  options.timing = o.timing;
  options.seed = o.seed;
  options.compile_threads = 1;  // the top-K are in the cubin cache already
  const SideBySideRun sbs =
      time_side_by_side(run.family, shape, device, *run.workers.front(), run.cache, contenders, options);
  const auto& results = sbs.contenders;
  Finalists out;
  out.how = {sbs.rounds, sbs.stop, sbs.wall_s, options.max_s};
  std::vector<size_t> timed;
  for (size_t i = 0; i < results.size(); ++i)
    if (results[i].timing) timed.push_back(i);
  std::stable_sort(timed.begin(), timed.end(), [&](size_t a, size_t b) {
    return results[a].timing->median_us < results[b].timing->median_us;
  });
  std::vector<RankedConfig> ranking;
  for (size_t i : timed) {
    const TimingStats& t = *results[i].timing;
    out.order.push_back({contenders[i].config, t, false, results[i].rounds});
    ranking.push_back({contenders[i].label, results[i].variant_hash, t.median_us, t.ci_lo_us, t.ci_hi_us,
                       results[i].rounds, results[i].round_us});
  }
  if (out.order.empty()) return out;
  // A config ties with the winner when their 95% confidence intervals overlap (the rule stops on a tie
  // only when such configs are also within its tie threshold).
  for (auto& r : out.order) r.tied_with_best = r.timing.ci_lo_us <= out.order.front().timing.ci_hi_us;
  if (ranking.size() >= 2) {  // the order decides among these configs from now on (winner/finalist_ranking)
    std::lock_guard lock(run.store_mu);
    record_ranking(run.store, run.campaign_id, shape, ranking);
  }
  return out;
}

namespace {

std::optional<EvaluationRecord> best_record(const ShapeRun& run, const Shape& shape) {
  std::lock_guard lock(run.store_mu);
  const auto b = best_current(run.store, run.family, shape, device_key(run.devices.front()), run.o.objective);
  return b ? std::optional(b->record) : std::nullopt;
}

// Runs the top-K under compute-sanitizer; returns how many failed.
size_t sanitize_top(const ShapeRun& run, const Shape& shape, const std::string& ref_cubin) {
  const CampaignOptions& o = run.o;
  FinalistRun finalists{&run.store, &run.store_mu, &run.family, shape, &run.devices.front(), run.campaign_id,
                        &run.cache, ref_cubin, o.seed, static_cast<size_t>(std::max(1, o.remeasure_top_k)),
                        SanitizeJob{find_compute_sanitizer(), o.worker_argv, o.gpus.empty() ? 0 : o.gpus.front(),
                                    o.sanitize_timeout_s, ""}};
  return sanitize_finalists(finalists);
}

}  // namespace

void finish_shape(const ShapeRun& run, const Shape& shape, const std::string& ref_cubin, double search_s,
                  ShapeOutcome& outcome) {
  outcome.best = best_record(run, shape);
  // (the re-measure ranks by time: a search for energy or edp keeps its own order)
  if (run.o.remeasure_top_k > 1 && run.o.objective == Objective::Time && !g_stop_requested.load()) {
    Finalists f = remeasure_top(run, shape, search_s);
    outcome.remeasured = std::move(f.order);
    outcome.remeasure = f.how;
  }
  const bool sanitize = (run.o.sanitize || run.family.sanitize) && !g_stop_requested.load();
  if (sanitize && sanitize_top(run, shape, ref_cubin) > 0)
    outcome.best = best_record(run, shape);  // a failed finalist cannot be the winner
}

}  // namespace kf
