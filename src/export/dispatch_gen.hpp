// Generates `<prefix>_dispatch.cu/.h`: one entry point over several exported kernels (one per
// tuned shape) that picks the kernel for the shape it is called with.
//
// Choice: kernels whose enum dims equal the call's are tried in order of increasing distance
//   distance = sum over int dims of |log2(max(x, 1)) - log2(max(y, 1))|
// (a ratio distance: tuning depends on relative size, so 1024 -> 2048 is as far as 64 -> 128),
// ties in the order of the manifest's "kernels". The exact tuned shape has distance 0 and so
// comes first. The first launcher that does not answer cudaErrorInvalidValue wins; if all
// refuse, the dispatcher returns cudaErrorInvalidValue.
#pragma once
#include <string>
#include <vector>

#include "export/kernel_model.hpp"

namespace kf::exporter {

// Buffers whose element type differs between kernels are passed as (const) void*.
// The dispatcher's pointer type for buffer i as its header spells it ("const kforge_f16*", "void*").
std::string dispatch_pointer_type(const std::vector<KernelModel>& kernels, size_t i);
// The one target a dispatcher is built for: an arch-specific one (sm_90a) when any kernel needs
// it, as it also runs the others; else the first kernel's.
std::string dispatch_arch(const std::vector<KernelModel>& kernels);
std::string dispatch_signature(const std::string& dispatch_name, const std::vector<KernelModel>& kernels);
std::string generate_dispatch_header(const std::string& dispatch_name, const std::vector<KernelModel>& kernels);
std::string generate_dispatch_source(const std::string& dispatch_name, const std::vector<KernelModel>& kernels);

}  // namespace kf::exporter
