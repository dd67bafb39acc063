// The geometry of a tensor_map kernel argument (a TMA descriptor): a buffer viewed as a packed
// tensor, checked against cuTensorMapEncodeTiled's rules before the driver sees it, so a bad
// spec or shape gets a one-line reason instead of a bare CUresult. No CUDA here; the encoding
// itself is eval/worker/tensor_map_encode.hpp. The exported launcher checks the same rules
// (export/tensor_map_gen.cpp); a unit test holds the two together.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "family/buffers.hpp"

namespace kf {

struct TensorMapGeometry {
  std::string what;  // "tensor_map argument 5 (buffer K)": the start of every error about it
  DType dtype = DType::F16;
  uint32_t rank = 0;
  std::array<uint64_t, 5> dims{};     // elements, innermost first
  std::array<uint64_t, 4> strides{};  // bytes between consecutive indices of dims 1..rank-1
  std::array<uint32_t, 5> box{};      // elements per copy, per dim
  int swizzle = 0;                    // bytes: 0, 32, 64 or 128
};

// "tensor_map argument 5 (buffer K)"
std::string tensor_map_what(size_t arg_index, const std::string& buffer);

// Checks dims and box (already evaluated) for a buffer of `buffer_elems` elements of `dtype`
// and computes the packed strides. Throws ExprError "<what>: <problem>" when
//   - rank (dims) is not 1..5, or box has another length, or swizzle is not 0/32/64/128;
//   - a dim is below 1 or above 2^32, or a box entry is outside 1..256;
//   - box[0] * element size is not a multiple of 16 bytes, or exceeds a nonzero swizzle;
//   - the dims cover more elements than the buffer holds;
//   - a stride is not a multiple of 16 bytes or reaches 2^40 bytes.
TensorMapGeometry tensor_map_geometry(const std::string& what, DType dtype, uint64_t buffer_elems,
                                      const std::vector<int64_t>& dims, const std::vector<int64_t>& box,
                                      int swizzle);

// Throws ExprError "<what>: ..." unless the buffer's device address is 16-byte aligned.
void check_tensor_map_address(const TensorMapGeometry& g, uintptr_t address);

}  // namespace kf
