// A timed kernel's mean board power, from the GPU's energy counter (NVML) while its graph replays run back
// to back.
#pragma once
#include <functional>
#include <optional>

#include "gpu/stream.hpp"

namespace kf {

// Mean power (W) over a window of about energy_ms between two steps of the energy counter, `replay` kept
// queued the whole time. nullopt when energy_ms <= 0 (NVML is then not even loaded), where the counter is
// unavailable (said once on stderr), or when it did not step within the bound.
std::optional<double> mean_power_w(const std::function<void()>& replay, const gpu::Stream& s, double energy_ms);

}  // namespace kf
