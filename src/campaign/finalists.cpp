#include "campaign/finalists.hpp"

#include <algorithm>

#include "campaign/current_results.hpp"
#include "campaign/sanitize.hpp"
#include "campaign/side_by_side.hpp"

namespace kf {

std::vector<ShapeOutcome::Remeasured> remeasure_top(const ShapeFinish& f) {
  const CampaignOptions& o = f.options;
  std::vector<EvaluationRecord> top;
  {
    std::lock_guard lock(f.store_mu);
    top = f.store.top(f.family.name, f.shape, device_key(f.device), static_cast<size_t>(o.remeasure_top_k));
  }
  if (top.size() < 2) return {};
  std::vector<Contender> contenders;
  for (const auto& e : top) {
    const Config c = complete_stored_config(f.family, e.config);
    contenders.push_back({to_string(c), c, {}});
  }
  SideBySideOptions options;
  options.timing = o.timing;
  options.seed = o.seed;
  options.compile_threads = 1;  // the top-K are in the cubin cache already
  const auto results = time_side_by_side(f.family, f.shape, f.device, f.worker, f.cache, contenders, options);
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

namespace {

std::optional<EvaluationRecord> best_record(const ShapeFinish& f) {
  std::lock_guard lock(f.store_mu);
  const auto b = best_current(f.store, f.family, f.shape, device_key(f.device));
  return b ? std::optional(b->record) : std::nullopt;
}

// Runs the top-K under compute-sanitizer; returns how many failed.
size_t sanitize_top(const ShapeFinish& f) {
  const CampaignOptions& o = f.options;
  FinalistRun finalists{&f.store, &f.store_mu, &f.family, f.shape, &f.device, f.campaign_id, &f.cache,
                        f.ref_cubin, o.seed, static_cast<size_t>(std::max(1, o.remeasure_top_k)),
                        SanitizeJob{find_compute_sanitizer(), o.worker_argv, o.gpus.empty() ? 0 : o.gpus.front(),
                                    o.sanitize_timeout_s, ""}};
  return sanitize_finalists(finalists);
}

}  // namespace

void finish_shape(const ShapeFinish& f, ShapeOutcome& outcome) {
  outcome.best = best_record(f);
  if (f.options.remeasure_top_k > 1 && !g_stop_requested.load()) outcome.remeasured = remeasure_top(f);
  if ((f.options.sanitize || f.family.sanitize) && !g_stop_requested.load())
    if (sanitize_top(f) > 0) outcome.best = best_record(f);  // a failed finalist cannot be the winner
}

}  // namespace kf
