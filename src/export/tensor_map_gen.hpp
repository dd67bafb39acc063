// The C++ an exported launcher uses for tensor_map arguments: plan-time checks that mirror
// kforge's (family/tensor_map.cpp: what kforge refuses to encode, the launcher refuses as an
// unsupported shape), and the encoding with cuTensorMapEncodeTiled, found through the runtime
// (cudaGetDriverEntryPointByVersion) so an exported kernel needs no -lcuda either.
#pragma once
#include <string>

#include "family/family.hpp"

namespace kf::exporter {

// Host C++17 defining, in the including file's namespace:
//   kfx_tensor_map_t      rank, dims, byte strides and box of one map
//   kfx_tensor_map_plan   checks dims/box for a buffer and fills a kfx_tensor_map_t (no CUDA call)
//   kfx_encode_tensor_map encodes one over a device pointer (cudaErrorInvalidValue if refused)
//   kfx_map_arg           passes a CUtensorMap to the kernel's own 128-byte parameter type
// Needs <cstdint>, <cstring>, <cuda.h> and <cudaTypedefs.h> included before it.
std::string tensor_map_helpers();

// The #include lines tensor_map_helpers() needs.
std::string tensor_map_includes();

// "CU_TENSOR_MAP_DATA_TYPE_FLOAT16" for "f16" (bf16, f32, i32 likewise); throws
// std::runtime_error for a type a tensor map cannot hold.
std::string cu_tensor_map_data_type(const std::string& dtype);
// "CU_TENSOR_MAP_SWIZZLE_128B" for 128 (0, 32, 64 likewise); throws std::runtime_error otherwise.
std::string cu_tensor_map_swizzle(int bytes);

// "dims {D, S, B * H}, box {64, BLOCK_N, 1}, swizzle 128": a tensor_map argument as the spec
// writes it, for the comments of the generated code.
std::string tensor_map_geometry(const ArgSpec& a);

}  // namespace kf::exporter
