// Resource usage read from a cubin's ELF (.nv.info attributes, .nv.shared.<entry> size).
// A fallback and cross-check for the ptxas report: it survives a change in the report's
// wording, but the ELF does not record spills.
#pragma once
#include <optional>
#include <string>

#include "compile/compiler.hpp"

namespace kf {

// Registers, static shared memory and stack frame of `entry`; spills and compile_ms are 0.
// nullopt when the bytes are not a 64-bit little-endian ELF or lack the entry's symbol.
std::optional<KernelInfo> parse_cubin_resources(const std::string& cubin, const std::string& entry);

}  // namespace kf
