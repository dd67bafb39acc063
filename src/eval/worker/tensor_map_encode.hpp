// Encodes a checked tensor_map geometry (family/tensor_map.hpp) into the 128-byte descriptor a
// kernel takes by value, with cuTensorMapEncodeTiled. kforge links no libcuda (see
// docs/architecture.md, "Runtime API instead of the driver API"), so the driver function is
// found through the runtime's cudaGetDriverEntryPointByVersion, once per process.
#pragma once
#include "family/tensor_map.hpp"

namespace kf {

// A CUtensorMap's bytes, aligned as CUDA 13's <cuda.h> declares it (128; 64 before): the
// driver writes it in place and the launch copies it into the kernel's parameter space.
struct alignas(128) TensorMapBytes {
  unsigned char bytes[128];
};

// Interleave none, L2 promotion 256B, out-of-bounds fill none (zeros), element strides 1.
// Throws ExprError "<what>: cuTensorMapEncodeTiled returned CUDA_ERROR_..." when the driver
// refuses the map, gpu::CudaError or std::runtime_error when the driver function cannot be had.
void encode_tensor_map(TensorMapBytes& out, const TensorMapGeometry& g, const void* address);

}  // namespace kf
