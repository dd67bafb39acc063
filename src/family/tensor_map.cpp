#include "family/tensor_map.hpp"

#include <cstdio>

#include "space/expr.hpp"

namespace kf {

namespace {

// cuTensorMapEncodeTiled's limits (CUDA driver API, "Tensor Map Object Management").
constexpr uint64_t kMaxDim = uint64_t{1} << 32;      // globalDim[i] <= 2^32
constexpr uint64_t kStrideLimit = uint64_t{1} << 40;  // globalStrides[i] < 2^40
constexpr int64_t kMaxBox = 256;                      // boxDim[i] <= 256

[[noreturn]] void fail(const std::string& what, const std::string& problem) { throw ExprError(what + ": " + problem); }

}  // namespace

std::string tensor_map_what(size_t arg_index, const std::string& buffer) {
  return "tensor_map argument " + std::to_string(arg_index) + " (buffer " + buffer + ")";
}

TensorMapGeometry tensor_map_geometry(const std::string& what, DType dtype, uint64_t buffer_elems,
                                      const std::vector<int64_t>& dims, const std::vector<int64_t>& box,
                                      int swizzle) {
  if (dims.empty() || dims.size() > 5) fail(what, "expected 1 to 5 dims, got " + std::to_string(dims.size()));
  if (box.size() != dims.size())
    fail(what, "box has " + std::to_string(box.size()) + " entries for " + std::to_string(dims.size()) + " dims");
  if (swizzle != 0 && swizzle != 32 && swizzle != 64 && swizzle != 128)
    fail(what, "swizzle " + std::to_string(swizzle) + " is not one of 0, 32, 64, 128");

  TensorMapGeometry g;
  g.what = what;
  g.dtype = dtype;
  g.rank = static_cast<uint32_t>(dims.size());
  g.swizzle = swizzle;
  const auto elem = static_cast<uint64_t>(dtype_size(dtype));
  for (size_t i = 0; i < dims.size(); ++i) {
    const std::string at = "[" + std::to_string(i) + "] = ";
    if (dims[i] < 1) fail(what, "dims" + at + std::to_string(dims[i]) + " is not positive");
    if (static_cast<uint64_t>(dims[i]) > kMaxDim) fail(what, "dims" + at + std::to_string(dims[i]) + " is above 2^32");
    if (box[i] < 1 || box[i] > kMaxBox) fail(what, "box" + at + std::to_string(box[i]) + " is outside 1..256");
    g.dims[i] = static_cast<uint64_t>(dims[i]);
    g.box[i] = static_cast<uint32_t>(box[i]);
  }
  // The inner extent of a box is one row of the copy: TMA moves whole 16-byte units, and a
  // swizzled row must fit in the swizzle's span.
  const uint64_t row = g.box[0] * elem;
  const std::string row_text = "box[0] = " + std::to_string(g.box[0]) + " " + to_string(dtype) + " elements = " +
                               std::to_string(row) + " bytes";
  if (row % 16 != 0) fail(what, row_text + ", not a multiple of 16");
  if (swizzle > 0 && row > static_cast<uint64_t>(swizzle))
    fail(what, row_text + ", more than the " + std::to_string(swizzle) + "-byte swizzle span");

  // Packed: dim i+1 starts every dims[0] * ... * dims[i] elements. Each partial product stays
  // within the buffer (checked before multiplying), so nothing overflows.
  uint64_t elems = 1;
  for (uint32_t i = 0; i < g.rank; ++i) {
    if (elems > buffer_elems / g.dims[i])
      fail(what, "the dims cover more than the buffer's " + std::to_string(buffer_elems) + " elements");
    elems *= g.dims[i];
    if (i + 1 == g.rank) break;
    const std::string stride_text = "the stride of dims[" + std::to_string(i + 1) + "]";
    if (elems >= kStrideLimit / elem) fail(what, stride_text + " reaches 2^40 bytes");
    g.strides[i] = elems * elem;
    if (g.strides[i] % 16 != 0)
      fail(what, stride_text + " = " + std::to_string(g.strides[i]) + " bytes, not a multiple of 16");
  }
  return g;
}

void check_tensor_map_address(const TensorMapGeometry& g, uintptr_t address) {
  if (address % 16 == 0) return;
  char hex[32];
  std::snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(address));
  fail(g.what, std::string("the buffer's device address ") + hex + " is not 16-byte aligned");
}

}  // namespace kf
