// Generates an exported kernel's `<name>.cu` (kernel source + host launcher) and `<name>.h`
// (its C ABI). The launcher re-checks, for the shape it is called with, everything kforge
// checked before timing the kernel: dim ranges, specialized dims, buffer dtypes, the family's
// derived values and constraints, launch geometry and scalar arguments (the plan: plan_gen.hpp).
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "export/kernel_model.hpp"

namespace kf::exporter {

// "cudaError_t <name>(const __half* Q, ..., long long S, const char* dtype, cudaStream_t stream)";
// every parameter name gets `prefix`. c_header: spelled for the C/C++ header (kforge_f16 for
// __half, launcher_abi.hpp), which declares the same C ABI.
std::string launcher_signature(const KernelModel& m, const std::string& prefix = "", bool c_header = false);
// "long long S, const char* dtype"
std::string dims_parameters(const Family& f, const std::string& prefix);
// "int <name>_supports(long long S, const char* dtype, const kforge_device_info* device)"
std::string supports_signature(const KernelModel& m, const std::string& prefix = "");

// The supported-shape rule as data and as one line of words.
nlohmann::json supported_rule(const KernelModel& m);

std::string generate_header(const KernelModel& m);
std::string generate_source(const KernelModel& m);

}  // namespace kf::exporter
