// `kforge export --config`: a config is exported as a result only with a record in which kforge's gate
// passed it. Where the store has none, the config is gated first, as a campaign of that one config on the
// local GPU (as `kforge refresh` re-gates stored configs), whose record is then the one.
#pragma once
#include <optional>

#include "campaign/campaign.hpp"

namespace kf {

// The record in which kforge's gate passed `config`'s current kernel at `shape` (on `device`, or any;
// winner/current_results gated_record), gating the config on the local GPU first where there is none
// (`store` must then be writable; base gives the worker command, cache and timing). Throws
// std::runtime_error, one line naming the config, when it cannot be gated here or did not pass the gate.
EvaluationRecord gate_config(Store& store, const Family& family, const Shape& shape, const Config& config,
                             const std::optional<DeviceKey>& device, CampaignOptions base);

}  // namespace kf
