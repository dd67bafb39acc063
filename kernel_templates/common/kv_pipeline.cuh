// K/V pipelines: a STAGES-deep ring of BN-row tiles of K and V in shared memory, tile t of a range of
// n tiles (first key row t0 * BN) in slot t % STAGES, filled by every thread's cp.async (CpAsyncKv) or
// by one thread's TMA box loads completed on mbarriers (TmaKvRing). Both have one interface:
//   issue(t)          request tile t (nothing past the range). cp.async: every thread of the ring, one
//                     commit group per tile (two with SPLIT_WAIT: K, then V; a group is committed even
//                     when t is past the range, so the wait depths stay fixed); TMA: the producer thread.
//   wait<AHEAD>(t)    K (and V unless SPLIT_WAIT) of tile t resident, for this thread; AHEAD = tiles issued
//                     after t. cp.async: the caller's barrier then makes every thread's copies visible.
//   wait_v(sV)        SPLIT_WAIT: V of the tile at sV resident (after the tile STAGES - 1 ahead was issued).
//   release(t)        the slot of tile t may be refilled (TMA multicast: tells every CTA of the cluster).
// A slot may be refilled only when every consumer is done with it: the caller orders that (a barrier,
// or turn order), then issues. With a producer warpgroup (TmaKvRing's RELEASERS > 0) the ring orders it
// itself: each consumer warp releases K (release_k, after its Q K^T) and V (release_v, after its P V) of
// every tile, and the producer's issue waits for all of them before refilling a slot's K or V.
#pragma once
#include "common/cluster_sm90.cuh"
#include "common/cp_async.cuh"
#include "common/tma_sm90.cuh"

namespace kf {

// Makes this thread's completed cp.async writes visible to readers through the async proxy (wgmma);
// same instruction as wgmma_sm90.cuh's fence_proxy_async.
__device__ __forceinline__ void publish_to_async_proxy() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// ROWS x COLS 16-bit elements from global rows [row0, row0 + ROWS) of a [S][COLS] matrix into smem in
// layout Lay (rows >= S zero-filled), VEC elements per cp.async, by threads tid = 0 .. NTHR - 1.
template <int ROWS, int COLS, int VEC, int NTHR, class Lay, class T>
__device__ __forceinline__ void load_tile_async(T* s, const T* __restrict__ g, int row0, int S, int tid) {
  constexpr int CPR = COLS / VEC;  // chunks per row
  constexpr int TOTAL = ROWS * CPR;
  constexpr int ITERS = (TOTAL + NTHR - 1) / NTHR;
#pragma unroll
  for (int it = 0; it < ITERS; ++it) {
    const int i = it * NTHR + tid;
    if (TOTAL % NTHR == 0 || i < TOTAL) {
      const int r = i / CPR;
      const int c = (i % CPR) * VEC;
      const int gr = row0 + r;
      const bool ok = gr < S;
      const T* src = g + (size_t)(ok ? gr : 0) * COLS + c;
      cp_async<VEC * 2>(s + Lay::off(r, c), src, ok);
    }
  }
}

// The ring on cp.async. ASYNC_READ: consumers read through the async proxy (wgmma), so each wait
// publishes this thread's copies to it before the caller's barrier.
template <class T, class Lay, int COLS, int BN, int STAGES, int VEC, int NTHR, bool SPLIT_WAIT, bool ASYNC_READ>
struct CpAsyncKv {
  static constexpr int SLOT = BN * Lay::kRowElems;  // elements per slot
  T* sK;
  T* sV;
  const T* K;  // this head's [S][COLS] rows
  const T* V;
  int t0, n, S, tid;

  __device__ __forceinline__ void init(T* k_ring, T* v_ring, const T* k, const T* v, int first_tile, int tiles,
                                       int seq, int thread) {
    sK = k_ring;
    sV = v_ring;
    K = k;
    V = v;
    t0 = first_tile;
    n = tiles;
    S = seq;
    tid = thread;
  }
  __device__ __forceinline__ void issue(int t) const {
    const int slot = STAGES == 1 ? 0 : t % STAGES;
    if constexpr (SPLIT_WAIT) {
      if (t < n) load_tile_async<BN, COLS, VEC, NTHR, Lay>(sK + slot * SLOT, K, (t0 + t) * BN, S, tid);
      cp_async_commit();
      if (t < n) load_tile_async<BN, COLS, VEC, NTHR, Lay>(sV + slot * SLOT, V, (t0 + t) * BN, S, tid);
      cp_async_commit();
    } else {
      if (t < n) {
        load_tile_async<BN, COLS, VEC, NTHR, Lay>(sK + slot * SLOT, K, (t0 + t) * BN, S, tid);
        load_tile_async<BN, COLS, VEC, NTHR, Lay>(sV + slot * SLOT, V, (t0 + t) * BN, S, tid);
      }
      cp_async_commit();
    }
  }
  // issue(t) for a tile known to be in the range (t < n): no bounds test (STAGES 1 loads the tile it is about to use).
  __device__ __forceinline__ void issue_in_range(int t) const {
    const int slot = STAGES == 1 ? 0 : t % STAGES;
    load_tile_async<BN, COLS, VEC, NTHR, Lay>(sK + slot * SLOT, K, (t0 + t) * BN, S, tid);
    if constexpr (SPLIT_WAIT) cp_async_commit();
    load_tile_async<BN, COLS, VEC, NTHR, Lay>(sV + slot * SLOT, V, (t0 + t) * BN, S, tid);
    cp_async_commit();
  }
  static __device__ __forceinline__ void publish() {
    if constexpr (ASYNC_READ) publish_to_async_proxy();
  }
  // Groups committed after K_t that may stay pending: V_t and two per later tile (SPLIT_WAIT), else one per later tile.
  template <int AHEAD>
  __device__ __forceinline__ void wait(int) const {
    cp_async_wait<(SPLIT_WAIT ? 2 * AHEAD + 1 : AHEAD)>();
    publish();
  }
  // SPLIT_WAIT: V_t resident for the whole CTA; the STAGES - 1 tiles issued after it may be pending.
  static __device__ __forceinline__ void wait_v(const T*) {
    if constexpr (SPLIT_WAIT) {
      cp_async_wait<(STAGES == 1 ? 0 : 2 * (STAGES - 1))>();
      publish();
      __syncthreads();
    }
  }
  __device__ __forceinline__ void release(int) const {}
};

// The ring on TMA. One thread of each CTA (the producer) loads its 1 / MC slice of every tile (rows
// [rank * BN / MC, ...)), multicast to the whole cluster when MC > 1; a slot's full mbarrier completes when
// all of the tile's K and V bytes have landed, from every slice (SPLIT_WAIT: K on it, V on a second one,
// waited for just before P V). With MC > 1 a slot is refilled only once every CTA of the cluster has said
// it is done with it (release) on the refilling CTA's empty mbarrier. Box loads past S read zeros.
// Barriers: 24 * STAGES bytes at `tail` (full, empty, full_v; 8 bytes each per slot), 32 * STAGES with
// RELEASERS > 0 (empty_v too).
// RELEASERS > 0 (WS=1, a producer warpgroup): K and V of a slot are refilled apart, each once RELEASERS
// consumer warps released it (release_k, release_v), so the next tile's K loads while this tile's P V
// still reads V: two stages keep the consumers fed (needs SPLIT_WAIT, MC 1).
// A slot holds a tile in kf::Sw128Layout<COLS, BN>: one box of 64 columns x SLICE rows per 64-column block
// (rows 128 bytes apart, blocks BN * 128 bytes apart), each landing 1024-byte aligned in its block.
template <class T, int COLS, int BN, int STAGES, int MC, bool SPLIT_WAIT, int RELEASERS = 0>
struct TmaKvRing {
  static_assert(COLS % 64 == 0 && sizeof(T) == 2, "boxes of 64 16-bit columns (128-byte swizzle rows)");
  static_assert(RELEASERS == 0 || (SPLIT_WAIT && MC == 1), "consumer releases need KV_WAIT=split and MC 1");
  static constexpr int SLICE = BN / MC;  // rows of a tile this CTA loads
  static constexpr int BLOCKS = COLS / 64;  // 64-column blocks: one box each
  static constexpr unsigned BLOCK_BYTES = BN * 128u;
  static constexpr unsigned TILE_BYTES = 2u * BN * COLS * sizeof(T);
  static constexpr unsigned SLOT_BYTES = BN * COLS * (unsigned)sizeof(T);
  static constexpr unsigned BARRIER_BYTES = (RELEASERS > 0 ? 32 : 24) * STAGES;
  unsigned full0 = 0, empty0 = 0, full_v0 = 0;  // STAGES mbarriers each, 8 bytes apart (empty_v: full_v0 + 8 * STAGES)
  unsigned k_slice = 0, v_slice = 0;  // smem address of this CTA's slice in ring slot 0
  unsigned v_ring = 0;                // smem address of V's ring slot 0
  unsigned v_phase = 0;               // SPLIT_WAIT: bit s = parity of slot s's next V wait
  int row0 = 0, bh = 0, n = 0;        // key row of this CTA's slice of tile 0; head (b * H + h); tiles
  const TmaDesc* mapK = nullptr;
  const TmaDesc* mapV = nullptr;

  // One thread: the ring's mbarriers at `tail`. The caller fences (fence_mbar_init) once after all of its
  // barrier inits, and its next CTA (MC == 1) or cluster (MC > 1) barrier publishes them.
  static __device__ __forceinline__ void init_barriers(unsigned tail) {
#pragma unroll
    for (int st = 0; st < STAGES; ++st) {
      mbar_init(tail + 8 * st, 1);
      mbar_init(tail + 8 * STAGES + 8 * st, RELEASERS > 0 ? RELEASERS : MC);
      mbar_init(tail + 16 * STAGES + 8 * st, 1);
      if constexpr (RELEASERS > 0) mbar_init(tail + 24 * STAGES + 8 * st, RELEASERS);
    }
  }
  // All threads: the ring's addresses; tiles [key0 / BN, ...) of head `head`, `tiles` of them.
  __device__ __forceinline__ void init(unsigned tail, const T* sK, const T* sV, int key0, int head, int tiles,
                                       const TmaDesc& tmK, const TmaDesc& tmV) {
    const unsigned rank = MC > 1 ? cluster_rank() : 0u;  // (a split-KV cluster's rank is no slice)
    full0 = tail;
    empty0 = tail + 8 * STAGES;
    full_v0 = tail + 16 * STAGES;
    v_ring = smem_u32(sV);
    k_slice = smem_u32(sK) + rank * SLICE * 128u;
    v_slice = smem_u32(sV) + rank * SLICE * 128u;
    row0 = key0 + (int)rank * SLICE;
    bh = head;
    n = tiles;
    mapK = &tmK;
    mapV = &tmV;
  }
  // The producer: this CTA's slice of tile t into slot t % STAGES.
  __device__ __forceinline__ void issue(int t) const {
    if (t >= n) return;
    issue_at(t, row0 + t * BN, bh);
  }
  // The producer: the tile whose slice starts at key row `row` of head `head` as the ring's t-th tile (slot
  // t % STAGES). A persistent CTA counts its tiles across work tiles, so slots and phases run on.
  __device__ __forceinline__ void issue_at(int t, int row, int head) const {
    const int st = t % STAGES;
    const unsigned full = full0 + 8 * st, full_v = SPLIT_WAIT ? full_v0 + 8 * st : full, off = st * SLOT_BYTES;
    const bool refill = (MC > 1 || RELEASERS > 0) && t >= STAGES;
    const unsigned refill_parity = (t / STAGES - 1) & 1;
    if (refill) mbar_wait(empty0 + 8 * st, refill_parity);
    mbar_arrive_expect_tx(full, SPLIT_WAIT ? TILE_BYTES / 2 : TILE_BYTES);
    load(k_slice + off, *mapK, row, head, full);
    if (RELEASERS > 0 && refill) mbar_wait(full_v0 + 8 * STAGES + 8 * st, refill_parity);  // empty_v
    if constexpr (SPLIT_WAIT) mbar_arrive_expect_tx(full_v, TILE_BYTES / 2);
    load(v_slice + off, *mapV, row, head, full_v);
  }
  __device__ __forceinline__ void issue_in_range(int t) const { issue(t); }
  // Every 64-column block of this CTA's slice of rows [row, row + SLICE), one box each.
  __device__ __forceinline__ void load(unsigned dst, const TmaDesc& map, int row, int head, unsigned mbar) const {
#pragma unroll
    for (int cb = 0; cb < BLOCKS; ++cb) {
      if constexpr (MC > 1)
        tma_load_3d_multicast(dst + cb * BLOCK_BYTES, map, cb * 64, row, head, mbar, (unsigned short)((1u << MC) - 1));
      else
        tma_load_3d(dst + cb * BLOCK_BYTES, map, cb * 64, row, head, mbar);
    }
  }
  template <int AHEAD>
  __device__ __forceinline__ void wait(int t) const {
    mbar_wait(full0 + 8 * (t % STAGES), (t / STAGES) & 1);
  }
  // Each tile's V is waited for once, in order, so a parity bit per slot tracks the phase.
  __device__ __forceinline__ void wait_v(const T* sV) {
    if constexpr (SPLIT_WAIT) {
      const unsigned slot = (smem_u32(sV) - v_ring) / SLOT_BYTES;
      mbar_wait(full_v0 + 8 * slot, (v_phase >> slot) & 1u);
      v_phase ^= 1u << slot;
    }
  }
  // The producer, after every thread of the CTA is done with tile t: with MC > 1, tells every CTA of the
  // cluster that this CTA is done with the slot, so they may multicast its next tile into it.
  __device__ __forceinline__ void release(int t) const {
    if constexpr (MC > 1) {
#pragma unroll
      for (int r = 0; r < MC; ++r) mbar_arrive_remote(empty0 + 8 * (t % STAGES), (unsigned)r);
    }
  }
  // RELEASERS > 0: a consumer warp is done reading K, or V, of tile t; every thread calls, `me` (one per
  // warp) arrives.
  __device__ __forceinline__ void release_k(int t, bool me) const {
    if constexpr (RELEASERS > 0) mbar_arrive_if(empty0 + 8 * (t % STAGES), me);
  }
  __device__ __forceinline__ void release_v(int t, bool me) const {
    if constexpr (RELEASERS > 0) mbar_arrive_if(full_v0 + 8 * STAGES + 8 * (t % STAGES), me);
  }
};

}  // namespace kf
