// kforge_device_info in exported code: the struct of device limits a supported-shape rule reads
// (the spec's device.* names), how a launcher fills it for the current device, and the export
// target's limits, used where the caller gives no device.
#pragma once
#include <string>
#include <vector>

#include "export/kernel_model.hpp"

namespace kf::exporter {

// Fields of kforge_device_info in order, with their device.* names.
const std::vector<std::string>& device_fields();
// The kforge_device_info struct, shared by every exported header (guarded).
std::string device_info_decl();
// Host code that reads the current device's limits into a kforge_device_info (cached per
// device), and the smem opt-in cache. Used by launchers.
std::string device_query_code();
// `kfx_target`: the export target's limits, for <name>_supports and the workspace query.
std::string target_limits_code(const KernelModel& m);

}  // namespace kf::exporter
