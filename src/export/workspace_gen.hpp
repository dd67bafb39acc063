// `<name>_workspace_size(<dims>)`: the bytes of device scratch an exported kernel needs for a
// shape, so a caller allocates its scratch buffers without recomputing them from the config.
#pragma once
#include <string>

#include "export/kernel_model.hpp"

namespace kf::exporter {

// "size_t <name>_workspace_size(<dims>)" (parameters prefixed with `prefix`).
std::string workspace_signature(const KernelModel& m, const std::string& prefix = "");
// Appended to <name>.h: the declaration (extern "C") with its contract.
std::string generate_workspace_header(const KernelModel& m);
// Appended to <name>.cu, after the launcher (it reads kfx_target and the kfx:: helpers there).
std::string generate_workspace_source(const KernelModel& m);

}  // namespace kf::exporter
