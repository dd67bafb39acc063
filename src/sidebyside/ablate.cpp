#include "sidebyside/ablate.hpp"

#include <stdexcept>

#include "winner/current_results.hpp"

namespace kf {

Ablation ablate_winner(const Store& store, const Family& f, const Shape& shape, WorkerClient& worker,
                       CubinCache& cache, const SideBySideOptions& options) {
  const DeviceLimits device = worker.device();
  const auto best = best_current(store, f, shape, device_key(device));
  if (!best) throw std::runtime_error("no gated result for " + to_string(shape) + " on " + device.name);
  Ablation a;
  a.winner = complete_stored_config(f, best->record.config);
  a.stale = best->stale;
  a.device = device.name;
  const auto contenders = one_parameter_changes(f, a.winner, make_space(f, shape, device));
  const auto results = time_side_by_side(f, shape, device, worker, cache, contenders, options).contenders;
  if (!results.front().timing)
    throw std::runtime_error("the winner failed when re-measured: " + to_string(results.front().status) +
                             (results.front().error.empty() ? "" : " (" + results.front().error + ")"));
  a.winner_us = results.front().timing->median_us;
  for (size_t i = 1; i < contenders.size(); ++i) {
    const std::string& label = contenders[i].label;
    const size_t eq = label.find('=');
    a.variations.push_back({label.substr(0, eq), label.substr(eq + 1), results[i]});
  }
  return a;
}

}  // namespace kf
