// PERSIST=1 (with WS=1): one CTA per SM walks the work tiles (kf::PersistentWork, common/tile_scheduler.cuh),
// so a CTA's prologue and store overlap its neighbours' instead of costing a wave each. The producer warpgroup
// loads every work tile's Q as soon as its buffer is free, then the work tile's K/V tiles, through the one ring,
// whose slots and phases run on across work tiles (KeyLoop::it0). The consumers run the overlap loop per work
// tile and store O; the next work tile's Q is already loading (config.cuh, Q_BUFS and Q_EARLY):
//   Q in smem: two Q buffers, work tile k's in buffer k % 2; O is staged in the finished buffer (each warp in its
//     own rows, whose last reader, its warpgroup's last Q K^T, completed before that warpgroup's last P V), which
//     then goes back to the producer;
//   Q in registers: one buffer, released as soon as every consumer warp copied its rows; O has staging rows of
//     its own (sO).
// (Before docs/experiments/71-*, Q had one buffer, released after the work tile's last MMA, with K/V's first tile
// ahead of it: 1-3% slower.)
// Q's barriers: full (the producer's box loads, counted in bytes) per buffer, then empty (one arrival per
// consumer warp) per buffer, 8 bytes apart.
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
  // (S: query rows; the keys, their causal offset and each work tile's K/V head are the Work's)
#if defined(KF_KV_LOAD_TMA)
  if constexpr (PRODUCER_REGS > 0) kf::setmaxnreg_dec<PRODUCER_REGS>();
  if (tid != TMA_PRODUCER) return;
  int it = 0, k = 0;  // the ring's tile count, this CTA's work tile count
  for (int w = work.nth(0); w < work.total; w = work.nth(++k)) {
    int m0, bh, kvh, ntiles;
    work.at(w, m0, bh, kvh, ntiles);
    // Q first where its buffer was released long before (Q_BUFS 2, Q_EARLY); else K/V's first tile, whose slot
    // was freed during the previous work tile's loop, goes ahead of a wait for the last MMA of that work tile
    constexpr bool q_first = Q_BUFS == 2 || Q_EARLY;
    if (!q_first && ntiles > 0) pipe.issue_at(it, 0, kvh);
    const int buf = k % Q_BUFS, use = k / Q_BUFS;  // this Q buffer's use count
    if (use > 0) kf::mbar_wait(q_empty + 8 * buf, (use - 1) & 1);
    load_q(sQ + buf * Q_ELEMS, nullptr, tmQ, q_full + 8 * buf, m0, bh, S, tid);
    if (q_first && ntiles > 0) pipe.issue_at(it, 0, kvh);
    for (int t = 1; t < ntiles; ++t) pipe.issue_at(it + t, t * BN, kvh);
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
    int m0, bh, kvh, ntiles;
    work.at(w, m0, bh, kvh, ntiles);
    Path path;  // (fresh O, running max and sum, and turn state per work tile)
    path.init(warp, lane);
    if constexpr (TMA_KV) path.pipe = &pipe;
    const int buf = k % Q_BUFS;
    elem_t* q = sQ + buf * Q_ELEMS;
    kf::mbar_wait(q_full + 8 * buf, (k / Q_BUFS) & 1);
    path.q_to_regs(q);
    if constexpr (Q_EARLY) {
      __syncwarp();  // every lane's copy done (ordered before lane 0's release) before the producer refills
      kf::mbar_arrive_if(q_empty, lane == 0);
    }
    const KeyLoop loop{q, sK, sV, 0, ntiles, work.first_masked_tile(m0), m0 + work.off, work.Skv, sl2, tid, nullptr, it};
    overlap_loop(path, pipe, loop);
    it += ntiles;
    elem_t* __restrict__ Ow = O + (size_t)bh * S * HD;
    if constexpr (Q_BUFS == 2) {
      path.store(q, Ow, m0, S);  // staged in this warp's rows of the finished Q buffer
      kf::publish_to_async_proxy();  // (fence.proxy.async) the staging writes before the TMA write of the next Q
      __syncwarp();                  // every lane's staging reads and writes done before lane 0's release
      kf::mbar_arrive_if(q_empty + 8 * buf, lane == 0);
    } else {
      if constexpr (!Q_EARLY) kf::mbar_arrive_if(q_empty, lane == 0);  // this warp's MMAs are done with Q
      path.store(sO, Ow, m0, S);
    }
  }
}
