// The merges of partial results (common/partials.cuh) and the store of O after the key loop:
//   key groups of one CTA (WARPS_N > 1): merge_key_groups_and_store
//   split-KV CTAs of one query block (KV_SPLITS > 1): merge_splits_and_store, by KV_MERGE
#pragma once
#include "common/cluster_sm90.cuh"
#include "sdpa/barriers.cuh"
#include "sdpa/mainloop.cuh"

// Two key-range groups (WN_KEYS=range / pingpong, WARPS_N 2): group 0, which starts first and so finishes
// first (its tiles are requested first), parks its (m, l) and its unnormalised O in its own K ring (its tiles
// are done; group 1's ring may still be in use) and hands them over at a barrier; group 1 merges them
// into its registers and stores O as one group would. One barrier and half the shared-memory traffic of the
// column split below: the key-range CTA at S512 ~7770 cycles against ~8590 (docs/experiments/57-*). The
// partial travels as split-KV's do (save_partial, merge_partials), as a second slot.
// Ordering (docs/experiments/key_range_merge_race.md): merge_pass and merge_take are the CTA barrier (the two
// groups are the whole CTA), so group 1 reads the partial only after all of group 0's writes. On the mma.sync
// path each warp reads K with its own ldmatrix, so a warp of group 0 that finished early could overwrite K rows
// another warp of its group still reads: a CTA barrier first orders every warp's last K read before any partial
// store (on the wgmma path the last Q K^T is one warpgroup-wide operation every warp waited for). Both are CTA
// barriers because compute-sanitizer racecheck models those: a named barrier that only group 0 passes (the
// former group_sync(0)) put the groups out of step in its model and it reported every partial read, and a
// bar.arrive hand-off likewise. KF_TEST_MERGE_LATE / KF_TEST_MERGE_NO_BARRIER: test-only, see that note.
__device__ __forceinline__ void merge_pair_store(Path& p, float* cbuf0, elem_t* sQ, elem_t* __restrict__ Oh, int m0,
                                                 int S) {
  if constexpr (!WGMMA) __syncthreads();
  if (p.wn == 0) {
#if defined(KF_TEST_MERGE_LATE)
    for (const long long t0 = clock64(); clock64() - t0 < KF_TEST_MERGE_LATE;) {
    }
#endif
    p.save_partial<true>(cbuf0, cbuf0 + BM * HD);  // split-KV's fragment-order layout
#if !defined(KF_TEST_MERGE_NO_BARRIER)
    merge_pass();
#endif
    return;
  }
#if !defined(KF_TEST_MERGE_NO_BARRIER)
  merge_take();
#endif
  const float2* part = reinterpret_cast<const float2*>(cbuf0);
  p.merge_partials<2>([&](int, int kind, int i) { return part[kind == 1 ? i : BM * HD / 2 + i]; }, 0);
  p.store(sQ, Oh, m0, S);
}

// Key groups merged by columns: group G finalises the column blocks [G * DB, (G + 1) * DB): every group parks
// its (m, l) and its partial O of the other groups' columns in smem (over the K/V ring, idle by now), each
// merges and normalises its own columns into sQ, and O is stored from there. (Group 0 merging all of O alone
// took ~840 cycles after the key-range groups at S512, docs/experiments/45-*.) The group is a template argument
// so that o is only ever indexed at compile time (a runtime index would move it to local memory).
template <int G>
__device__ __forceinline__ void merge_columns_store_as(Path& p, float* cbuf, elem_t* sQ, elem_t* __restrict__ Oh,
                                                       int m0, int S, int tid) {
  constexpr int CLD = HD + 8;  // floats per row: a quad's float2 stores of one row then hit distinct banks
  constexpr int DB = NTD / WN;  // 8-column blocks per group
  static_assert(NTD % WN == 0, "WARPS_N must divide D / 8");
  const int g = p.lane >> 2, t = p.lane & 3;
  float* part = cbuf;                                             // [WN][BM][CLD]
  float2* ml = reinterpret_cast<float2*>(cbuf + WN * BM * CLD);  // [WN][BM]: (m, l)
  float lsum[MT][2];
  __syncthreads();  // every warp is done with the K/V ring
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const int rl = p.warp * RPW + mt * 16 + g + 8 * r;
      lsum[mt][r] = kf::quad_sum(p.row[mt][r].l);
      if (t == 0) ml[G * BM + rl] = make_float2(p.row[mt][r].m, lsum[mt][r]);
#pragma unroll
      for (int d = 0; d < NTD; ++d)
        if (d / DB != G)
          *reinterpret_cast<float2*>(part + (G * BM + rl) * CLD + d * 8 + 2 * t) =
              make_float2(p.o[mt][d][2 * r], p.o[mt][d][2 * r + 1]);
    }
  __syncthreads();
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const int rl = p.warp * RPW + mt * 16 + g + 8 * r;
      float2 mlw[WN], v[WN][DB];  // every load issued before the first use
#pragma unroll
      for (int w = 0; w < WN; ++w) {
        if (w == G) continue;
        mlw[w] = ml[w * BM + rl];
#pragma unroll
        for (int k = 0; k < DB; ++k)
          v[w][k] = *reinterpret_cast<const float2*>(part + (w * BM + rl) * CLD + (G * DB + k) * 8 + 2 * t);
      }
      float mtot = p.row[mt][r].m;
#pragma unroll
      for (int w = 0; w < WN; ++w)
        if (w != G) mtot = fmaxf(mtot, mlw[w].x);
      const float muse = mtot == KF_NEG_INF ? 0.f : mtot;
      const float f0 = kf::fast_exp2(p.row[mt][r].m - muse);
      float l = lsum[mt][r] * f0;
      float2 acc[DB];
#pragma unroll
      for (int k = 0; k < DB; ++k)
        acc[k] = make_float2(p.o[mt][G * DB + k][2 * r] * f0, p.o[mt][G * DB + k][2 * r + 1] * f0);
#pragma unroll
      for (int w = 0; w < WN; ++w) {
        if (w == G) continue;
        const float f = kf::fast_exp2(mlw[w].x - muse);
        l += mlw[w].y * f;
#pragma unroll
        for (int k = 0; k < DB; ++k) {
          acc[k].x = fmaf(v[w][k].x, f, acc[k].x);
          acc[k].y = fmaf(v[w][k].y, f, acc[k].y);
        }
      }
      const float inv = l > 0.f ? __frcp_rn(l) : 0.f;
#pragma unroll
      for (int k = 0; k < DB; ++k)
        *reinterpret_cast<unsigned*>(sQ + LayQ::off(rl, (G * DB + k) * 8 + 2 * t)) =
            TR::pack2(acc[k].x * inv, acc[k].y * inv);
    }
  __syncthreads();  // every group's columns of O staged in sQ
  kf::store_tile_from_smem<LayQ, HD, BM, NT>(sQ, Oh, m0, S, tid);
}

// WARPS_N > 1 (KV_SPLITS is 1): the key groups merge and write O. Two key-range groups: group 0 hands its
// partial to group 1 (docs/experiments/57-*, 60-*) where its K ring can hold it; otherwise the column split.
__device__ __forceinline__ void merge_key_groups_and_store(Path& p, elem_t* sQ, elem_t* sK, elem_t* __restrict__ Oh,
                                                           int m0, int S, int tid) {
  constexpr bool PAIR_FITS = STAGES * KV_ELEMS * (int)sizeof(elem_t) >= (BM * HD + BM * 8) * 4;
  float* cbuf = reinterpret_cast<float*>(sK);
  if constexpr (WN == 2 && WN_RANGE && PAIR_FITS) {
    merge_pair_store(p, cbuf, sQ, Oh, m0, S);
  } else {
    if (p.wn == 0) merge_columns_store_as<0>(p, cbuf, sQ, Oh, m0, S, tid);
    else if (p.wn == 1) merge_columns_store_as<1 % WN>(p, cbuf, sQ, Oh, m0, S, tid);
    else if (p.wn == 2) merge_columns_store_as<2 % WN>(p, cbuf, sQ, Oh, m0, S, tid);
    else merge_columns_store_as<3 % WN>(p, cbuf, sQ, Oh, m0, S, tid);
  }
}
