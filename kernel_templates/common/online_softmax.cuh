// Online-softmax helpers (FlashAttention style), base-2 domain: scores are pre-multiplied by
// scale * log2(e), so exp(x * scale - m) becomes exp2(x * scale_log2 - m_log2), one FFMA + MUFU.
#pragma once

namespace kf {

#define KF_LOG2E 1.4426950408889634f
#define KF_NEG_INF (-__int_as_float(0x7f800000))

__device__ __forceinline__ float fast_exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

// 1 / x in one MUFU op (rel. error ~2^-23): the epilogue's normalisation. 1.f / x is IEEE division, a
// refinement chain plus a slow-path branch that cost one warpgroup's O store ~290 cycles (docs/experiments/62-*).
__device__ __forceinline__ float fast_rcp(float x) {
  float y;
  asm("rcp.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

// 2^x for x <= 0 on the FMA pipe instead of the MUFU (FA4's trick: the MUFU does 16 exp2 per SM per
// clock, a quarter of the FP32 rate, and bounds the softmax). x = k + f with k = round(x), f in [-0.5, 0.5];
// 2^f from a degree-3 minimax polynomial (relative error 7.5e-5, below a 16-bit P's rounding); k goes
// straight into the exponent bits. x is clamped at -126 (so -inf, a masked score, gives ~1e-38, not 0): below
// that the exponent field would wrap into the sign bit.
__device__ __forceinline__ float poly_exp2(float x) {
  x = fmaxf(x, -126.f);
  const float t = x + 12582912.f;        // 1.5 * 2^23: round(x) lands in t's low mantissa bits
  const float f = x - (t - 12582912.f);  // in [-0.5, 0.5]
  const float p = fmaf(fmaf(fmaf(0.05517167f, f, 0.24261113f), f, 0.69326097f), f, 0.99992806f);
  return __int_as_float(__float_as_int(p) + (__float_as_int(t) << 23));  // t's exponent bits shift out
}

// Max / sum over the 4 lanes of a quad (the lanes that share one accumulator row in mma.sync).
__device__ __forceinline__ float quad_max(float v) {
  v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 1));
  v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 2));
  return v;
}
__device__ __forceinline__ float quad_sum(float v) {
  v += __shfl_xor_sync(0xffffffffu, v, 1);
  v += __shfl_xor_sync(0xffffffffu, v, 2);
  return v;
}
__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// One row's running state. update() takes the new tile's row max (raw scores), returns the
// factor the old accumulator must be multiplied by, and leaves m_use as the exponent offset.
struct OnlineRow {
  float m;  // running max in the log2-scaled domain (-inf until a finite score is seen)
  float l;  // running sum of exp2 (may be partial per lane; reduce at the end)
  __device__ __forceinline__ void init() { m = KF_NEG_INF; l = 0.f; }
  __device__ __forceinline__ float update(float tile_max_raw, float scale_log2, float& m_use) {
    const float m_new = fmaxf(m, tile_max_raw * scale_log2);
    m_use = (m_new == KF_NEG_INF) ? 0.f : m_new;  // a fully masked row so far: keep exp2 at 0
    const float alpha = fast_exp2(m - m_use);      // m = -inf -> 0
    m = m_new;
    return alpha;
  }
};

}  // namespace kf
