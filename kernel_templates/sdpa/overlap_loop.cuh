// PIPE_QK=2 (wgmma, K/V on TMA): FA3's intra-warpgroup overlap. One issue per tile jj puts two GEMMs in flight,
// Q K^T of tile jj+1 and P V of tile jj, and the softmax of tile jj+1 runs while both execute. No instruction
// but a wgmma touches a register of an in-flight wgmma (else ptxas serialises the wgmmas): the softmax leaves P
// in the score registers once Q K^T is done, and only after P V completed is O rescaled by tile jj+1's alpha
// and P packed for the next P V (FA3's order for head dims up to 128).
// WG_PINGPONG: the two warpgroups take turns for each issue (Q K^T of tile 0, then one per tile) and share no
// CTA barrier; the producer (TMA_PRODUCER, in the lagging warpgroup) refills tile jj-1's slot right after its
// issue of tile jj: the leader issued before it (turn order) after its wait for P V of tile jj-1, and the
// producer's warpgroup waited for that P V too. Without it, a CTA barrier per tile orders the refill.
// WS=1: the producer warpgroup refills; each warp releases K of a tile once its Q K^T completed and V once
// its P V completed (release_k / release_v, lane 0), and never waits on a refill of its own.
#pragma once
#include "sdpa/key_loops.cuh"

#if defined(KF_MMA_WGMMA) && KF_PIPE_QK == 2
// softmax of tile jj's scores, P left in s (FA3's order packs it later)
__device__ __forceinline__ void overlap_softmax(Path& path, float (&s)[MT][NTN][4], float (&al)[MT][2],
                                                const KeyLoop& c, int jj) {
  Path::PPacked unused;
  if (c.t0 + jj >= c.first_mask)
    path.template softmax<true, false>(s, unused, al, (c.t0 + jj) * BN, c.diag0, c.S, c.sl2);
  else
    path.template softmax<false, false>(s, unused, al, (c.t0 + jj) * BN, c.diag0, c.S, c.sl2);
}

// The last tile's P V alone (the ring's it-th tile, V ring at sV), in the group's last turn (group 1 keeps it:
// pp_last). WS: V's slot released (a persistent CTA's producer refills it for later work).
__device__ __forceinline__ void last_pv(Path& path, KvPipe& pipe, const float (&s)[MT][NTN][4],
                                       const Path::PPacked& pk, const elem_t* sV, int it, bool lane0) {
  const elem_t* tV = sV + (it % STAGES) * KV_ELEMS;
  wait_v_of(&pipe, tV);
  path.pp_last = true;
  path.turn_begin();
  kf::wgmma_fence();
  path.pv_mmas(s, pk, tV);
  kf::wgmma_commit();
  path.turn_end(true);
  kf::wgmma_wait<0>();
  path.fence_acc(path.o[0]);
  if constexpr (WS) pipe.release_v(it, lane0);
}

__device__ __forceinline__ void overlap_loop(Path& path, KvPipe& pipe, const KeyLoop& c) {
  static_assert(TMA_KV && P_EARLY && !EXP2_PAIR && WN == 1, "PIPE_QK=2 needs KV_LOAD=tma, P_EARLY=1, EXP2 != pair, WARPS_N=1");
  const int ntiles = c.n;
  if (ntiles <= 0) return;  // (every warpgroup of the CTA has the same tiles: no turn is left hanging)
  const bool lane0 = (c.tid & 31) == 0;  // WS: each warp's releases
  float s[MT][NTN][4], al[MT][2];
  Path::PPacked pk;
  // (ring slots and phases count from c.it0: 0, unless a persistent CTA ran earlier work tiles)
  const int it0 = c.it0;
  pipe.template wait<0>(it0);
  path.turn_start();
  path.qk(c.sQ, c.sK + (it0 % STAGES) * KV_ELEMS, s);  // (its own turn, waited for)
  if constexpr (WS) pipe.release_k(it0, lane0);
  overlap_softmax(path, s, al, c, 0);
  Path::pack(s, pk);
  // (the last tile's issue, P V alone, is peeled off: a wgmma issue under a branch makes ptxas serialise them)
  for (int jj = 0; jj + 1 < ntiles; ++jj) {
    const int jn = jj + STAGES - 1;  // refills tile jj-1's slot (jj 0: slot STAGES - 1, never used yet)
    if constexpr (!WG_PP && !WS) {
      __syncthreads();  // every warp is done with tile jj-1 (its P V waited for)
      if (c.tid == TMA_PRODUCER && jn < ntiles) {
        if (jj > 0) pipe.release(jj - 1);  // KV_MCAST > 1: the cluster's producers wait for every CTA's release
        pipe.issue(jn);
      }
    }
    pipe.template wait<0>(it0 + jj + 1);  // K (and V unless KV_WAIT=split) of tile jj+1
    const elem_t* tV = c.sV + ((it0 + jj) % STAGES) * KV_ELEMS;
    wait_v_of(&pipe, tV);  // KV_WAIT=split: V of tile jj
    path.turn_begin();
    kf::wgmma_fence();
    path.qk_mmas(c.sQ, c.sK + ((it0 + jj + 1) % STAGES) * KV_ELEMS, s);
    kf::wgmma_commit();
    path.pv_mmas(s, pk, tV);
    kf::wgmma_commit();
    path.turn_end(true);  // (pp_last is false)
    if constexpr (WG_PP && !WS) {
      if (c.tid == TMA_PRODUCER) pipe.issue(jn);
    }
    kf::wgmma_wait<1>();  // Q K^T of tile jj+1 (committed first)
    path.fence_acc(s[0]);
    if constexpr (WS) pipe.release_k(it0 + jj + 1, lane0);
    overlap_softmax(path, s, al, c, jj + 1);
    kf::wgmma_wait<0>();  // P V of tile jj
    path.fence_acc(path.o[0]);
    if constexpr (WS) pipe.release_v(it0 + jj, lane0);
    path.rescale(al);  // O to tile jj+1's running max
    Path::pack(s, pk);
  }
  last_pv(path, pipe, s, pk, c.sV, it0 + ntiles - 1, lane0);
}
#else
__device__ __forceinline__ void overlap_loop(Path&, KvPipe&, const KeyLoop&) {}
#endif
