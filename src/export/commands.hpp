// Command lines the manifest gives for building and profiling an exported kernel.
#pragma once
#include <string>
#include <vector>

#include "util/shell_quote.hpp"  // every option, name and path of the manifest's command lines goes through it

namespace kf::exporter {

// nvcc flags equivalent to a variant's NVRTC options: options nvcc shares (-D, --std,
// --use_fast_math, --maxrregcount, --ftz, ...) pass through; NVRTC-only ones and include
// paths (the exported source has its includes inlined) are dropped.
std::vector<std::string> nvcc_flags(const std::vector<std::string>& nvrtc_options);

// nvcc's target flag for an arch name: "-arch=sm_90", or for an arch-specific target such as
// sm_90a "-gencode arch=compute_90a,code=sm_90a" (plain -arch=sm_90a also embeds compute_90
// PTX, which cannot hold sm_90a-only instructions like wgmma).
std::string nvcc_arch_flag(const std::string& arch);

// "nvcc -O3 -arch=sm_90 <flags> -I. -o <name>_runner <name>.cu runners/<name>_runner.cu" (in the export folder)
std::string build_command(const std::string& name, const std::string& arch, const std::vector<std::string>& flags);
// "nvcc -O3 -arch=sm_90 <flags> -c <name>.cu"
std::string object_command(const std::string& name, const std::string& arch, const std::vector<std::string>& flags);
// "ncu --set full -k <name>_kernel -c 1 ./<name>_runner"
std::string ncu_command(const std::string& name);

}  // namespace kf::exporter
