// The key loops: every tile of this thread's key range through the K/V pipeline and Path::tile.
//   key_range_loop   WN_KEYS=range / pingpong: key group g streams its own range of tiles through its own
//                    ring with its own GT threads and named barrier, so no group waits for another's tiles
//   pipelined_loop   PIPE_QK: Q K^T of tile j+1 issued before the softmax of tile j
//   tile_loop        every other config: one ring for the CTA (key groups, if any, split each tile's keys)
// A slot is refilled (issue, the tile STAGES - 1 ahead) only after every thread that reads it is done with it:
// the loop's barrier before the tile, or WG_PINGPONG's turn order (see TMA_PRODUCER).
#pragma once
#include "sdpa/barriers.cuh"
#include "sdpa/mainloop.cuh"
#include "sdpa/pipeline.cuh"

struct KeyLoop {
  const elem_t* sQ;
  elem_t* sK;  // slot 0 of this thread's K ring (its key group's with WN_KEYS=range)
  elem_t* sV;
  int t0;      // first (absolute) key tile of the range
  int n;       // tiles in the range
  int first_mask;  // the first tile that needs a mask
  int diag0;       // the causal diagonal's key for the block's first query row (its row + Skv - Sq)
  int S;           // keys (Skv): those at S and past are masked
  float sl2;   // scale * log2(e)
  int tid;
  long long* stamps;  // DIAG=3
  int it0 = 0;        // the ring's count of tile t0 (PERSIST: the CTA's tiles of earlier work tiles; slots run on)
};

// One key tile j of the loop: the masked variant from the first tile that needs a mask on.
template <class F>
__device__ __forceinline__ void run_tile(Path& path, const elem_t* sQ, const elem_t* tK, const elem_t* tV, int j,
                                         int first_mask, int diag0, int S, float sl2, F& issue) {
  if (j >= first_mask)
    path.template tile<true>(sQ, tK, tV, j * BN, diag0, S, sl2, issue);
  else
    path.template tile<false>(sQ, tK, tV, j * BN, diag0, S, sl2, issue);
}

// Started together the key groups run in phase (same work, same start); pingpong makes them take turns
// issuing MMAs (docs/experiments/21-*), and on TMA the order of the first requests starts group 0 first (docs/experiments/60-*).
// gper: tiles per group (a group with fewer still takes its turns with pingpong).
__device__ __forceinline__ void key_range_loop(Path& path, KvPipe& pipe, const KeyLoop& c, int g, int gtid, int gper) {
  [[maybe_unused]] long long* stamps = c.stamps;
  path.turn_start();
  for (int jj = 0; jj < (PINGPONG_KEYS ? gper : c.n); ++jj) {
    path.pp_last = jj == gper - 1;
    if (PINGPONG_KEYS && jj >= c.n) {
      path.turn_idle();
#if !defined(KF_BARRIER_PAD_OFF)
      group_sync(g);  // as many barriers as a working turn (see the end of the loop)
#endif
      continue;
    }
    const int j = c.t0 + jj;
    if constexpr (TMA_KV) {
      group_sync(g);  // the group's warps are done with tile jj-1's slot, which tile jn refills
      pipe.wait<(STAGES >= 2 ? STAGES - 2 : 0)>(jj);
    } else {
      pipe.wait<(STAGES >= 2 ? STAGES - 2 : 0)>(jj);
      group_sync(g);  // tile jj resident for the group; its warps are done with tile jj-1's slot
    }
    const int jn = jj + STAGES - 1;
    auto issue = [&] {
      if (!TMA_KV || gtid == 0) pipe.issue(jn);
    };
    KF_STAMP(2 + 2 * jj);
    run_tile(path, c.sQ, c.sK + (jj % STAGES) * KV_ELEMS, c.sV + (jj % STAGES) * KV_ELEMS, j, c.first_mask, c.diag0,
             c.S, c.sl2, issue);
    KF_STAMP(3 + 2 * jj);
  }
  // A group with fewer tiles (causal ranges) passes its own barrier once for each tile it lacks, so both groups
  // reach the merge having passed as many barriers: compute-sanitizer racecheck orders the merge's hand-off only
  // then (docs/experiments/key_range_merge_race.md). The group is idle here, waiting for the other at the merge.
  // KF_BARRIER_PAD_OFF (A/B only) leaves the padding out.
#if !defined(KF_BARRIER_PAD_OFF)
  if constexpr (!PINGPONG_KEYS)
    for (int jj = c.n; jj < gper; ++jj) group_sync(g);
#endif
}

// Q K^T of tile jj+1 is issued before the softmax of tile jj, so the tensor pipe works while the MUFU/ALU
// pipes do the softmax (one warp per scheduler cannot overlap them otherwise). Needs K_{jj+1} and V_jj
// resident: STAGES >= 3, one wait depth less than the plain loop.
// WG_PINGPONG (FA3's ping-pong and intra-warpgroup overlap together): the two warpgroups take turns for each
// MMA issue (Q K^T of tile 0, then per tile Q K^T of the next and P V of this one) and share no CTA barrier.
// The producer (TMA_PRODUCER, in the lagging warpgroup) refills tile jj-1's slot right after issuing its Q K^T
// of tile jj+1: the leader issued its own before (turn order), after its P V of tile jj-1 had completed, and
// the producer's warpgroup completed that P V too; K of tile jj-1 was done with before.
__device__ __forceinline__ void pipelined_loop(Path& path, KvPipe& pipe, const KeyLoop& c) {
  const int ntiles = c.n;
  float sc[MT][Path::kNTN][4], sn[MT][Path::kNTN][4];
  if constexpr (TMA_KV) {
    if (ntiles > 0) pipe.wait<(STAGES >= 2 ? STAGES - 2 : 0)>(0);
  } else {
    pipe.wait<(STAGES >= 2 ? STAGES - 2 : 0)>(0);
    __syncthreads();
  }
  if constexpr (WG_PP) path.turn_start();
  if (ntiles > 0) path.qk(c.sQ, c.sK, sc);
  for (int jj = 0; jj < ntiles; ++jj) {
    const int j = c.t0 + jj;
    const int jn = jj + STAGES - 1;
    if constexpr (WG_PP) {
      if (jj + 1 < ntiles) {
        pipe.wait<(STAGES >= 3 ? STAGES - 3 : 0)>(jj + 1);
        path.qk_issue(c.sQ, c.sK + ((jj + 1) % STAGES) * KV_ELEMS, sn);
        if (c.tid == TMA_PRODUCER) pipe.issue(jn);  // (jj 0: slot STAGES - 1, never used yet)
      }
    } else if constexpr (TMA_KV) {
      __syncthreads();  // every warp is done with tile jj-1's slot, which tile jn refills
      if (c.tid == 0 && jn < ntiles) {
        if (jj > 0) pipe.release(jj - 1);
        pipe.issue(jn);
      }
      if (jj + 1 < ntiles) pipe.wait<(STAGES >= 3 ? STAGES - 3 : 0)>(jj + 1);
    } else {
      pipe.wait<(STAGES >= 3 ? STAGES - 3 : 0)>(jj + 1);
      __syncthreads();  // tile jj+1 resident for all; every warp is done with tile jj-1's slot
      pipe.issue(jn);
    }
    if (!WG_PP && jj + 1 < ntiles) path.qk_issue(c.sQ, c.sK + ((jj + 1) % STAGES) * KV_ELEMS, sn);
    path.pp_last = jj == ntiles - 1;
    const elem_t* tV = c.sV + (jj % STAGES) * KV_ELEMS;
    if (j >= c.first_mask)
      path.template softmax_pv<true>(sc, tV, j * BN, c.diag0, c.S, c.sl2);
    else
      path.template softmax_pv<false>(sc, tV, j * BN, c.diag0, c.S, c.sl2);
    Path::qk_complete(sn);
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int nn = 0; nn < Path::kNTN; ++nn)
#pragma unroll
        for (int e = 0; e < 4; ++e) sc[mt][nn][e] = sn[mt][nn][e];
  }
}

// K/V tile t in slot t % STAGES. With KV_WAIT=split, K_t and V_t are separate commit groups (or mbarriers),
// so Q K^T can start before V_t has landed.
__device__ __forceinline__ void tile_loop(Path& path, KvPipe& pipe, const KeyLoop& c) {
  [[maybe_unused]] long long* stamps = c.stamps;
  const int ntiles = c.n, tid = c.tid;
  for (int jj = 0; jj < ntiles; ++jj) {
    const int j = c.t0 + jj;  // absolute key tile
    if (WG_PP && jj == 0) path.turn_start();
    path.pp_last = jj == ntiles - 1;
    const int slot = STAGES == 1 ? 0 : jj % STAGES;
    // DIAG=2 (timing diagnostic, wrong output): no K/V loads after the prologue's
    const int jn = (KF_DIAG_NO_RELOAD ? ntiles : jj + STAGES - 1);
    auto issue = [&] {  // the tile STAGES - 1 ahead, into the slot every warp is done with
      if constexpr (TMA_KV) {
        if (tid == TMA_PRODUCER) pipe.issue(jn);
      } else if constexpr (STAGES > 1) {
        pipe.issue(jn);
      }
    };
    if constexpr (TMA_KV) {
      // every warp is done with tile jj - 1, whose slot tile jn refills (WG_PINGPONG: the turns order it,
      // see TMA_PRODUCER)
      if constexpr (!WG_PP) __syncthreads();
      if (tid == TMA_PRODUCER && jj > 0 && jn < ntiles) pipe.release(jj - 1);
      // (DIAG=2: the prologue's tiles only)
      if (!KF_DIAG_NO_RELOAD || jj < STAGES - 1) pipe.wait<(STAGES >= 2 ? STAGES - 2 : 0)>(jj);
    } else if constexpr (STAGES == 1) {
      if (jj > 0) __syncthreads();
      pipe.issue_in_range(jj);
      pipe.wait<0>(jj);
      __syncthreads();
    } else {
      pipe.wait<(STAGES >= 2 ? STAGES - 2 : 0)>(jj);
      __syncthreads();
    }
    KF_STAMP(2 + 2 * jj);
    run_tile(path, c.sQ, c.sK + slot * KV_ELEMS, c.sV + slot * KV_ELEMS, j, c.first_mask, c.diag0, c.S, c.sl2, issue);
    KF_STAMP(3 + 2 * jj);
  }
}
