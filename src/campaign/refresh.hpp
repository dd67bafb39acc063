// `kforge refresh`: re-gate and re-time the stored top-K configs of each shape with their
// current kernels, as a campaign, so that winners timed with an older template source become
// current. Export uses it for a stale winner.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "campaign/campaign.hpp"
#include "winner/current_results.hpp"
#include "winner/refresh_command.hpp"

namespace kf {

// The configs of the k fastest stored results of the shape (of device `from`, or any device; one per config),
// completed with parameters added since they were stored.
std::vector<Config> refresh_configs(const Store& store, const Family& family, const Shape& shape, size_t k,
                                    const std::optional<DeviceKey>& from = std::nullopt);

// Campaign options that run exactly those configs per shape (those already evaluated with their
// current kernel are skipped by the campaign). base gives the worker command, cache, GPUs and
// timing. Throws std::runtime_error when no shape has a stored result.
CampaignOptions refresh_options(const Store& store, const Family& family, const std::vector<Shape>& shapes,
                                size_t k, CampaignOptions base, const std::optional<DeviceKey>& from = std::nullopt);

// The winner export may write: the current best; when its kernel source is stale, the shape's top-k
// are refreshed on the local GPU first. A winner stale only by its timing method is the same gated
// kernel: it is written as it is, with a warning naming the refresh command. Throws std::runtime_error
// (one line, naming the refresh command) when no result of a current kernel exists and none can be
// made here.
BestResult gated_winner(Store& store, const Family& family, const Shape& shape,
                        const std::optional<DeviceKey>& device, const CampaignOptions& base, size_t k);

}  // namespace kf
