// How Q and the K/V tiles reach shared memory: the K/V pipeline (common/kv_pipeline.cuh) this config uses,
// one per key group with WN_KEYS=range (its GT threads), and Q's load.
#pragma once
#include "common/kv_pipeline.cuh"
#include "common/tile_scheduler.cuh"

// KV_LOAD=tma: the thread that issues the TMA loads. WG_PINGPONG: the first of the lagging warpgroup (1). It
// refills tile j - 1's slot right after issuing its own Q K^T of tile j (LOAD_ORDER=after_qk), which the
// leading warpgroup's Q K^T of tile j preceded in the turn order, and the leader issued that only after its
// P V of tile j - 1 had completed: both are done with the slot. (Issued before its Q K^T, the refill could
// overtake the leader's last P V.) STAGES >= 3 keeps the leader fed.
// WS=1: the first thread of the producer warpgroup (sdpa/producer.cuh) issues every load, Q's too.
constexpr int TMA_PRODUCER = WS ? NT : WG_PP ? NT - 128 : 0;
constexpr int Q_ISSUER = WS ? NT : 0;

// WS=1: every consumer warp releases each slot's K and V to the producer
typedef kf::TmaKvRing<elem_t, HD, BN, STAGES, MC, SPLIT_WAIT, (WS ? NW : 0)> TmaRing;
#if defined(KF_KV_LOAD_TMA)
typedef TmaRing KvPipe;
#else
// cp.async: every thread of the ring's key group; wgmma reads the tiles through the async proxy
typedef kf::CpAsyncKv<elem_t, LayKV, HD, BN, STAGES, VEC, (WN_RANGE ? GT : NT), SPLIT_WAIT, WGMMA> KvPipe;
#endif

// Q: every thread's cp.async (one commit group, before any K/V tile's), or (Q_LOAD=tma) one box load by
// thread 0 on its own mbarrier (initialised with the rings'), requested before any K/V tile (docs/experiments/
// 43-q-load-tma.md: faster for the key-range groups, a little slower for one warpgroup).
__device__ __forceinline__ void load_q(elem_t* sQ, const elem_t* Qh, const kf::TmaDesc& tmQ, unsigned q_mbar, int m0,
                                       int bh, int S, int tid) {
  if constexpr (TMA_Q) {
    if (tid == Q_ISSUER) {
      kf::mbar_arrive_expect_tx(q_mbar, BM * HD * (unsigned)sizeof(elem_t));
#pragma unroll
      for (int cb = 0; cb < HD / 64; ++cb)  // one box per 64-column block of LayQ (BM rows of 128 bytes)
        kf::tma_load_3d(kf::smem_u32(sQ) + cb * (BM * 128u), tmQ, cb * 64, m0, bh, q_mbar);
    }
  } else {
    kf::load_tile_async<BM, HD, VEC, NT, LayQ>(sQ, Qh, m0, S, tid);
    kf::cp_async_commit();
  }
}

// All threads, after the prologue's loads: Q resident for the whole CTA. Q by TMA: the CTA barrier first
// publishes every mbarrier init, then Q's mbarrier; cp.async: the groups issued after Q's (with K/V on
// cp.async, the first K/V tiles: STAGES - 1 of them, two groups each with KV_WAIT=split) may still be pending.
__device__ __forceinline__ void wait_q(unsigned q_mbar) {
  if constexpr (TMA_Q) {
    if constexpr (!WS) __syncthreads();  // (WS: the kernel's barrier before the producer's first issue did it)
    kf::mbar_wait(q_mbar, 0);
  } else {
    kf::cp_async_wait<(TMA_KV ? 0 : (WN_RANGE || !SPLIT_WAIT ? 1 : 2) * (STAGES - 1))>();
    if constexpr (WGMMA) kf::publish_to_async_proxy();
    __syncthreads();
  }
}

// This thread's K/V pipeline: its key group's ring (slot 0 at sK / sV), tiles [t0, t0 + n) of head bh. TMA: the
// ring's barriers at `bars` (initialised by one thread, see the kernel).
__device__ __forceinline__ void init_pipe(KvPipe& pipe, unsigned bars, elem_t* sK, elem_t* sV, const elem_t* Kh,
                                          const elem_t* Vh, int t0, int n, int S, int bh, int gtid,
                                          const kf::TmaDesc& tmK, const kf::TmaDesc& tmV) {
#if defined(KF_KV_LOAD_TMA)
  pipe.init(bars, sK, sV, t0 * BN, bh, n, tmK, tmV);
#else
  pipe.init(sK, sV, Kh, Vh, t0, n, S, gtid);
#endif
}

// KV_LOAD=tma: every ring's barriers and Q's initialised by one thread behind one fence: a fence.mbarrier_init
// costs ~150 cycles, and the key-range groups' two threads initialising and fencing at once took ~550
// (docs/experiments/60-*). With a multicast cluster, no peer multicasts before this CTA's barriers exist.
__device__ __forceinline__ void init_tma_barriers(unsigned ring_bars, unsigned q_mbar, int tid) {
  const int init_tid = WN_RANGE ? 0 : TMA_PRODUCER;
  if (tid == init_tid)
    for (int r = 0; r < RINGS; ++r) TmaRing::init_barriers(ring_bars + TmaRing::BARRIER_BYTES * r);
  if (TMA_Q && tid == Q_ISSUER) kf::mbar_init(q_mbar, 1);
  if (Q_BUFS == 2 && tid == Q_ISSUER) {  // Q's second full barrier, then both buffers' empty ones
    kf::mbar_init(q_mbar + 8, 1);
    kf::mbar_init(q_mbar + 16, NW);
    kf::mbar_init(q_mbar + 24, NW);
  } else if (PERSIST && tid == Q_ISSUER) {
    kf::mbar_init(q_mbar + 8, NW);  // Q's empty barrier: one arrival per consumer warp
  }
  if (tid == init_tid || (TMA_Q && tid == Q_ISSUER)) kf::fence_mbar_init();
  if (MC > 1) kf::cluster_sync_relaxed();
}

// The first STAGES - 1 K/V tiles of this thread's pipeline (every group's, with key-range groups on TMA).
__device__ __forceinline__ void request_first_tiles(KvPipe& pipe, unsigned ring_bars, elem_t* sK, elem_t* sV, int t0,
                                                    int ntiles, int bh, int tid, const kf::TmaDesc& tmK,
                                                    const kf::TmaDesc& tmV) {
  if constexpr (WN_RANGE && TMA_KV) {
    // One CTA barrier publishes thread 0's barrier inits; then thread 0 requests every group's first tiles,
    // stage by stage, group 0's before group 1's, and each group's first thread refills its own ring from
    // then on. An SM's first bytes arrive at ~64 B per cycle, so group 0 starts ~500 cycles ahead, and the
    // two groups run out of phase (started together they contend for the MUFU and tensor cores in the same
    // phases); group 0 finishes first and parks its partial (docs/experiments/59-* to 61-*).
    __syncwarp();  // (thread 0's warp reconverged before the barrier, which counts whole warps)
    __syncthreads();
    if (tid == 0) {
      TmaRing rg[WN];
      for (int gg = 0; gg < WN; ++gg) {
        const kf::KeyRange r(t0, ntiles, gg, WN);
        rg[gg].init(ring_bars + TmaRing::BARRIER_BYTES * gg, sK + gg * STAGES * KV_ELEMS, sV + gg * STAGES * KV_ELEMS,
                    r.first * BN, bh, r.count, tmK, tmV);
      }
      for (int st = 0; st < STAGES - 1; ++st)
        for (int gg = 0; gg < WN; ++gg) rg[gg].issue(st);
    }
  } else if constexpr (WS) {
    // the producer warpgroup requests every tile (sdpa/producer.cuh)
  } else if constexpr (TMA_KV) {
    if (tid == TMA_PRODUCER)
      for (int st = 0; st < min(STAGES - 1, ntiles); ++st) pipe.issue(st);
  } else if constexpr (STAGES > 1) {
#pragma unroll
    for (int st = 0; st < STAGES - 1; ++st) pipe.issue(st);
  }
}

// P V's wait for V with KV_WAIT=split (common/kv_pipeline.cuh): the TMA ring tracks each slot's phase in the
// ring object; cp.async's wait needs no state (so the cp.async pipeline's address is never taken and its
// fields stay in registers).
__device__ __forceinline__ void wait_v_of(KvPipe* pipe, const elem_t* sV) {
#if defined(KF_KV_LOAD_TMA)
  pipe->wait_v(sV);
#else
  (void)pipe;
  KvPipe::wait_v(sV);
#endif
}
