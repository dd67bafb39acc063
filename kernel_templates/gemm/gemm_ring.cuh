// The wgmma path's operand ring: STAGES slots in shared memory, each holding one k-tile (64 values of k)
// of A and of B, filled by one producer thread's TMA loads and read by the consumer warpgroups' wgmma.
//
// Slot layouts (both the 128-byte swizzle of kf::Sw128Layout, which TMA writes with a 128-byte-swizzle map
// and wgmma reads through 128-byte-swizzle descriptors; every block starts 1024-byte aligned):
//   A: BM rows x 64 k, K-major: row r is 128 bytes at r * 128, 8-row groups 1024 bytes apart. One box
//      (64, BM) of the map over A [M][K].
//   B: 64 k-rows x BN n, N-major: BN / 64 blocks of 64 k-rows x 64 n (8 KiB each, one box (64, 64) of
//      the map over B [K][N]), k-row r of block j at j * 8192 + r * 128.
//      B_NK (B stored [N][K], a layer's weights): BN n-rows x 64 k, K-major like A, one box (64, BN) of the
//      map over B [N][K].
// Barriers, 8 bytes each, after the slots: full[s] completes when the producer's arrival (expect_tx) and
// all of slot s's bytes have landed; empty[s] when every consumer warp has released slot s (RELEASERS
// arrivals), after its wgmma reads of it completed.
// MCAST > 1 (a cluster of MCAST CTAs on MCAST neighbouring tile-rows, which read the same B tile): each
// CTA's producer loads its own A and 1 / MCAST of B (nk: BN / MCAST n-rows; kn: 64 / MCAST k-rows of each
// 64-column block) and multicasts that part into the same offset of every CTA's slot, counted on each
// CTA's full[s]; so B crosses L2 -> SM once per cluster instead of once per CTA. A producer writes into its
// peers' slots, so empty[s] counts the releases of every consumer warp of the cluster (a warp arrives on
// each CTA's empty[s]) and a producer refills slot s only once all of them are done with it.
// The i-th k-tile of the ring (a persistent CTA counts on across its output tiles, so the ring never
// drains between tiles) uses slot i % STAGES in phase (i / STAGES) & 1; both sides walk the slots with a
// RingPos instead of dividing.
#pragma once
#include "common/cluster_mbarrier_sm90.cuh"
#include "common/tma_2d_sm90.cuh"
#include "common/wgmma_sm90.cuh"

namespace kf {

template <int STAGES>
struct RingPos {
  int slot = 0;
  unsigned phase = 0;
  __device__ __forceinline__ void advance() {
    if (++slot == STAGES) {
      slot = 0;
      phase ^= 1u;
    }
  }
};

template <int BM, int BN, int STAGES, int RELEASERS, bool B_NK = false, int MCAST = 1>
struct GemmRing {
  static_assert(MCAST == 1 || MCAST == 2, "a multicast cluster of one or two CTAs");
  static_assert(BM % 64 == 0 && BM <= 256, "A's box: BM rows, at most 256");
  static_assert(BN % 64 == 0, "B's boxes: 64 columns each");
  static constexpr unsigned A_BYTES = BM * 128u;  // one slot of A
  static constexpr unsigned B_BYTES = BN * 128u;  // one slot of B
  static constexpr unsigned B_BLOCK = 64 * 128u;  // one 64-column block of B's slot
  static constexpr unsigned TILE_BYTES = A_BYTES + B_BYTES;
  static constexpr unsigned B_PART = B_NK ? B_BYTES / MCAST : B_BLOCK / MCAST;  // one CTA's part of B (of a block)
  static constexpr int B_PART_ROWS = B_PART / 128;                              // its rows (n or k) in the box
  static constexpr unsigned SMEM_BYTES = STAGES * TILE_BYTES + 16u * STAGES;  // slots, then full and empty
  unsigned a0, b0, full0, empty0;  // smem addresses: A's slot 0, B's slot 0, full[0], empty[0]

  // base: 1024-byte aligned.
  __device__ __forceinline__ explicit GemmRing(unsigned base) {
    a0 = base;
    b0 = base + STAGES * A_BYTES;
    full0 = base + STAGES * TILE_BYTES;
    empty0 = full0 + 8 * STAGES;
  }
  // One thread, before the CTA barrier that publishes them.
  __device__ __forceinline__ void init_barriers() const {
#pragma unroll
    for (int s = 0; s < STAGES; ++s) {
      mbar_init(full0 + 8 * s, 1);
      mbar_init(empty0 + 8 * s, RELEASERS * MCAST);
    }
    fence_mbar_init();
  }

  // The producer thread: k-tile k0 .. k0 + 63 of A's rows m0 .. and B's columns n0 .. into slot p.slot, once
  // the consumers released its previous use (the first pass waits on parity 1, which a fresh barrier
  // reports complete). rank: this CTA's rank in its multicast cluster (0 without one).
  __device__ __forceinline__ void load(const RingPos<STAGES>& p, const TmaDesc& tmA, const TmaDesc& tmB, int m0,
                                       int n0, int k0, unsigned rank) const {
    const unsigned full = full0 + 8 * p.slot;
    mbar_wait(empty0 + 8 * p.slot, p.phase ^ 1u);
    mbar_arrive_expect_tx(full, TILE_BYTES);  // the peers' parts of B count here too
    tma_load_2d(a0 + p.slot * A_BYTES, tmA, k0, m0, full);
    const unsigned b = b0 + p.slot * B_BYTES + rank * B_PART;
    if constexpr (B_NK) {
      load_b(b, tmB, k0, n0 + rank * B_PART_ROWS, full);
    } else {
#pragma unroll
      for (int j = 0; j < BN / 64; ++j) load_b(b + j * B_BLOCK, tmB, n0 + 64 * j, k0 + rank * B_PART_ROWS, full);
    }
  }
  __device__ __forceinline__ static void load_b(unsigned dst, const TmaDesc& tmB, int c0, int c1, unsigned full) {
    if constexpr (MCAST > 1)
      tma_load_2d_multicast(dst, tmB, c0, c1, full, (unsigned short)((1u << MCAST) - 1));
    else
      tma_load_2d(dst, tmB, c0, c1, full);
  }

  // A consumer: slot p.slot holds its k-tile.
  __device__ __forceinline__ void wait_full(const RingPos<STAGES>& p) const { mbar_wait(full0 + 8 * p.slot, p.phase); }
  // A consumer warp is done reading slot `slot` (every lane calls; `me`, one lane per warp, arrives, on every
  // CTA's empty barrier of the slot with a multicast cluster).
  __device__ __forceinline__ void release(int slot, bool me) const {
    if constexpr (MCAST > 1) {
#pragma unroll
      for (unsigned r = 0; r < MCAST; ++r) mbar_arrive_remote_if(empty0 + 8 * slot, r, me);
    } else {
      mbar_arrive_if(empty0 + 8 * slot, me);
    }
  }

  // wgmma descriptors of slot `slot`: A from row `row` (a multiple of 64) of the tile, K-major (SBO: 8-row
  // groups 1024 bytes apart); B N-major (LBO: 64-column blocks B_BLOCK apart; SBO: 8-row groups of k), or
  // with B_NK K-major as A is. A k16 step adds 32 bytes to A's start address and 16 rows (2048 bytes) to an
  // N-major B's, 32 bytes to a K-major one's (a_step, b_step).
  __device__ __forceinline__ unsigned long long desc_a(int slot, int row) const {
    return wgmma_desc(a0 + slot * A_BYTES + row * 128u, 16, 1024);
  }
  __device__ __forceinline__ unsigned long long desc_b(int slot) const {
    return B_NK ? wgmma_desc(b0 + slot * B_BYTES, 16, 1024) : wgmma_desc(b0 + slot * B_BYTES, B_BLOCK, 1024);
  }
  // Descriptor offsets (the start address field counts 16-byte units and cannot carry: smem < 256 KiB).
  static __device__ __forceinline__ constexpr unsigned long long a_step(int kk, int m64) { return (kk * 32u + m64 * 64u * 128u) >> 4; }
  static __device__ __forceinline__ constexpr unsigned long long b_step(int kk) { return (kk * (B_NK ? 32u : 2048u)) >> 4; }
};

}  // namespace kf
