// Where a guarded buffer lies (eval/worker/guard_layout.hpp): the bands cover every mapped byte
// outside the buffer, the after band is one guard page (plus the rounding to 256 bytes) and
// then unmapped address space, and the far writes a kernel can make land either in a band
// (the pattern check names them) or in unmapped memory (they fault). Also the hint a fault's
// message gets.
#include <gtest/gtest.h>

#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "eval/worker/guard_band.hpp"
#include "eval/worker/guard_layout.hpp"
#include "eval/worker/guarded_buffer.hpp"

using namespace kf;

namespace {

constexpr size_t kTwoMiB = size_t{2} << 20;

enum class Lands { OutsideReservation, Unmapped, BeforeBand, Buffer, AfterBand };

// Where a byte at `offset` from the buffer's start lies.
Lands where(const GuardLayout& l, long long offset) {
  const long long at = static_cast<long long>(l.buffer_offset()) + offset;  // in the reservation
  const auto map_start = static_cast<long long>(l.map_offset);
  const auto map_end = map_start + static_cast<long long>(l.map_bytes);
  if (at < 0 || at >= static_cast<long long>(l.reserve_bytes)) return Lands::OutsideReservation;
  if (at < map_start || at >= map_end) return Lands::Unmapped;
  if (offset < 0) return Lands::BeforeBand;
  if (offset < static_cast<long long>(l.buffer_bytes)) return Lands::Buffer;
  return Lands::AfterBand;
}

void expect_sound(const GuardLayout& l, size_t bytes, size_t g) {
  SCOPED_TRACE("bytes " + std::to_string(bytes) + ", granularity " + std::to_string(g));
  EXPECT_EQ(l.buffer_bytes, bytes);
  // Whole granules, as cuMemAddressReserve/cuMemCreate/cuMemMap require.
  EXPECT_EQ(l.reserve_bytes % g, 0u);
  EXPECT_EQ(l.map_offset % g, 0u);
  EXPECT_EQ(l.map_bytes % g, 0u);
  EXPECT_LE(l.map_offset + l.map_bytes, l.reserve_bytes);
  // The bands and the buffer are exactly the mapped part: no mapped byte goes unchecked.
  EXPECT_EQ(l.before_bytes + l.buffer_bytes + l.after_bytes, l.map_bytes);
  // At least a page each side; the after band is one page plus the rounding to 256 bytes.
  EXPECT_GE(l.before_bytes, kGuardBytes);
  EXPECT_GE(l.after_bytes, kGuardBytes);
  EXPECT_LT(l.after_bytes, kGuardBytes + kGuardAlign);
  EXPECT_EQ((l.buffer_bytes + l.after_bytes) % kGuardAlign, 0u);
  // As aligned as cudaMalloc (TMA needs 16 bytes): the reservation itself is granule-aligned.
  EXPECT_EQ(l.buffer_offset() % kGuardAlign, 0u);
  // No whole granule mapped beyond need.
  EXPECT_LT(l.map_bytes - g, bytes + 2 * kGuardBytes);
  // Unmapped on each side: at least the buffer's size plus a granule.
  EXPECT_GE(l.map_offset, bytes + g);
  EXPECT_GE(l.unmapped_after(), bytes + g);
}

}  // namespace

TEST(GuardLayout, BandsCoverTheMappedGranulesAndUnmappedMemoryLiesBeyond) {
  const std::vector<size_t> sizes = {0,       1,           4,           4004,          16384,
                                     kTwoMiB - 2 * kGuardBytes, kTwoMiB - 2 * kGuardBytes + 1,
                                     kTwoMiB, size_t{4} << 20, (size_t{6} << 20) + 3, size_t{1} << 30};
  for (size_t g : {size_t{65536}, kTwoMiB, size_t{512} << 20})
    for (size_t bytes : sizes) expect_sound(unmapped_guard_layout(bytes, g), bytes, g);
}

TEST(GuardLayout, ASmallBufferEndsOnePageBeforeUnmappedMemory) {
  const GuardLayout l = unmapped_guard_layout(4096 * 4, kTwoMiB);  // N = 4,096 floats
  EXPECT_EQ(l.map_bytes, kTwoMiB);
  EXPECT_EQ(l.after_bytes, kGuardBytes);
  EXPECT_EQ(l.before_bytes, kTwoMiB - kGuardBytes - 16384);
  EXPECT_EQ(l.map_offset, 2 * kTwoMiB);  // the buffer rounded to a granule, plus one
  EXPECT_EQ(l.reserve_bytes, 5 * kTwoMiB);
}

TEST(GuardLayout, ABufferOfUnalignedSizeKeepsItsPaddingInTheAfterBand) {
  const GuardLayout l = unmapped_guard_layout(4004, kTwoMiB);  // N = 1,001 floats
  EXPECT_EQ(l.after_bytes, kGuardBytes + 92);                  // 4004 rounds to 4096
  EXPECT_EQ(l.before_bytes, kTwoMiB - kGuardBytes - 4096);
}

// The writes of tests/families/farwrite: one float 64 KiB or 1 MiB past the end, or 64 KiB
// before the start. None may land anywhere a check would miss it.
TEST(GuardLayout, FarWritesFaultOrHitABand) {
  for (size_t n : {size_t{1001}, size_t{4096}, size_t{1} << 20, (size_t{1} << 19) - 2048}) {
    SCOPED_TRACE("N " + std::to_string(n));
    const size_t bytes = n * 4;
    const GuardLayout l = unmapped_guard_layout(bytes, kTwoMiB);
    const auto end = static_cast<long long>(bytes);
    EXPECT_EQ(where(l, end), Lands::AfterBand);                    // just past: the pattern
    EXPECT_EQ(where(l, end + kGuardBytes - 1), Lands::AfterBand);
    EXPECT_EQ(where(l, end + 65536), Lands::Unmapped);             // 64 KiB past: a fault
    EXPECT_EQ(where(l, end + (1 << 20)), Lands::Unmapped);         // 1 MiB past: a fault
    EXPECT_EQ(where(l, 2 * end + 65536), Lands::Unmapped);         // a whole buffer further: still
    EXPECT_EQ(where(l, -1), Lands::BeforeBand);
    const Lands before = where(l, -65536);                         // 64 KiB before: either
    EXPECT_TRUE(before == Lands::BeforeBand || before == Lands::Unmapped);
    EXPECT_EQ(where(l, -end - 65536 - static_cast<long long>(l.before_bytes)), Lands::Unmapped);
  }
  // A buffer of 2 MiB - 16 KiB leaves a before band of three pages: 64 KiB before it is unmapped.
  const GuardLayout tight = unmapped_guard_layout(kTwoMiB - 4 * kGuardBytes, kTwoMiB);
  EXPECT_EQ(tight.before_bytes, 3 * kGuardBytes);
  EXPECT_EQ(where(tight, -65536), Lands::Unmapped);
}

TEST(GuardLayout, PlainAllocationHasOnePageEachSide) {
  const GuardLayout l = plain_guard_layout(4004);
  EXPECT_EQ(l.reserve_bytes, 0u);
  EXPECT_EQ(l.map_offset, 0u);
  EXPECT_EQ(l.before_bytes, kGuardBytes);
  EXPECT_EQ(l.after_bytes, kGuardBytes);
  EXPECT_EQ(l.map_bytes, 4004 + 2 * kGuardBytes);
  EXPECT_EQ(l.buffer_offset(), kGuardBytes);
  EXPECT_EQ(l.unmapped_after(), 0u);
}

TEST(GuardLayout, RefusesABadGranularityAndAnImpossibleSize) {
  for (size_t g : {size_t{0}, size_t{128}, size_t{768}, kTwoMiB + 256})
    EXPECT_THROW(unmapped_guard_layout(16, g), std::invalid_argument) << g;
  const size_t huge = std::numeric_limits<size_t>::max() - 100;
  EXPECT_THROW(unmapped_guard_layout(huge, kTwoMiB), std::length_error);
  EXPECT_THROW(plain_guard_layout(huge), std::length_error);
  try {
    unmapped_guard_layout(16, 768);
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "allocation granularity 768 is not a power of two multiple of 256");
  }
}

TEST(GuardFault, AnIllegalAddressBetweenUnmappedPagesIsNamedAsAnAccessOutsideEveryBuffer) {
  EXPECT_NE(fault_hint(cudaErrorIllegalAddress, true).find("outside every buffer"), std::string::npos);
  EXPECT_EQ(fault_hint(cudaErrorIllegalAddress, true).front(), '(');
  EXPECT_EQ(fault_hint(cudaErrorIllegalAddress, false), "");  // plain allocations: no such claim
  EXPECT_EQ(fault_hint(cudaErrorLaunchFailure, true), "");    // a trap says nothing about addresses
  EXPECT_EQ(fault_hint(cudaErrorMisalignedAddress, true), "");
}
