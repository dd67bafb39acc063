// PIPE_QK=2 (wgmma, K/V on TMA): FA3's intra-warpgroup overlap. One issue per tile jj puts two GEMMs in flight,
// Q K^T of tile jj+1 and P V of tile jj; the softmax of tile jj+1 runs while both execute, then P V's completion
// lets O be rescaled by tile jj+1's alpha. Unlike PIPE_QK=1 (which waits for P V right after issuing it), no
// GEMM of this warpgroup runs without softmax work beside it. P is double-buffered in registers: wgmma reads
// tile jj's P while the softmax packs tile jj+1's.
// WG_PINGPONG: the two warpgroups take turns for each issue (Q K^T of tile 0, then one per tile) and share no
// CTA barrier; the producer (TMA_PRODUCER, in the lagging warpgroup) refills tile jj-1's slot right after its
// issue of tile jj: the leader issued before it (turn order) after its wait for P V of tile jj-1, and the
// producer's warpgroup waited for that P V too. Without it, a CTA barrier per tile orders the refill.
#pragma once
#include "sdpa/key_loops.cuh"

#if defined(KF_MMA_WGMMA)
template <bool MASKED>
__device__ __forceinline__ void overlap_softmax(Path& path, float (&s)[MT][NTN][4], Path::PPacked& pk,
                                                float (&al)[MT][2], const KeyLoop& c, int jj) {
  path.template softmax<MASKED>(s, pk, al, (c.t0 + jj) * BN, c.m0, c.S, c.sl2);
}
__device__ __forceinline__ void overlap_softmax_any(Path& path, float (&s)[MT][NTN][4], Path::PPacked& pk,
                                                    float (&al)[MT][2], const KeyLoop& c, int jj) {
  if (c.t0 + jj >= c.first_mask)
    overlap_softmax<true>(path, s, pk, al, c, jj);
  else
    overlap_softmax<false>(path, s, pk, al, c, jj);
}

__device__ __forceinline__ void overlap_loop(Path& path, KvPipe& pipe, const KeyLoop& c) {
  static_assert(TMA_KV && P_EARLY && WN == 1, "PIPE_QK=2 needs KV_LOAD=tma, P_EARLY=1 and WARPS_N=1");
  const int ntiles = c.n;
  if (ntiles <= 0) return;  // (every warpgroup of the CTA has the same tiles: no turn is left hanging)
  float s[MT][NTN][4], al[MT][2];
  Path::PPacked pk;
  pipe.template wait<0>(0);
  path.turn_start();
  path.qk(c.sQ, c.sK, s);  // (its own turn, waited for)
  overlap_softmax_any(path, s, pk, al, c, 0);  // (O is zero: no rescale)
  for (int jj = 0; jj < ntiles; ++jj) {
    const bool more = jj + 1 < ntiles;
    const int jn = jj + STAGES - 1;  // refills tile jj-1's slot (jj 0: slot STAGES - 1, never used yet)
    if constexpr (!WG_PP) {
      __syncthreads();  // every warp is done with tile jj-1 (its P V waited for)
      if (c.tid == TMA_PRODUCER && jn < ntiles) pipe.issue(jn);
    }
    if (more) pipe.template wait<0>(jj + 1);  // K (and V unless KV_WAIT=split) of tile jj+1
    const elem_t* tV = c.sV + (jj % STAGES) * KV_ELEMS;
    wait_v_of(&pipe, tV);                      // KV_WAIT=split: V of tile jj
    path.pp_last = !more;
    path.fence_acc(path.o[0]);
    path.turn_begin();
    kf::wgmma_fence();
    if (more) {
      path.qk_mmas(c.sQ, c.sK + ((jj + 1) % STAGES) * KV_ELEMS, s);
      kf::wgmma_commit();
    }
    path.pv_mmas(s, pk, tV);
    kf::wgmma_commit();
    path.turn_end(true);
    if constexpr (WG_PP) {
      if (c.tid == TMA_PRODUCER) pipe.issue(jn);
    }
    if (more) {
      Path::PPacked pn;
      kf::wgmma_wait<1>();  // Q K^T of tile jj+1 (committed first)
      path.fence_acc(s[0]);
      overlap_softmax_any(path, s, pn, al, c, jj + 1);
      kf::wgmma_wait<0>();  // P V of tile jj
      path.fence_acc(path.o[0]);
      path.rescale(al);
#pragma unroll
      for (int nn = 0; nn < NTN; ++nn) {
        pk[0][nn][0] = pn[0][nn][0];
        pk[0][nn][1] = pn[0][nn][1];
      }
    } else {
      kf::wgmma_wait<0>();
      path.fence_acc(path.o[0]);
    }
  }
}
#else
__device__ __forceinline__ void overlap_loop(Path&, KvPipe&, const KeyLoop&) {}
#endif
