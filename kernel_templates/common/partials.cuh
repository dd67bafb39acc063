// Partial results of attention over part of the keys, and their merge: split-KV CTAs, or key groups of
// one CTA. A partial is (O unnormalised, m, l) per query row; partials g merge as m = max_g m_g,
// O = sum_g O_g 2^(m_g - m), l = sum_g l_g 2^(m_g - m) (base-2 softmax, kf::OnlineRow).
//
// The accumulators are mma.sync fragments (common/mma_sm80.cuh; wgmma's accumulators are laid out the
// same): per warp MT 16-row m-tiles, NTD 8-column output tiles, o[mt][d][2 r + e] at row g + 8 r, column
// 8 d + 2 t + e (g = lane / 4, t = lane % 4); row[mt][r].l is a per-lane partial sum (quad-summed here).
// A partial is stored in fragment order, so every access is one coalesced float2 per lane:
//   O part [warp][mt][d][r][lane] (float2), (m, l) [warp][mt][r][lane] (float2).
#pragma once
#include "common/cluster_sm90.cuh"
#include "common/online_softmax.cuh"

namespace kf {

// put(kind, index, value) for each float2 of this thread's partial: kind 0 = (m, l), 1 = O.
template <int MT, int NTD, class PUT>
__device__ __forceinline__ void for_each_partial(const float (&o)[MT][NTD][4], const OnlineRow (&row)[MT][2], int warp,
                                                 int lane, PUT put) {
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const float l = quad_sum(row[mt][r].l);
      put(0, ((warp * MT + mt) * 2 + r) * 32 + lane, make_float2(row[mt][r].m, l));
#pragma unroll
      for (int d = 0; d < NTD; ++d)
        put(1, (((warp * MT + mt) * NTD + d) * 2 + r) * 32 + lane, make_float2(o[mt][d][2 * r], o[mt][d][2 * r + 1]));
    }
}

// This thread's partial into shared memory (SMEM) or global scratch (cache-global stores): O part at op,
// (m, l) at ml.
template <bool SMEM, int MT, int NTD>
__device__ __forceinline__ void save_partial(const float (&o)[MT][NTD][4], const OnlineRow (&row)[MT][2], int warp,
                                             int lane, float* __restrict__ op, float* __restrict__ ml) {
  float2* o2 = reinterpret_cast<float2*>(op);
  float2* m2 = reinterpret_cast<float2*>(ml);
  for_each_partial(o, row, warp, lane, [&](int kind, int i, float2 v) {
    float2* dst = (kind == 1 ? o2 : m2) + i;
    if (SMEM) *dst = v;
    else __stcg(dst, v);
  });
}

// This thread's partial, in save_partial's layout, into a peer CTA's smem (cluster addresses o_base and
// m_base) with st.async, each store counted on the peer's mbarrier (cluster address mbar).
template <int MT, int NTD>
__device__ __forceinline__ void push_partial(const float (&o)[MT][NTD][4], const OnlineRow (&row)[MT][2], int warp,
                                             int lane, unsigned o_base, unsigned m_base, unsigned mbar) {
  for_each_partial(o, row, warp, lane,
                   [&](int kind, int i, float2 v) { push_st2((kind == 1 ? o_base : m_base) + i * 8, v, mbar); });
}

// Merges the partials of slots 0 .. SLOTS - 1 except `self` (this thread's own, in o and row) into o and
// row. ld(slot, kind, index) returns a float2 of a slot's partial (kind 0 = (m, l), 1 = O; indices as in
// save_partial). Afterwards row[.][.].l holds the merged sum on lane t == 0 of each quad and 0 elsewhere,
// so a later quad sum (the epilogue's) gives it again.
template <int SLOTS, int MT, int NTD, class LD>
__device__ __forceinline__ void merge_partials(float (&o)[MT][NTD][4], OnlineRow (&row)[MT][2], int warp, int lane,
                                               LD ld, int self) {
  const int t = lane & 3;
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const int mi = ((warp * MT + mt) * 2 + r) * 32 + lane;
      float2 oml[SLOTS];
      float mtot = row[mt][r].m;
#pragma unroll
      for (int sp = 0; sp < SLOTS; ++sp) {
        oml[sp] = sp == self ? make_float2(KF_NEG_INF, 0.f) : ld(sp, 0, mi);
        mtot = fmaxf(mtot, oml[sp].x);
      }
      const float muse = mtot == KF_NEG_INF ? 0.f : mtot;
      const float f0 = fast_exp2(row[mt][r].m - muse);
      float l = quad_sum(row[mt][r].l) * f0;
#pragma unroll
      for (int d = 0; d < NTD; ++d) {
        o[mt][d][2 * r] *= f0;
        o[mt][d][2 * r + 1] *= f0;
      }
#pragma unroll
      for (int sp = 0; sp < SLOTS; ++sp) {
        if (sp == self) continue;
        // every load of the slot is issued before the first is used: the loads (DSMEM or L2) are
        // latency-bound, and one-at-a-time load + FMA chains cost a round trip each
        float2 v[NTD];
#pragma unroll
        for (int d = 0; d < NTD; ++d) v[d] = ld(sp, 1, (((warp * MT + mt) * NTD + d) * 2 + r) * 32 + lane);
        const float f = fast_exp2(oml[sp].x - muse);
        l += oml[sp].y * f;
#pragma unroll
        for (int d = 0; d < NTD; ++d) {
          o[mt][d][2 * r] = fmaf(v[d].x, f, o[mt][d][2 * r]);
          o[mt][d][2 * r + 1] = fmaf(v[d].y, f, o[mt][d][2 * r + 1]);
        }
      }
      row[mt][r].l = (t == 0) ? l : 0.f;
    }
}

}  // namespace kf
