#include "campaign/finalists.hpp"

#include <algorithm>

#include "campaign/current_results.hpp"
#include "campaign/finalist_ranking.hpp"
#include "campaign/sanitize.hpp"
#include "campaign/side_by_side.hpp"

namespace kf {

namespace {
// Interleaved rounds of the finalists' re-measure. At 7 the worker's 95% intervals on B16 S1024 D128 attention were
// 3-4% wide and could not order two configs 1.4% apart; at 21 they were ~0.4% wide and did
// (docs/experiments/71-*). The ranking decides the winner among the finalists, so it gets the 21.
constexpr int kFinalistRounds = 21;
}  // namespace

std::vector<ShapeOutcome::Remeasured> remeasure_top(const ShapeRun& run, const Shape& shape) {
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
  options.rounds = kFinalistRounds;
  options.timing = o.timing;
  options.seed = o.seed;
  options.compile_threads = 1;  // the top-K are in the cubin cache already
  const auto results =
      time_side_by_side(run.family, shape, device, *run.workers.front(), run.cache, contenders, options);
  std::vector<size_t> timed;
  for (size_t i = 0; i < results.size(); ++i)
    if (results[i].timing) timed.push_back(i);
  std::stable_sort(timed.begin(), timed.end(), [&](size_t a, size_t b) {
    return results[a].timing->median_us < results[b].timing->median_us;
  });
  std::vector<ShapeOutcome::Remeasured> out;
  std::vector<RankedConfig> ranking;
  for (size_t i : timed) {
    const TimingStats& t = *results[i].timing;
    out.push_back({contenders[i].config, t, false});
    ranking.push_back({contenders[i].label, results[i].variant_hash, t.median_us, t.ci_lo_us, t.ci_hi_us});
  }
  if (out.empty()) return out;
  // A config ties with the winner when their 95% confidence intervals overlap.
  for (auto& r : out) r.tied_with_best = r.timing.ci_lo_us <= out.front().timing.ci_hi_us;
  if (ranking.size() >= 2) {  // the order decides among these configs from now on (campaign/finalist_ranking)
    std::lock_guard lock(run.store_mu);
    record_ranking(run.store, run.campaign_id, shape, ranking);
  }
  return out;
}

namespace {

std::optional<EvaluationRecord> best_record(const ShapeRun& run, const Shape& shape) {
  std::lock_guard lock(run.store_mu);
  const auto b = best_current(run.store, run.family, shape, device_key(run.devices.front()));
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

void finish_shape(const ShapeRun& run, const Shape& shape, const std::string& ref_cubin, ShapeOutcome& outcome) {
  outcome.best = best_record(run, shape);
  if (run.o.remeasure_top_k > 1 && !g_stop_requested.load()) outcome.remeasured = remeasure_top(run, shape);
  const bool sanitize = (run.o.sanitize || run.family.sanitize) && !g_stop_requested.load();
  if (sanitize && sanitize_top(run, shape, ref_cubin) > 0)
    outcome.best = best_record(run, shape);  // a failed finalist cannot be the winner
}

}  // namespace kf
