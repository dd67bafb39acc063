// Host-side pieces of the worker: element conversions, seeded inputs, the comparison, and
// the order statistics behind the timing. No GPU needed.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "eval/stats.hpp"
#include "eval/worker/gate.hpp"
#include "eval/worker/timing.hpp"
#include "family/buffers.hpp"

using namespace kf;

TEST(DType, Names) {
  EXPECT_EQ(dtype_from_string("bf16"), DType::BF16);
  EXPECT_EQ(dtype_size(DType::F16), 2u);
  EXPECT_EQ(dtype_size(DType::I32), 4u);
  EXPECT_STREQ(to_string(DType::F32), "f32");
  EXPECT_THROW(dtype_from_string("f64"), std::invalid_argument);
}

TEST(DType, HalfConversionsRoundToNearestEven) {
  EXPECT_EQ(f32_to_f16(1.0f), 0x3c00);
  EXPECT_EQ(f32_to_f16(-2.0f), 0xc000);
  EXPECT_EQ(f32_to_f16(65504.0f), 0x7bff);
  EXPECT_EQ(f32_to_f16(1e6f), 0x7c00);                 // overflow -> inf
  EXPECT_EQ(f32_to_f16(5.9604645e-8f), 0x0001);        // smallest subnormal
  EXPECT_EQ(f32_to_f16(2.0e-8f), 0x0000);              // below half of it
  EXPECT_EQ(f32_to_f16(1.0f + 1.0f / 2048), 0x3c00);   // tie -> even
  EXPECT_EQ(f32_to_f16(1.0f + 3.0f / 2048), 0x3c02);   // tie -> even (up)
  EXPECT_TRUE(std::isnan(f16_to_f32(f32_to_f16(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_TRUE(std::isnan(f16_to_f32(0xffff)));  // the poison pattern
  // Every finite half survives a round trip through float.
  for (uint32_t h = 0; h < 0x10000; ++h) {
    if (((h >> 10) & 0x1f) == 0x1f) continue;
    ASSERT_EQ(f32_to_f16(f16_to_f32(static_cast<uint16_t>(h))), h) << h;
  }
  EXPECT_FLOAT_EQ(f16_to_f32(0x0001), 5.9604645e-8f);
  EXPECT_FLOAT_EQ(f16_to_f32(0x3555), 0.33325195f);
}

TEST(DType, Bfloat16Conversions) {
  EXPECT_EQ(f32_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(f32_to_bf16(-1.5f), 0xbfc0);
  EXPECT_FLOAT_EQ(bf16_to_f32(0x3f80), 1.0f);
  EXPECT_TRUE(std::isnan(bf16_to_f32(0xffff)));
  EXPECT_TRUE(std::isnan(bf16_to_f32(f32_to_bf16(std::numeric_limits<float>::quiet_NaN()))));
  // 1 + 2^-8 is a tie between 1 and 1 + 2^-7: to even (1).
  EXPECT_EQ(f32_to_bf16(1.0f + 1.0f / 256), 0x3f80);
  EXPECT_EQ(f32_to_bf16(1.0f + 3.0f / 256), 0x3f82);
}

TEST(RandomFill, DeterministicInRangeAndNameDependent) {
  const size_t n = (size_t{1} << 20) * 2 + 123;  // spans several generator chunks
  const auto a = random_fill(DType::F32, n, -1, 1, 2.0, 7, "A");
  const auto b = random_fill(DType::F32, n, -1, 1, 2.0, 7, "A");
  const auto c = random_fill(DType::F32, n, -1, 1, 2.0, 7, "B");
  const auto d = random_fill(DType::F32, n, -1, 1, 2.0, 8, "A");
  ASSERT_EQ(a.size(), n * 4);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_NE(a, d);
  const auto f = to_floats(DType::F32, a.data(), n);
  double sum = 0, lo = 1e9, hi = -1e9;
  size_t zeros = 0;
  for (float v : f) {
    sum += v;
    lo = std::min<double>(lo, v);
    hi = std::max<double>(hi, v);
    zeros += v == 0.0f;
  }
  EXPECT_GE(lo, -2.0);
  EXPECT_LT(hi, 2.0);
  EXPECT_LT(lo, -1.99);
  EXPECT_GT(hi, 1.99);
  EXPECT_NEAR(sum / static_cast<double>(n), 0.0, 0.01);
  EXPECT_LT(zeros, 10u);  // never zeros: they hide unwritten outputs
}

TEST(RandomFill, HalfAndIntegerLayouts) {
  const auto h = random_fill(DType::F16, 1000, 0, 1, 1.0, 1, "x");
  const auto bf = random_fill(DType::BF16, 1000, 0, 1, 1.0, 1, "x");
  const auto i = random_fill(DType::I32, 1000, 0, 10, 1.0, 1, "x");
  ASSERT_EQ(h.size(), 2000u);
  ASSERT_EQ(bf.size(), 2000u);
  const auto hf = to_floats(DType::F16, h.data(), 1000);
  const auto bff = to_floats(DType::BF16, bf.data(), 1000);
  const auto iv = to_floats(DType::I32, i.data(), 1000);
  for (size_t k = 0; k < 1000; ++k) {
    EXPECT_GE(hf[k], 0.0f);
    EXPECT_LE(hf[k], 1.0f);
    EXPECT_NEAR(hf[k], bff[k], 1.0f / 64);  // the same draws in two precisions
    EXPECT_EQ(iv[k], std::floor(iv[k]));
    EXPECT_GE(iv[k], 0.0f);
    EXPECT_LT(iv[k], 10.0f);
  }
}

TEST(Compare, PassesWithinTolerance) {
  const std::vector<float> ref = {1, 2, 3, 4};
  const std::vector<float> out = {1.001f, 2, 3, 4};
  const Comparison c = compare(out, ref);
  EXPECT_NEAR(c.max_abs, 0.001, 1e-6);
  EXPECT_EQ(c.worst_index, 0u);
  EXPECT_EQ(c.non_finite, 0u);
  EXPECT_NEAR(c.rel_l2, 0.001 / std::sqrt(30.0), 1e-6);
  EXPECT_FALSE(gate_failure(c, {0.01, 0.01}, "C", "here"));
  auto fail = gate_failure(c, {0.0001, 0.01}, "C", "shape N=4, campaign");
  ASSERT_TRUE(fail);
  EXPECT_NE(fail->find("output C (shape N=4, campaign)"), std::string::npos) << *fail;
  EXPECT_NE(fail->find("max_abs"), std::string::npos) << *fail;
  EXPECT_EQ(fail->find('\n'), std::string::npos);
  auto rel = gate_failure(c, {0.01, 1e-6}, "C", "x");
  ASSERT_TRUE(rel);
  EXPECT_NE(rel->find("rel_l2"), std::string::npos) << *rel;
}

TEST(Compare, NaNAndInfAlwaysFail) {
  const std::vector<float> ref = {1, 2, 3};
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Comparison c = compare({1, nan, std::numeric_limits<float>::infinity()}, ref);
  EXPECT_EQ(c.non_finite, 2u);
  EXPECT_EQ(c.first_non_finite, 1u);
  auto fail = gate_failure(c, {1e9, 1e9}, "O", "w");
  ASSERT_TRUE(fail);
  EXPECT_NE(fail->find("2 of 3 elements NaN/Inf"), std::string::npos) << *fail;
  EXPECT_NE(fail->find("[1]"), std::string::npos) << *fail;
}

TEST(Compare, ReferenceNaNIsReportedAsSuch) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Comparison c = compare({1, 2}, {1, nan});
  auto fail = gate_failure(c, {1, 1}, "O", "w");
  ASSERT_TRUE(fail);
  EXPECT_NE(fail->find("reference"), std::string::npos);
}

TEST(Stats, QuantilesInterpolate) {
  const std::vector<double> s = {1, 2, 3, 4, 5};
  EXPECT_DOUBLE_EQ(quantile_sorted(s, 0.5), 3);
  EXPECT_DOUBLE_EQ(quantile_sorted(s, 0.1), 1.4);
  EXPECT_DOUBLE_EQ(quantile_sorted(s, 0.9), 4.6);
  EXPECT_DOUBLE_EQ(quantile_sorted({7}, 0.3), 7);
  EXPECT_DOUBLE_EQ(quantile_sorted({}, 0.5), 0);
}

TEST(Stats, MedianCiRanksMatchTheBinomialTable) {
  // Small samples have no 95% interval narrower than the range.
  for (size_t n = 1; n <= 5; ++n) EXPECT_EQ(median_ci_ranks(n), std::make_pair(size_t{0}, n - 1)) << n;
  EXPECT_EQ(median_ci_ranks(6), std::make_pair(size_t{0}, size_t{5}));
  EXPECT_EQ(median_ci_ranks(9), std::make_pair(size_t{1}, size_t{7}));    // x(2)..x(8)
  EXPECT_EQ(median_ci_ranks(10), std::make_pair(size_t{1}, size_t{8}));   // x(2)..x(9)
  EXPECT_EQ(median_ci_ranks(20), std::make_pair(size_t{5}, size_t{14}));  // x(6)..x(15)
  EXPECT_EQ(median_ci_ranks(100), std::make_pair(size_t{39}, size_t{60}));  // x(40)..x(61)
  // Coverage holds empirically too.
  std::mt19937_64 rng(3);
  std::exponential_distribution<double> dist(1.0);
  const double true_median = std::log(2.0);
  int covered = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    std::vector<double> x(30);
    for (double& v : x) v = dist(rng);
    const Summary s = summarize(x);
    covered += s.ci_lo <= true_median && true_median <= s.ci_hi;
  }
  EXPECT_GE(covered, 1880);  // >= 94%
}

TEST(Stats, SummaryOrderingAndStopRule) {
  std::vector<double> x;
  for (int i = 0; i < 50; ++i) x.push_back(100.0 + (i % 7) * 0.1);
  const Summary s = summarize(x);
  EXPECT_LE(s.p10, s.median);
  EXPECT_LE(s.median, s.p90);
  EXPECT_LE(s.ci_lo, s.median);
  EXPECT_GE(s.ci_hi, s.median);
  EXPECT_TRUE(ci_within(s, 0.01));
  EXPECT_FALSE(ci_within(summarize({1, 2, 3}), 0.01));
  EXPECT_FALSE(ci_within(Summary{}, 0.5));
}

TEST(Timing, CombineRoundsTakesMedians) {
  std::vector<TimingStats> rounds(5);
  const double med[] = {10, 12, 11, 30, 9};
  for (int i = 0; i < 5; ++i) {
    rounds[i].median_us = med[i];
    rounds[i].plain_median_us = med[i] + 2;
    rounds[i].reps = 10;
    rounds[i].launches_per_rep = 100;
  }
  const TimingStats t = combine_rounds(rounds);
  EXPECT_DOUBLE_EQ(t.median_us, 11);
  EXPECT_DOUBLE_EQ(t.plain_median_us, 13);
  EXPECT_EQ(t.reps, 50);
  EXPECT_EQ(t.launches_per_rep, 100);
  EXPECT_LE(t.ci_lo_us, t.median_us);
  EXPECT_GE(t.ci_hi_us, t.median_us);
  EXPECT_EQ(t.power_w, 0);  // no round measured it
  EXPECT_EQ(t.energy_uj, 0);
}

// Power is the median over the rounds that measured it; energy a launch is that power times the median time.
TEST(Timing, CombineRoundsTakesTheMedianPowerOfTheRoundsThatMeasuredIt) {
  std::vector<TimingStats> rounds(4);
  const double med[] = {10, 12, 11, 9}, watts[] = {300, 0, 500, 400};
  for (int i = 0; i < 4; ++i) {
    rounds[i].median_us = med[i];
    rounds[i].power_w = watts[i];
  }
  const TimingStats t = combine_rounds(rounds);
  EXPECT_DOUBLE_EQ(t.median_us, 10.5);
  EXPECT_DOUBLE_EQ(t.power_w, 400);
  EXPECT_DOUBLE_EQ(t.energy_uj, 400 * 10.5);
}
