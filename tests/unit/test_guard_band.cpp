// Guard-band logic: the patterns (of any band length), finding damage, and the one-line
// reports that name the buffer and the offset.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "eval/worker/guard_band.hpp"

using namespace kf;

TEST(GuardBand, PatternsAreDistinctAndAvoidCommonFills) {
  const auto before = guard_pattern(GuardSide::Before, kGuardBytes);
  const auto after = guard_pattern(GuardSide::After, kGuardBytes);
  ASSERT_EQ(before.size(), kGuardBytes);
  ASSERT_EQ(after.size(), kGuardBytes);
  EXPECT_NE(before, after);
  std::set<unsigned char> values(before.begin(), before.end());
  EXPECT_GT(values.size(), 200u);  // not a constant a kernel would write
  for (unsigned char b : before) EXPECT_TRUE(b != 0x00 && b != 0xFF);
  for (unsigned char b : after) EXPECT_TRUE(b != 0x00 && b != 0xFF);
  EXPECT_EQ(kGuardBytes % 256, 0u);  // keeps cudaMalloc's alignment for the buffer proper
}

TEST(GuardBand, LongerBandsExtendTheSamePattern) {
  // A band that fills a 2 MiB granule's slack is as far from a constant as a short one.
  const size_t two_mib = size_t{2} << 20;
  const auto longer = guard_pattern(GuardSide::Before, two_mib);
  ASSERT_EQ(longer.size(), two_mib);
  const auto shorter = guard_pattern(GuardSide::Before, kGuardBytes);
  EXPECT_TRUE(std::equal(shorter.begin(), shorter.end(), longer.begin()));
  for (unsigned char b : longer) ASSERT_TRUE(b != 0x00 && b != 0xFF);
  // Not a short period that a kernel writing a repeating value could match by chance.
  EXPECT_FALSE(std::equal(longer.begin(), longer.begin() + kGuardBytes, longer.begin() + kGuardBytes));
  EXPECT_TRUE(guard_pattern(GuardSide::After, 0).empty());
}

TEST(GuardBand, IntactBandHasNoDamage) {
  const auto p = guard_pattern(GuardSide::After, kGuardBytes);
  EXPECT_FALSE(find_damage(p.data(), p.data(), p.size()));
}

TEST(GuardBand, FindsEveryChangedByte) {
  const auto p = guard_pattern(GuardSide::After, kGuardBytes);
  std::vector<unsigned char> seen = p;
  const float two = 2.0f;  // two floats written just past the end, as a faulty kernel did
  std::memcpy(seen.data(), &two, 4);
  std::memcpy(seen.data() + 4, &two, 4);
  const auto d = find_damage(seen.data(), p.data(), p.size());
  ASSERT_TRUE(d);
  EXPECT_EQ(d->first, 0u);
  EXPECT_LE(d->last, 7u);
  EXPECT_GE(d->last, 4u);
  EXPECT_GE(d->changed, 2u);
  EXPECT_LE(d->changed, 8u);
}

TEST(GuardBand, AfterDamageNamesBufferAndOffsetPastTheEnd) {
  ByteDamage d;
  d.first = 0;
  d.last = 7;
  d.changed = 8;
  EXPECT_EQ(describe_guard_damage(GuardSide::After, d, "y", 4004, 4, kGuardBytes + 92),
            "out-of-bounds write: buffer y (4004 bytes, 4-byte elements): 8 bytes changed past its end, at byte "
            "offsets 4004..4011 (elements [1001]..[1002])");
}

TEST(GuardBand, BeforeDamageHasNegativeOffsets) {
  ByteDamage d;
  d.first = kGuardBytes - 2;
  d.last = kGuardBytes - 1;
  d.changed = 2;
  EXPECT_EQ(describe_guard_damage(GuardSide::Before, d, "O", 1024, 2, kGuardBytes),
            "out-of-bounds write: buffer O (1024 bytes, 2-byte elements): 2 bytes changed before its start, at "
            "byte offsets -2..-1 (elements [-1]..[-1])");
}

TEST(GuardBand, DamageInALongBeforeBandCountsFromTheBufferStart) {
  // One float written 64 KiB before a buffer whose before band is almost a whole 2 MiB granule.
  const size_t band = (size_t{2} << 20) - kGuardBytes - 16384;
  ByteDamage d;
  d.first = band - 65536;
  d.last = band - 65536 + 3;
  d.changed = 4;
  EXPECT_EQ(describe_guard_damage(GuardSide::Before, d, "y", 16384, 4, band),
            "out-of-bounds write: buffer y (16384 bytes, 4-byte elements): 4 bytes changed before its start, at "
            "byte offsets -65536..-65533 (elements [-16384]..[-16384])");
}

TEST(GuardBand, ModifiedInputNamesTheInput) {
  std::vector<unsigned char> pristine(64, 7), seen(64, 7);
  seen[9] = 1;
  seen[40] = 1;
  const auto d = find_damage(seen.data(), pristine.data(), seen.size());
  ASSERT_TRUE(d);
  EXPECT_EQ(describe_input_change(*d, "x", 64, 4),
            "input x was modified by the kernel: 2 of 64 bytes changed, first at byte offset 9 (element [2])");
}
