#include "campaign/known_results.hpp"

#include <spdlog/spdlog.h>

#include "winner/current_results.hpp"

namespace kf {

namespace {

// Every recorded evaluation of the shape whose kernel is still the one it would compile now.
void add_current_records(KnownResults& k, const Store& store, const Family& family, const Shape& shape,
                         const DeviceKey& device, Objective objective, int64_t campaign_id) {
  KernelSourceCheck check(family, shape);
  std::set<std::string> stale_keys;
  for (const auto& e : store.evaluations(family.name, shape, device)) {
    if (e.status == Status::Interrupted) continue;
    const Config config = complete_stored_config(family, e.config);
    const std::string key = to_string(config);
    if (check.stale(e, config)) {
      stale_keys.insert(key);
      continue;
    }
    // Searching for energy (or edp), a config timed without it runs again: its time alone does not rank it.
    if (objective != Objective::Time && e.status == Status::Ok && e.timing && e.timing->power_w <= 0) continue;
    k.done_keys.insert(key);
    k.known.push_back({config, e.status == Status::Ok && e.timing
                                   ? std::optional<double>(objective_value(*e.timing, objective))
                                   : std::nullopt});
    if (e.campaign_id == campaign_id) ++k.done_by_campaign;
  }
  for (const auto& key : stale_keys) k.stale += k.done_keys.count(key) ? 0 : 1;
}

// Interrupted configs without a result: retried once, given up after the second interruption.
void add_interrupted(KnownResults& k, const Store& store, const Family& family, const Shape& shape,
                     const DeviceKey& device) {
  for (const auto& [stored_key, n] : store.interrupted_counts(family.name, shape, device)) {
    const Config config = complete_stored_config(family, parse_assignment(stored_key));
    const std::string key = to_string(config);
    if (k.done_keys.count(key)) continue;
    if (n >= 2) {
      k.done_keys.insert(key);
      spdlog::warn("{} was interrupted {} times; not retried", key, n);
    } else {
      k.retries.push_back(config);
    }
  }
}

}  // namespace

KnownResults known_results(const Store& store, const Family& family, const Shape& shape, const DeviceKey& device,
                           Objective objective, int64_t campaign_id) {
  KnownResults k;
  add_current_records(k, store, family, shape, device, objective, campaign_id);
  if (k.stale)
    spdlog::info("{}: {} recorded config(s) were measured with another kernel source; they run again",
                 to_string(shape), k.stale);
  add_interrupted(k, store, family, shape, device);
  return k;
}

}  // namespace kf
