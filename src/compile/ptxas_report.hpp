// Resource usage of one kernel from the ptxas verbose report that NVRTC writes into the
// program log when compiled with --ptxas-options=-v.
#pragma once
#include <optional>
#include <string>

#include "compile/compiler.hpp"

namespace kf {

// Registers, static shared memory, stack frame and spills of `entry` (an extern "C" name).
// Spills count the entry and the non-inlined functions ptxas lists under it. compile_ms is
// left 0. nullopt when the report has no block for the entry.
std::optional<KernelInfo> parse_ptxas_report(const std::string& log, const std::string& entry);

}  // namespace kf
