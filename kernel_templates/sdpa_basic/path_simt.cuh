// sdpa_basic's SIMT path (no tensor cores): each warp walks its rows; lanes split the tile's keys for Q.K and
// the head dim for P.V.
#pragma once
#include "common/online_softmax.cuh"

#if defined(KF_MMA_SIMT)
static_assert(BN % 32 == 0, "simt path: BLOCK_N must be a multiple of 32");
static_assert(RPW <= 16, "simt path: at most 16 rows per warp");
constexpr int DPL = HD / 32;  // output columns per lane

struct Path {
  float o[RPW][DPL];
  float m[RPW], l[RPW];
  int warp, lane;

  __device__ __forceinline__ void init(int w, int ln) {
    warp = w;
    lane = ln;
#pragma unroll
    for (int r = 0; r < RPW; ++r) {
      m[r] = KF_NEG_INF;
      l[r] = 0.f;
#pragma unroll
      for (int e = 0; e < DPL; ++e) o[r][e] = 0.f;
    }
  }
  __device__ __forceinline__ void q_to_regs(const elem_t*) {}

  template <bool MASK, class F>
  __device__ __forceinline__ void tile(const elem_t* sQ, const elem_t* sK, const elem_t* sV, int n0, int m0, int S,
                                       float sl2, F&& issue) {
    using namespace kf;
    issue();
#pragma unroll
    for (int r = 0; r < RPW; ++r) {
      const int rl = warp * RPW + r;
      float sc[BN / 32];
      float mx = KF_NEG_INF;
#pragma unroll
      for (int i = 0; i < BN / 32; ++i) {
        const int key = lane + 32 * i;
        float acc = 0.f;
#pragma unroll 8
        for (int d = 0; d < HD; d += 2) {
          const unsigned qq = *reinterpret_cast<const unsigned*>(sQ + Lay::off(rl, d));
          const unsigned kk = *reinterpret_cast<const unsigned*>(sK + Lay::off(key, d));
          const elem_t* qe = reinterpret_cast<const elem_t*>(&qq);
          const elem_t* ke = reinterpret_cast<const elem_t*>(&kk);
          acc = fmaf(TR::to_float(qe[0]), TR::to_float(ke[0]), acc);
          acc = fmaf(TR::to_float(qe[1]), TR::to_float(ke[1]), acc);
        }
        if (MASK) {
          const int col = n0 + key;
          if (col >= S || (CAUSAL && col > m0 + rl)) acc = KF_NEG_INF;
        }
        sc[i] = acc;
        mx = fmaxf(mx, acc);
      }
      mx = warp_max(mx);
      const float m_new = fmaxf(m[r], mx * sl2);
      const float m_use = m_new == KF_NEG_INF ? 0.f : m_new;
      const float alpha = fast_exp2(m[r] - m_use);
      m[r] = m_new;
      float rs = 0.f;
#pragma unroll
      for (int i = 0; i < BN / 32; ++i) {
        sc[i] = fast_exp2(fmaf(sc[i], sl2, -m_use));
        rs += sc[i];
      }
      l[r] = l[r] * alpha + warp_sum(rs);
#pragma unroll
      for (int e = 0; e < DPL; ++e) o[r][e] *= alpha;
      if (r == 0) wait_v();  // uniform across the CTA: every warp has RPW rows
#pragma unroll
      for (int i = 0; i < BN / 32; ++i) {
#pragma unroll 4
        for (int j = 0; j < 32; ++j) {
          const float p = __shfl_sync(0xffffffffu, sc[i], j);
          const int key = 32 * i + j;
#pragma unroll
          for (int e = 0; e < DPL; ++e) o[r][e] = fmaf(p, TR::to_float(sV[Lay::off(key, lane + 32 * e)]), o[r][e]);
        }
      }
    }
  }

  __device__ __forceinline__ void store(elem_t*, elem_t* __restrict__ Oh, int m0, int S) {
#pragma unroll
    for (int r = 0; r < RPW; ++r) {
      const int gr = m0 + warp * RPW + r;
      const float inv = l[r] > 0.f ? 1.f / l[r] : 0.f;
      if (gr < S) {
#pragma unroll
        for (int e = 0; e < DPL; ++e) Oh[(size_t)gr * HD + lane + 32 * e] = TR::from_float(o[r][e] * inv);
      }
    }
  }
};
#endif  // KF_MMA_SIMT
