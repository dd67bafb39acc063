// PERSIST=1 (with WS=1): one CTA per SM walks the work tiles (kf::PersistentWork, common/tile_scheduler.cuh),
// so a CTA's prologue and store overlap its neighbours' instead of costing a wave each. The producer warpgroup
// loads every work tile's first K/V tile, then its Q (once every consumer warp released the previous Q, after
// its last MMA), then the rest of its K/V tiles, through the one ring, whose slots and phases run on across
// work tiles (KeyLoop::it0). The consumers run the overlap loop per work tile, release Q, and store O through
// staging rows of their own (sO): the next work tile's Q and first K/V land while they finish and store this one.
// Q's barriers: full (the producer's box loads, counted in bytes) and empty (one arrival per consumer warp), one of
// each per Q buffer (Q_BUFS: 1 here, 2 with PERSIST=2), 8 bytes apart.
// The producer is the same for PERSIST=2 (sdpa/persistent_stream.cuh): work tile k's Q goes to buffer k % Q_BUFS
// once the consumers released that buffer's previous Q.
#pragma once
#include "common/tile_scheduler.cuh"
#include "sdpa/merge_splits.cuh"
#include "sdpa/overlap_loop.cuh"
#include "sdpa/producer.cuh"

typedef kf::PersistentWork<BM, BN, CAUSAL> Work;

__device__ __forceinline__ void persistent_producer(KvPipe& pipe, elem_t* sQ, const kf::TmaDesc& tmQ, unsigned q_full,
                                                   unsigned q_empty, const Work& work, int S, int tid) {
#if defined(KF_KV_LOAD_TMA)
  if constexpr (PRODUCER_REGS > 0) kf::setmaxnreg_dec<PRODUCER_REGS>();
  if (tid != TMA_PRODUCER) return;
  int it = 0, k = 0;  // the ring's tile count, this CTA's work tile count
  for (int w = work.nth(0); w < work.total; w = work.nth(++k)) {
    int m0, bh, ntiles;
    work.at(w, S, m0, bh, ntiles);
    if (ntiles > 0) pipe.issue_at(it, 0, bh);  // its slot was freed during the previous work tile's loop
    const int buf = k % Q_BUFS, use = k / Q_BUFS;  // this Q buffer's use count
    if (use > 0) kf::mbar_wait(q_empty + 8 * buf, (use - 1) & 1);
    load_q(sQ + buf * Q_ELEMS, nullptr, tmQ, q_full + 8 * buf, m0, bh, S, tid);
    for (int t = 1; t < ntiles; ++t) pipe.issue_at(it + t, t * BN, bh);
    it += ntiles;
  }
#else
  (void)pipe, (void)sQ, (void)tmQ, (void)q_full, (void)q_empty, (void)work, (void)S, (void)tid;
#endif
}

__device__ __forceinline__ void persistent_consumer(KvPipe& pipe, elem_t* sQ, elem_t* sK, elem_t* sV, elem_t* sO,
                                                   elem_t* __restrict__ O, unsigned q_full, unsigned q_empty,
                                                   const Work& work, int S, float sl2, int tid) {
  consume_registers();
  const int warp = tid >> 5, lane = tid & 31;
  int it = 0, k = 0;
  for (int w = work.nth(0); w < work.total; w = work.nth(++k)) {
    int m0, bh, ntiles;
    work.at(w, S, m0, bh, ntiles);
    Path path;  // (fresh O, running max and sum, and turn state per work tile)
    path.init(warp, lane);
    if constexpr (TMA_KV) path.pipe = &pipe;
    kf::mbar_wait(q_full, k & 1);
    path.q_to_regs(sQ);
    const KeyLoop loop{sQ, sK, sV, 0, ntiles, Work::first_masked_tile(m0, S), m0, S, sl2, tid, nullptr, it};
    overlap_loop(path, pipe, loop);
    it += ntiles;
    kf::mbar_arrive_if(q_empty, lane == 0);  // this warp's MMAs are done with Q
    path.store(sO, O + (size_t)bh * S * HD, m0, S);
  }
}
