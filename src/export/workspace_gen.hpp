// `<name>_workspace_size(<dims>)`: the bytes of device scratch an exported kernel needs for a
// shape, so a caller allocates its scratch buffers without recomputing them from the config.
#pragma once
#include <string>

#include "export/kernel_model.hpp"

namespace kf::exporter {

// "size_t <name>_workspace_size(<dims>)" (parameters prefixed with `prefix`).
std::string workspace_signature(const KernelModel& m, const std::string& prefix = "");
// "size_t <name>_workspace_layout(<dims>, size_t* offsets)": the total, and each scratch buffer's
// offset (parameter order) unless offsets is NULL. `name` is a kernel's or a dispatcher's.
std::string workspace_layout_signature(const std::string& name, const Family& f, const std::string& prefix = "");
// How many scratch buffers (role scratch) the kernel has: the entries of the layout's offsets.
int scratch_count(const KernelModel& m);
// Appended to <name>.h: the declaration (extern "C") with its contract.
std::string generate_workspace_header(const KernelModel& m);
// Appended to <name>.cu, after the launcher (it reads kfx_target and the kfx:: helpers there).
std::string generate_workspace_source(const KernelModel& m);

}  // namespace kf::exporter
