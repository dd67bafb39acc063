#include "campaign/refresh.hpp"

#include <spdlog/spdlog.h>

#include <stdexcept>

#include "util/shell_quote.hpp"

namespace kf {

std::vector<Config> refresh_configs(const Store& store, const Family& family, const Shape& shape, size_t k,
                                    const std::optional<DeviceKey>& from) {
  std::vector<Config> out;
  for (const auto& e : store.top(family.name, shape, from, k))
    out.push_back(complete_stored_config(family, e.config));
  return out;
}

CampaignOptions refresh_options(const Store& store, const Family& family, const std::vector<Shape>& shapes,
                                size_t k, CampaignOptions base, const std::optional<DeviceKey>& from) {
  if (k == 0) throw std::runtime_error("refresh: --top must be at least 1");
  CampaignOptions o = std::move(base);
  o.strategy = "refresh";
  o.seeding = "none";
  o.listed.clear();
  size_t total = 0;
  for (const auto& s : shapes) {
    auto configs = refresh_configs(store, family, s, k, from);
    total += configs.size();
    if (!configs.empty()) o.listed[to_string(s)] = std::move(configs);
  }
  if (total == 0)
    throw std::runtime_error("refresh: no gated result of " + family.name + (from ? " on " + from->name : "") +
                             " for the shape(s) given");
  o.remeasure_top_k = static_cast<int>(k);
  return o;
}

BestResult gated_winner(Store& store, const Family& family, const Shape& shape,
                        const std::optional<DeviceKey>& device, const CampaignOptions& base, size_t k) {
  auto best = best_current(store, family, shape, device);
  if (!best) throw std::runtime_error("no gated result for " + to_string(shape) + " in " + store.path().string());
  if (!best->stale) return *best;
  if (!best->source_stale) {  // the same kernel, gated; only its time came from an older timing method
    spdlog::warn("{}: the stored winner was timed with an older timing method (its kernel is current and gated); "
                 "`{}` re-times it",
                 to_string(shape), refresh_command(store, family, shape));
    return *best;
  }
  spdlog::info("{}: the stored winner was timed with an older kernel source; re-gating the top {} on this GPU",
               to_string(shape), k);
  try {
    run_campaign(store, family, {shape}, refresh_options(store, family, {shape}, k, base));
  } catch (const std::exception& e) {
    throw std::runtime_error("the winner for " + to_string(shape) +
                             " was timed with an older kernel source and cannot be re-gated here (" + e.what() +
                             "); run `" + refresh_command(store, family, shape) + "` on a GPU, then export again");
  }
  best = best_current(store, family, shape, device);
  if (!best || best->stale)
    throw std::runtime_error("no configuration of " + to_string(shape) +
                             " passed the gate with its current kernel among the refreshed top " + std::to_string(k) +
                             "; run `" + refresh_command(store, family, shape) + " --top N` with a larger N or search again");
  return *best;
}

}  // namespace kf
