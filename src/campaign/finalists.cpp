#include "campaign/finalists.hpp"

#include <algorithm>

#include "campaign/current_results.hpp"
#include "campaign/sanitize.hpp"
#include "campaign/side_by_side.hpp"

namespace kf {

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
  options.timing = o.timing;
  options.seed = o.seed;
  options.compile_threads = 1;  // the top-K are in the cubin cache already
  const auto results =
      time_side_by_side(run.family, shape, device, *run.workers.front(), run.cache, contenders, options);
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
