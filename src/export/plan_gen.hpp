// The launcher's plan: `kfx_plan_t` and `bool kfx_plan(<dims>, const kforge_device_info& dev,
// kfx_plan_t& p)`, which re-checks for the shape it is given everything kforge checked before
// timing the kernel (dim ranges, specialized dims, buffer dtypes and counts, derived values,
// constraints, launch geometry, scalar arguments, tensor maps) and returns false for a shape
// the kernel cannot run; otherwise it fills in the launch and the kernel's non-buffer arguments.
#pragma once
#include <string>

#include "export/kernel_model.hpp"

namespace kf::exporter {

std::string plan_function(const KernelModel& m);

}  // namespace kf::exporter
