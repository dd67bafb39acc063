// tensor_map arguments without a GPU: the geometry kforge hands to cuTensorMapEncodeTiled
// (packed strides) and every rule it checks first, each refused with a one-line reason naming
// the argument and its buffer.
#include <gtest/gtest.h>

#include "family/tensor_map.hpp"
#include "space/expr.hpp"

namespace kf {
namespace {

const std::string kWhat = tensor_map_what(6, "K");

// The error tensor_map_geometry gives, or "(ok)".
std::string error_of(DType dtype, uint64_t elems, const std::vector<int64_t>& dims, const std::vector<int64_t>& box,
                     int swizzle) {
  try {
    tensor_map_geometry(kWhat, dtype, elems, dims, box, swizzle);
  } catch (const ExprError& e) {
    return e.what();
  }
  return "(ok)";
}

TEST(TensorMapGeometry, PackedStridesInnermostFirst) {
  // sdpa's K: [D, S, B * H] = [64, 512, 16] halves, box [64, 64, 1], 128-byte swizzle.
  const TensorMapGeometry g = tensor_map_geometry(kWhat, DType::F16, 64 * 512 * 16, {64, 512, 16}, {64, 64, 1}, 128);
  EXPECT_EQ(g.what, "tensor_map argument 6 (buffer K)");
  EXPECT_EQ(g.rank, 3u);
  EXPECT_EQ(g.dims, (std::array<uint64_t, 5>{64, 512, 16, 0, 0}));
  EXPECT_EQ(g.strides, (std::array<uint64_t, 4>{128, 65536, 0, 0}));  // rank - 1 strides, in bytes
  EXPECT_EQ(g.box, (std::array<uint32_t, 5>{64, 64, 1, 0, 0}));
  EXPECT_EQ(g.swizzle, 128);
  EXPECT_EQ(g.dtype, DType::F16);

  const TensorMapGeometry one = tensor_map_geometry(kWhat, DType::F32, 100, {100}, {4}, 0);
  EXPECT_EQ(one.rank, 1u);
  EXPECT_EQ(one.strides, (std::array<uint64_t, 4>{}));
  // Five dims, i32; a buffer larger than the view is fine.
  const TensorMapGeometry five = tensor_map_geometry(kWhat, DType::I32, 1000, {4, 2, 3, 2, 2}, {4, 1, 1, 1, 2}, 32);
  EXPECT_EQ(five.strides, (std::array<uint64_t, 4>{16, 32, 96, 192}));
}

TEST(TensorMapGeometry, BoxAndSwizzleRules) {
  const std::string p = kWhat + ": ";
  EXPECT_EQ(error_of(DType::F16, 1 << 20, {64, 512}, {64, 300}, 0), p + "box[1] = 300 is outside 1..256");
  EXPECT_EQ(error_of(DType::F16, 1 << 20, {64, 512}, {64, 0}, 0), p + "box[1] = 0 is outside 1..256");
  EXPECT_EQ(error_of(DType::F16, 1 << 20, {64, 512}, {4, 64}, 0),
            p + "box[0] = 4 f16 elements = 8 bytes, not a multiple of 16");
  EXPECT_EQ(error_of(DType::F16, 1 << 20, {128, 512}, {128, 64}, 128),
            p + "box[0] = 128 f16 elements = 256 bytes, more than the 128-byte swizzle span");
  EXPECT_EQ(error_of(DType::BF16, 1 << 20, {64, 512}, {32, 64}, 32),
            p + "box[0] = 32 bf16 elements = 64 bytes, more than the 32-byte swizzle span");
  EXPECT_EQ(error_of(DType::F16, 1 << 20, {128, 512}, {128, 64}, 0), "(ok)") << "no swizzle: no span";
  EXPECT_EQ(error_of(DType::F32, 1 << 20, {64, 512}, {16, 64}, 64), "(ok)") << "64 bytes fit a 64-byte span";
  EXPECT_EQ(error_of(DType::F16, 1 << 20, {64, 512}, {64, 64}, 48), p + "swizzle 48 is not one of 0, 32, 64, 128");
}

TEST(TensorMapGeometry, DimsStridesAndBufferSize) {
  const std::string p = kWhat + ": ";
  EXPECT_EQ(error_of(DType::F16, 1 << 20, {64, 0, 4}, {64, 1, 1}, 0), p + "dims[1] = 0 is not positive");
  EXPECT_EQ(error_of(DType::F16, 1 << 20, {64, -3}, {64, 1}, 0), p + "dims[1] = -3 is not positive");
  EXPECT_EQ(error_of(DType::F16, uint64_t{1} << 40, {int64_t{1} << 33}, {64}, 0),
            p + "dims[0] = 8589934592 is above 2^32");
  // Exactly the buffer, then one element more.
  EXPECT_EQ(error_of(DType::F16, 64 * 512 * 16, {64, 512, 16}, {64, 64, 1}, 128), "(ok)");
  EXPECT_EQ(error_of(DType::F16, 64 * 512 * 16 - 1, {64, 512, 16}, {64, 64, 1}, 128),
            p + "the dims cover more than the buffer's 524287 elements");
  // Dims whose product overflows 64 bits (2^71 here, with strides below 2^40) are caught
  // before multiplying.
  EXPECT_EQ(error_of(DType::F16, UINT64_MAX / 2, {1 << 19, 1 << 19, int64_t{1} << 32}, {64, 1, 1}, 0),
            p + "the dims cover more than the buffer's 9223372036854775807 elements");
  // Global strides: multiples of 16 bytes, below 2^40.
  EXPECT_EQ(error_of(DType::F16, 1 << 20, {36, 100}, {8, 1}, 0),
            p + "the stride of dims[1] = 72 bytes, not a multiple of 16");
  EXPECT_EQ(error_of(DType::F32, uint64_t{1} << 40, {1 << 20, 1 << 18, 2}, {32, 1, 1}, 0),
            p + "the stride of dims[2] reaches 2^40 bytes");
  EXPECT_EQ(error_of(DType::F32, uint64_t{1} << 40, {1 << 20, (1 << 18) - 1, 2}, {32, 1, 1}, 0), "(ok)");
  // The last dim has no stride: its extent is not bound by 16-byte multiples.
  EXPECT_EQ(error_of(DType::F16, 1 << 20, {64, 3}, {64, 3}, 0), "(ok)");
  // Rank and box length (the spec loader checks them too).
  EXPECT_EQ(error_of(DType::F16, 1 << 20, {}, {}, 0), p + "expected 1 to 5 dims, got 0");
  EXPECT_EQ(error_of(DType::F16, 1 << 20, {8, 1, 1, 1, 1, 1}, {8, 1, 1, 1, 1, 1}, 0),
            p + "expected 1 to 5 dims, got 6");
  EXPECT_EQ(error_of(DType::F16, 1 << 20, {64, 4}, {64}, 0), p + "box has 1 entries for 2 dims");
}

TEST(TensorMapGeometry, AddressAlignment) {
  const TensorMapGeometry g = tensor_map_geometry(kWhat, DType::F16, 4096, {64, 64}, {64, 8}, 128);
  EXPECT_NO_THROW(check_tensor_map_address(g, 0x7f0000001000));
  EXPECT_NO_THROW(check_tensor_map_address(g, 0x7f0000001010));
  try {
    check_tensor_map_address(g, 0x7f0000001008);
    FAIL() << "a misaligned address passed";
  } catch (const ExprError& e) {
    EXPECT_EQ(std::string(e.what()), kWhat + ": the buffer's device address 0x7f0000001008 is not 16-byte aligned");
  }
}

}  // namespace
}  // namespace kf
