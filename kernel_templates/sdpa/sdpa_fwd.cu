// kforge family sdpa_fwd: scaled-dot-product attention forward, O = softmax(Q K^T * scale) V.
// Layout [B, H, S, D] contiguous, 16-bit elements (f16 or bf16), fp32 accumulation.
//
// FlashAttention-2 structure: each CTA owns BLOCK_M query rows of one (b, h); each warp owns
// BLOCK_M / WARPS of them; K/V are streamed once through a STAGES-deep ring of BLOCK_N-row tiles
// (cp.async, or TMA with mbarriers); the softmax is online (running max and sum), in the base-2 domain.
//
// Parameters (#define KF_<NAME>, see docs/family_spec.md):
//   KF_BLOCK_M, KF_BLOCK_N, KF_WARPS, KF_STAGES, KF_VEC (elements per cp.async: 2, 4, 8)
//   KF_MMA_MMA | KF_MMA_WGMMA | KF_MMA_WMMA | KF_MMA_SIMT      compute path (wgmma: sm_90a, one
//                 warpgroup per 64 query rows of a key group, 16 rows per warp, swizzled layout)
//   KF_LAYOUT_PLAIN | KF_LAYOUT_PADDED | KF_LAYOUT_SWIZZLED   shared-memory tile layout
//   KF_Q_IN_REGS | KF_Q_IN_SMEM                 (mma path) Q fragments kept in registers or re-read
//   KF_KV_WAIT_JOINT | KF_KV_WAIT_SPLIT         one cp.async group per K/V tile, or K and V apart
//   KF_WARPS_N  (mma path) key groups of warps over the same query rows; their (m, l, O) merge through smem
//   KF_WN_KEYS_TILE | KF_WN_KEYS_RANGE | KF_WN_KEYS_PINGPONG  (WARPS_N > 1) how the key groups share
//                 the keys: each takes BLOCK_N / WARPS_N keys of every tile (in lockstep, CTA barriers), or
//                 each streams its own contiguous range of whole key tiles through its own K/V ring (own
//                 barrier; each runs 1 / WARPS_N of the tiles), or (wgmma, WARPS_N == 2) range with FA3's
//                 warpgroup ping-pong: the groups take turns issuing their MMAs, so one's softmax runs while
//                 the other's MMAs hold the tensor cores (left alone, the two stay in phase and contend)
//   KF_LOAD_ORDER_FIRST | KF_LOAD_ORDER_AFTER_QK  when a key-loop iteration issues the cp.async loads
//                 of the tile STAGES - 1 ahead: before the tile's MMAs, or (wgmma) right after its Q K^T
//                 is issued, so the ~400 cycles the load issue takes (LSU-bound) run under the tensor cores
//   KF_WG_PINGPONG  (wgmma, TMA, WARPS 8, LOAD_ORDER=after_qk) 1: two warpgroups take turns issuing their
//                 MMAs (FA3's ping-pong: one's softmax runs under the other's tensor work) and run half a tile
//                 apart: no CTA barrier per tile; the lagging warpgroup issues the loads. The two are either
//                 the row halves of BLOCK_M 128 (WARPS_N 1) or, with BLOCK_M 64, two key groups that each take
//                 half of every tile's keys (WARPS_N 2, WN_KEYS=tile) and merge at the end
//   KF_Q_LOAD_CP_ASYNC | KF_Q_LOAD_TMA  (TMA: KV_LOAD=tma) how Q reaches smem: every thread's cp.async, or one
//                 thread's TMA box load (the tensor map tmQ) on its own mbarrier
//   KF_KV_LOAD_CP_ASYNC | KF_KV_LOAD_TMA  how K/V tiles reach smem: every thread's cp.async, or (wgmma, D 64)
//                 one thread's TMA box loads from the tensor maps tmK / tmV, each ring slot completed on a
//                 "full" mbarrier by byte count (no LSU issue, no cp.async wait in the compute warps)
//   KF_KV_MCAST  (TMA) cluster of KV_MCAST neighbouring query blocks of one head: each CTA loads 1 / KV_MCAST
//                 of every K/V tile and multicasts it to all of them, so each tile crosses L2 -> SM once per
//                 cluster; an "empty" mbarrier per slot counts the cluster's CTAs done with it before reuse
//   KF_MIN_BLOCKS  second __launch_bounds__ argument (caps registers for more CTAs per SM)
//   KF_KV_SPLITS  (mma path) CTAs per query block, each over a contiguous slice of the key tiles; each
//                 writes unnormalised O and (m, l) to scratch, the last to finish (atomic counter,
//                 reset to 0 by it) merges them and writes O. One launch.
//   KF_KV_MERGE_GMEM | KF_KV_MERGE_CLUSTER | KF_KV_MERGE_PUSH  (KV_SPLITS > 1) merge through global scratch
//                 + atomic counter, or (sm_90) the split CTAs form a thread-block cluster: cluster = each parks
//                 its slice in its own smem, cluster barrier, CTA r merges the rows of warps w with
//                 w % KV_SPLITS == r over DSMEM; push = CTAs 1.. write their slices into CTA 0's smem with
//                 st.async, which counts the bytes on CTA 0's mbarrier; CTA 0 waits on it, merges, stores
//                 (no cluster barrier after the loop: its release costs a GPU-scope fence)
//   KF_P_EARLY  (mma path) 1: pack P to 16-bit pairs right after exp2 (the fp32 scores die before P V)
//   KF_EXP2_F32 | KF_EXP2_PAIR  (mma path, P_EARLY) P = exp2 one f32 MUFU op per element, or one 16-bit
//                 pair op per two elements (the exponents are rounded to the element type first; P is
//                 16-bit for P V anyway). Halves the MUFU work, which bounds the softmax phase.
//   KF_EXP2_POLY  (mma path) one element in four takes its exp2 from a polynomial on the FMA pipe (poly_exp2)
//                 and the others from the MUFU: with one warp per scheduler the MUFU's 8 cycles per warp
//                 instruction and the issue slots of the rest of the softmax balance at about that share.
//   KF_PIPE_QK  (mma path) 1: software-pipelined key loop, Q K^T of the next tile before this tile's softmax
//   KF_LAZY_RESCALE  (mma path) 1: skip the O *= alpha pass when no row of the warp's m-tile has a new max
//   KF_LANE_ADDR  (mma.sync only) 1: ldmatrix addresses recomputed per tile instead of hoisted (fewer live registers)
// The mma-path options (Q_IN, KV_SPLITS, P_EARLY, EXP2, PIPE_QK, LAZY_RESCALE) apply to wgmma too.
//   specialised dims: KF_D (64|128), KF_CAUSAL (0|1), KF_DTYPE_F16 | KF_DTYPE_BF16
// Runtime arguments: Q, K, V, O, int B, int H, int S, float scale, then the scratch buffers
//   OPART (f32, [B*H*nblk][KV_SPLITS][BM*D]), MLPART (f32, [..][KV_SPLITS][BM*8]), CNT (i32, [B*H*nblk]),
//   unused when KV_SPLITS == 1, then the tensor maps of K, V and Q (TMA only): 3-D (D, S, B*H), box
//   (64, BLOCK_N / KV_MCAST, 1) for K and V, (64, BLOCK_M, 1) for Q, 128-byte swizzle.
// Launch: grid (ceil(S / BLOCK_M) rounded up to KV_MCAST, times KV_SPLITS, H, B), block 32 * WARPS,
//   dynamic smem = spec's smem_bytes. Query blocks past S (the rounding) only help their cluster load.
#if defined(KF_MMA_WGMMA)
// The wgmma path is the mma path (same fragments, softmax and epilogue) with Q K^T and P V on
// warpgroup MMA (sm_90a): no ldmatrix, no per-warp B fragments in registers.
#define KF_MMA_MMA 1
constexpr bool WGMMA = true;
#else
constexpr bool WGMMA = false;
#endif
#include "common/dtype.cuh"
#include "common/cp_async.cuh"
#include "common/mma_sm80.cuh"
#if defined(KF_MMA_WGMMA)
#include "common/wgmma_sm90.cuh"
#endif
#include "common/tma_sm90.cuh"
#if defined(KF_KV_LOAD_TMA)
constexpr bool TMA_KV = true;
#else
constexpr bool TMA_KV = false;
#endif
#if defined(KF_Q_LOAD_TMA)
constexpr bool TMA_Q = true;
#else
constexpr bool TMA_Q = false;
#endif
#include "common/smem_layout.cuh"
#include "common/online_softmax.cuh"
#if defined(KF_MMA_WMMA)
#include "common/wmma_helpers.cuh"
#endif

#if defined(KF_DTYPE_BF16)
typedef __nv_bfloat16 elem_t;
#else
typedef __half elem_t;
#endif
typedef kf::dtype_traits<elem_t> TR;

#ifndef KF_CAUSAL
#define KF_CAUSAL 0
#endif
#ifndef KF_VEC
#define KF_VEC 8
#endif
#if defined(KF_DIAG) && KF_DIAG == 2
#define KF_DIAG_NO_RELOAD 1
#else
#define KF_DIAG_NO_RELOAD 0
#endif
// DIAG=3 (timing diagnostic, wrong output): the first thread of each warpgroup records clock64 at
// fixed points (slot k: 0 entry, 1 prologue done, 2 + 2t / 3 + 2t before / after its t-th tile,
// 14 loop done, 15 merge (or one group's store) done, 16 / 17 globaltimer at entry / end, 18 the first
// K/V tiles requested, 19 Q resident, 20 the ring barriers initialised, 21 Q requested, 22 indices computed)
// and writes them over its CTA's O rows instead of O (tools/sdpa_bench/timeline.py reads them back).
// DIAG_CUT (timing diagnostic, wrong output; wgmma, one key group): 1 no exp2, 2 no Q K^T, 3 no P V, 4 no row max
// DIAG_STORE (timing diagnostic, wrong output; mma / wgmma): 1 no global stores of O, 2 no normalisation of O
#ifndef KF_DIAG_STORE
#define KF_DIAG_STORE 0
#endif
#ifndef KF_DIAG_CUT
#define KF_DIAG_CUT 0
#endif
#if defined(KF_DIAG) && KF_DIAG == 3
#define KF_STAMPS 1
#define KF_NSTAMPS 23
#define KF_STAMP(k)                                                                          \
  do {                                                                                       \
    if ((k) < KF_NSTAMPS && (threadIdx.x & 127) == 0) stamps[(k)] = clock64();                      \
  } while (0)
#else
#define KF_STAMPS 0
#define KF_STAMP(k) \
  do {              \
  } while (0)
#endif
#ifndef KF_MIN_BLOCKS
#define KF_MIN_BLOCKS 1
#endif
#ifndef KF_KV_SPLITS
#define KF_KV_SPLITS 1
#endif
#ifndef KF_LAZY_RESCALE
#define KF_LAZY_RESCALE 0
#endif
#ifndef KF_P_EARLY
#define KF_P_EARLY 0
#endif
constexpr bool P_EARLY = KF_P_EARLY != 0;
#ifndef KF_PIPE_QK
#define KF_PIPE_QK 0
#endif
constexpr bool PIPE_QK = KF_PIPE_QK != 0;
#ifndef KF_LANE_ADDR
#define KF_LANE_ADDR 0
#endif
// (mma path) 1: fragment addresses recomputed in each tile from a fresh %laneid (one XOR per
// address) instead of hoisted out of the key loop (perf_notes item 14)
constexpr bool LANE_ADDR = KF_LANE_ADDR != 0;
#if defined(KF_EXP2_PAIR)
constexpr bool EXP2_PAIR = true;
#else
constexpr bool EXP2_PAIR = false;
#endif
static_assert(!EXP2_PAIR || P_EARLY, "EXP2=pair produces P packed, so it needs P_EARLY=1");
#if defined(KF_EXP2_POLY)
[[maybe_unused]] constexpr bool EXP2_POLY = true;
#else
[[maybe_unused]] constexpr bool EXP2_POLY = false;
#endif
constexpr int KS = KF_KV_SPLITS;
#ifndef KF_KV_MCAST
#define KF_KV_MCAST 1
#endif
constexpr int MC = KF_KV_MCAST;
#if (defined(KF_KV_MERGE_CLUSTER) || defined(KF_KV_MERGE_PUSH)) && KF_KV_SPLITS > 1 && KF_KV_MCAST > 1
#error "KV_MCAST > 1 and a cluster merge both need the cluster"
#elif defined(KF_KV_LOAD_TMA) && KF_KV_MCAST > 1
#define KF_USE_CLUSTER 1
#define KF_MERGE_IN_CLUSTER 0
#define KF_CLUSTER_ATTR __cluster_dims__(KF_KV_MCAST, 1, 1)
#elif (defined(KF_KV_MERGE_CLUSTER) || defined(KF_KV_MERGE_PUSH)) && KF_KV_SPLITS > 1
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#error "KV_MERGE=cluster / push needs sm_90"
#endif
#define KF_USE_CLUSTER 1
#define KF_MERGE_IN_CLUSTER 1
#define KF_CLUSTER_ATTR __cluster_dims__(KF_KV_SPLITS, 1, 1)
#else
#define KF_USE_CLUSTER 0
#define KF_MERGE_IN_CLUSTER 0
#define KF_CLUSTER_ATTR
#endif

// Thread-block cluster helpers (sm_90): barrier, rank, distributed shared memory loads.
__device__ __forceinline__ void cluster_sync_all() {
#if KF_USE_CLUSTER
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
#endif
}
// Execution-only barrier (no memory ordering of its own): keeps this CTA's smem alive until the
// peers have read it (the release form above costs a GPU-scope MEMBAR that waits for this CTA's
// O stores), and, after fence.mbarrier_init, holds the cluster until CTA 0's mbarrier exists.
__device__ __forceinline__ void cluster_sync_relaxed() {
#if KF_USE_CLUSTER
  asm volatile("barrier.cluster.arrive.relaxed.aligned;\nbarrier.cluster.wait.aligned;\n" ::: "memory");
#endif
}
__device__ __forceinline__ unsigned cluster_rank() {
  unsigned r = 0;
#if KF_USE_CLUSTER
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
#endif
  return r;
}
__device__ __forceinline__ unsigned dsmem_map(unsigned saddr, unsigned rank) {
  unsigned r = saddr;
#if KF_USE_CLUSTER
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(r) : "r"(saddr), "r"(rank));
#endif
  return r;
}
#if defined(KF_KV_MERGE_PUSH) && KF_MERGE_IN_CLUSTER
constexpr bool MERGE_PUSH = true;
#else
constexpr bool MERGE_PUSH = false;
#endif
// KV_MERGE=push: CTA 0's mbarrier counts the bytes the other CTAs of the cluster write into its smem.
__device__ __forceinline__ void push_mbar_init(unsigned mbar, unsigned bytes) {
#if KF_USE_CLUSTER
  asm volatile(
      "mbarrier.init.shared::cta.b64 [%0], 1;\n"
      "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n"
      "fence.mbarrier_init.release.cluster;\n" ::"r"(mbar),
      "r"(bytes)
      : "memory");
#endif
}
__device__ __forceinline__ void push_mbar_wait(unsigned mbar) {
#if KF_USE_CLUSTER
  asm volatile(
      "{\n.reg .pred done;\nwait_%=:\n"
      "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 done, [%0], 0;\n"
      "@!done bra wait_%=;\n}\n" ::"r"(mbar)
      : "memory");
#endif
}
// 8 bytes into a peer CTA's smem (cluster address), counted on the peer's mbarrier (cluster address)
__device__ __forceinline__ void push_st2(unsigned caddr, float2 v, unsigned cmbar) {
#if KF_USE_CLUSTER
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.f32 [%0], {%1, %2}, [%3];\n" ::"r"(caddr),
               "f"(v.x), "f"(v.y), "r"(cmbar)
               : "memory");
#endif
}
__device__ __forceinline__ float2 dsmem_ld2(unsigned caddr) {
  float2 v = make_float2(0.f, 0.f);
#if KF_USE_CLUSTER
  asm volatile("ld.shared::cluster.v2.f32 {%0, %1}, [%2];\n" : "=f"(v.x), "=f"(v.y) : "r"(caddr) : "memory");
#endif
  return v;
}

constexpr int HD = KF_D;
constexpr int BM = KF_BLOCK_M;
constexpr int BN = KF_BLOCK_N;
constexpr int NW = KF_WARPS;
constexpr int NT = 32 * NW;
constexpr int STAGES = KF_STAGES;
constexpr int VEC = KF_VEC;
#ifndef KF_WARPS_N
#define KF_WARPS_N 1
#endif
constexpr int WN = KF_WARPS_N;  // key groups (combined at the end)
constexpr int WM = NW / WN;     // warps along the query rows
#if defined(KF_WN_KEYS_RANGE) || defined(KF_WN_KEYS_PINGPONG)
constexpr bool WN_RANGE = WN > 1;  // each key group streams its own range of whole tiles
#else
constexpr bool WN_RANGE = false;   // each key group takes BLOCK_N / WARPS_N keys of every tile
#endif
#if defined(KF_WN_KEYS_PINGPONG)
constexpr bool PINGPONG_KEYS = WN_RANGE;  // range, and the two key groups take turns issuing their MMAs
#else
constexpr bool PINGPONG_KEYS = false;
#endif
#ifndef KF_WG_PINGPONG
#define KF_WG_PINGPONG 0
#endif
constexpr bool WG_PP = KF_WG_PINGPONG != 0;  // two warpgroups of one ring take turns issuing their MMAs
[[maybe_unused]] constexpr bool ROW_PP = WG_PP && WN == 1;     // they are the row halves of BLOCK_M 128 (else two key groups)
[[maybe_unused]] constexpr bool PINGPONG = PINGPONG_KEYS || WG_PP;
constexpr int GT = NT / WN;       // threads of one key group
constexpr int RINGS = WN_RANGE ? WN : 1;  // K/V rings (one per key group in range mode)
constexpr int RPW = BM / WM;    // query rows per warp
constexpr bool CAUSAL = KF_CAUSAL != 0;
#if defined(KF_LOAD_ORDER_AFTER_QK)
constexpr bool LOAD_AFTER_QK = true;
#else
constexpr bool LOAD_AFTER_QK = false;
#endif
#if defined(KF_KV_WAIT_SPLIT)
constexpr bool SPLIT_WAIT = true;
#else
constexpr bool SPLIT_WAIT = false;
#endif

static_assert(HD == 64 || HD == 128, "D must be 64 or 128");
static_assert(NW % WN == 0 && BM % WM == 0, "WARPS_N must divide WARPS, WARPS / WARPS_N must divide BLOCK_M");
static_assert(!WN_RANGE || (STAGES >= 2 && (TMA_KV || !SPLIT_WAIT)),
              "WN_KEYS=range needs STAGES >= 2, and KV_WAIT=joint on cp.async");
static_assert(!PINGPONG_KEYS || WN == 2, "WN_KEYS=pingpong needs WARPS_N == 2");
constexpr int PP_THREADS = WG_PP ? 256 : 2 * GT;  // the two turn-taking groups' threads
static_assert(BN % 16 == 0, "BLOCK_N must be a multiple of 16");
static_assert(STAGES >= 1, "STAGES >= 1");
static_assert(VEC == 2 || VEC == 4 || VEC == 8, "VEC is 2, 4 or 8 elements");

#if defined(KF_MMA_WGMMA)
#if !defined(KF_LAYOUT_SWIZZLED)
#error "MMA=wgmma needs LAYOUT=swizzled"
#endif
typedef kf::Sw128Layout<HD> Lay;  // what wgmma's 128-byte-swizzle descriptors read
#elif defined(KF_LAYOUT_SWIZZLED)
typedef kf::SwizzledLayout<HD> Lay;
#elif defined(KF_LAYOUT_PADDED)
typedef kf::PaddedLayout<HD> Lay;
#else
typedef kf::PlainLayout<HD> Lay;
#endif
constexpr int ROWE = Lay::kRowElems;  // allocated elements per smem row

// ---------------------------------------------------------------------------------------------
// Tile loader: ROWS x HD elements from global rows [row0, row0 + ROWS) (rows >= S zero-filled),
// by the NTHR threads tid = 0 .. NTHR - 1 (the CTA, or one key group in WN_KEYS=range).
template <int ROWS, int NTHR = NT>
__device__ __forceinline__ void load_tile(elem_t* s, const elem_t* __restrict__ g, int row0, int S, int tid) {
  constexpr int CPR = HD / VEC;  // chunks per row
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
      const elem_t* src = g + (size_t)(ok ? gr : 0) * HD + c;
      kf::cp_async<VEC * 2>(s + Lay::off(r, c), src, ok);
    }
  }
}

// Makes this thread's completed cp.async writes visible to wgmma, which reads shared memory
// through the async proxy; called after a cp.async wait, before the barrier.
__device__ __forceinline__ void publish_smem() {
#if defined(KF_MMA_WGMMA)
  kf::fence_proxy_async();
#endif
}

// With split waits: V_j must be resident before P V. Pending groups allowed after V_j:
// STAGES == 1: none; else the 2 * (STAGES - 1) groups of the tiles issued after it.
__device__ __forceinline__ void wait_v() {
  if constexpr (SPLIT_WAIT) {
    kf::cp_async_wait<(STAGES == 1 ? 0 : 2 * (STAGES - 1))>();
    publish_smem();
    __syncthreads();
  }
}

// All threads, after the prologue's loads: Q resident for the whole CTA. Q by TMA: the CTA barrier first
// publishes every mbarrier init, then Q's mbarrier; cp.async: the groups issued after Q's (with K/V on
// cp.async, the first K/V tiles: STAGES - 1 of them, two groups each with KV_WAIT=split) may still be pending.
__device__ __forceinline__ void wait_q(unsigned q_mbar) {
  if constexpr (TMA_Q) {
    __syncthreads();
    kf::mbar_wait(q_mbar, 0);
  } else {
    kf::cp_async_wait<(TMA_KV ? 0 : (WN_RANGE || !SPLIT_WAIT ? 1 : 2) * (STAGES - 1))>();
    publish_smem();
    __syncthreads();
  }
}

// Barrier of one key group (WN_KEYS=range): named barrier 1 + group over its GT threads.
__device__ __forceinline__ void group_sync(int group) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(1 + group), "n"(GT) : "memory");
}
// WN_KEYS=pingpong turn barriers (named 1 + WN + group, both groups' threads): a group waits for its
// turn to issue MMAs with turn_wait(own) and hands the turn over with turn_pass(other).
__device__ __forceinline__ void turn_wait(int group) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(1 + WN + group), "n"(PP_THREADS) : "memory");
}
__device__ __forceinline__ void turn_pass(int group) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(1 + WN + group), "n"(PP_THREADS) : "memory");
}
// Two key-range groups' merge (named barrier 1 + 2 WN): group 0 hands its partial over with merge_pass, group 1
// takes it with merge_take.
__device__ __forceinline__ void merge_pass() { asm volatile("bar.arrive %0, %1;\n" ::"n"(1 + 2 * WN), "n"(2 * GT) : "memory"); }
__device__ __forceinline__ void merge_take() { asm volatile("bar.sync %0, %1;\n" ::"n"(1 + 2 * WN), "n"(2 * GT) : "memory"); }

// Shared-memory carve-up (must match the spec's smem_bytes):
//   sQ [BM][ROWE], sK [RINGS][STAGES][BN][ROWE], sV [RINGS][STAGES][BN][ROWE], then (wmma) S, P, O scratch.
constexpr int Q_ELEMS = BM * ROWE;
constexpr int KV_ELEMS = BN * ROWE;

// ---------------------------------------------------------------------------------------------
// KV_LOAD=tma: the K/V ring filled by TMA. One thread of each CTA (TMA_PRODUCER) loads its 1 / MC slice
// of every tile (rows [rank * BN / MC, ...)), multicast to the whole cluster when MC > 1; a slot's full
// mbarrier completes when all of the tile's K and V bytes have landed, from every slice (KV_WAIT=split:
// K on it, V on a second one, waited for just before P V, so Q K^T and the softmax run while V lands).
// A slot is refilled once every warp of the CTA is done with it (the loop's CTA barrier, or the turn
// order of WG_PINGPONG) and, with MC > 1, once every CTA of the cluster has said so on the refilling
// CTA's empty mbarrier (its slice lands in all of them).
static_assert(!TMA_KV || (WGMMA && HD == 64 && STAGES >= 2), "KV_LOAD=tma needs wgmma, D 64, STAGES >= 2");
static_assert(!TMA_Q || TMA_KV, "Q_LOAD=tma needs KV_LOAD=tma");
static_assert(!TMA_KV || !WN_RANGE || MC == 1, "KV_LOAD=tma with WN_KEYS=range / pingpong needs KV_MCAST 1");
static_assert(!(TMA_KV && SPLIT_WAIT && KF_DIAG_NO_RELOAD), "DIAG=2 with KV_LOAD=tma needs KV_WAIT=joint");
static_assert(MC == 1 || (TMA_KV && KS == 1 && BN % (8 * MC) == 0),
              "KV_MCAST > 1 needs KV_LOAD=tma, KV_SPLITS 1 and 8-row slices");
static_assert(KF_DIAG_CUT == 0 || (WGMMA && P_EARLY && !EXP2_PAIR), "DIAG_CUT needs wgmma, P_EARLY 1 and EXP2 f32 or poly");
static_assert(!WG_PP || (WGMMA && TMA_KV && NW == 8 && LOAD_AFTER_QK && STAGES >= 3 && MC == 1 && KS == 1 && !PIPE_QK &&
                         ((WN == 1 && BM == 128) || (WN == 2 && !WN_RANGE && BM == 64))),
              "WG_PINGPONG needs wgmma, KV_LOAD=tma, WARPS 8, LOAD_ORDER=after_qk, STAGES >= 3, KV_MCAST 1, "
              "KV_SPLITS 1, PIPE_QK 0, and BLOCK_M 128 with WARPS_N 1 or BLOCK_M 64 with WARPS_N 2 (WN_KEYS=tile)");
// The thread that issues the TMA loads. WG_PINGPONG: the first of the lagging warpgroup (1). It refills tile
// j - 1's slot right after issuing its own Q K^T of tile j (LOAD_ORDER=after_qk), which the leading
// warpgroup's Q K^T of tile j preceded in the turn order, and the leader issued that only after its P V of
// tile j - 1 had completed: both are done with the slot. (Issued before its Q K^T, the refill could overtake
// the leader's last P V.) STAGES >= 3 keeps the leader fed.
constexpr int TMA_PRODUCER = WG_PP ? NT - 128 : 0;
struct TmaRing {
  static constexpr int SLICE = BN / MC;  // rows of a tile this CTA loads
  static constexpr unsigned TILE_BYTES = 2u * BN * HD * sizeof(elem_t);
  static constexpr unsigned SLOT_BYTES = KV_ELEMS * (unsigned)sizeof(elem_t);
  unsigned full0 = 0, empty0 = 0, full_v0 = 0;  // STAGES mbarriers each, 8 bytes apart
  unsigned k_slice = 0, v_slice = 0;  // smem address of this CTA's slice in ring slot 0
  unsigned v_ring = 0;                // smem address of V's ring slot 0
  unsigned v_phase = 0;               // KV_WAIT=split: bit s = parity of slot s's next V wait
  int row0 = 0, bh = 0;               // key row of this CTA's slice of tile 0; head (b * H + h)

  // One thread: the ring's mbarriers at `tail` (24 * STAGES bytes). The caller fences (kf::fence_mbar_init)
  // once after all of its barrier inits, and its next CTA (MC == 1) or cluster (MC > 1) barrier publishes them
  // before anyone else touches them.
  static __device__ __forceinline__ void init_barriers(unsigned tail) {
#pragma unroll
    for (int st = 0; st < STAGES; ++st) {
      kf::mbar_init(tail + 8 * st, 1);
      kf::mbar_init(tail + 8 * STAGES + 8 * st, MC);
      kf::mbar_init(tail + 16 * STAGES + 8 * st, 1);
    }
  }
  // All threads: the ring's addresses.
  __device__ __forceinline__ void init(unsigned tail, const elem_t* sK, const elem_t* sV, int key0, int head) {
    const unsigned rank = MC > 1 ? cluster_rank() : 0u;  // (a split-KV cluster's rank is no slice)
    full0 = tail;
    empty0 = tail + 8 * STAGES;
    full_v0 = tail + 16 * STAGES;
    v_ring = kf::smem_u32(sV);
    k_slice = kf::smem_u32(sK) + rank * SLICE * ROWE * (unsigned)sizeof(elem_t);
    v_slice = kf::smem_u32(sV) + rank * SLICE * ROWE * (unsigned)sizeof(elem_t);
    row0 = key0 + (int)rank * SLICE;
    bh = head;
  }
  // The producer: this CTA's slice of tile t into slot t % STAGES (past S the box reads zeros).
  __device__ __forceinline__ void issue(int t, const kf::TmaDesc& tmK, const kf::TmaDesc& tmV) const {
    const int st = t % STAGES;
    const unsigned full = full0 + 8 * st, full_v = SPLIT_WAIT ? full_v0 + 8 * st : full, off = st * SLOT_BYTES;
    if (MC > 1 && t >= STAGES) kf::mbar_wait(empty0 + 8 * st, (t / STAGES - 1) & 1);
    const int row = row0 + t * BN;
    kf::mbar_arrive_expect_tx(full, SPLIT_WAIT ? TILE_BYTES / 2 : TILE_BYTES);
    load(k_slice + off, tmK, row, full);
    if constexpr (SPLIT_WAIT) kf::mbar_arrive_expect_tx(full_v, TILE_BYTES / 2);
    load(v_slice + off, tmV, row, full_v);
  }
  __device__ __forceinline__ void load(unsigned dst, const kf::TmaDesc& map, int row, unsigned mbar) const {
    if constexpr (MC > 1)
      kf::tma_load_3d_multicast(dst, map, 0, row, bh, mbar, (unsigned short)((1u << MC) - 1));
    else
      kf::tma_load_3d(dst, map, 0, row, bh, mbar);
  }
  // All threads, KV_WAIT=split: waits until the V tile at sV (a ring slot, or a key group's part of one)
  // is resident. Each tile's V is waited for once, in order, so a parity bit per slot tracks the phase.
  __device__ __forceinline__ void wait_v(const elem_t* sV) {
    const unsigned slot = (kf::smem_u32(sV) - v_ring) / SLOT_BYTES;
    kf::mbar_wait(full_v0 + 8 * slot, (v_phase >> slot) & 1u);
    v_phase ^= 1u << slot;
  }
  // All threads: waits until tile t (KV_WAIT=split: its K) is resident.
  __device__ __forceinline__ void wait(int t) const { kf::mbar_wait(full0 + 8 * (t % STAGES), (t / STAGES) & 1); }
  // The producer, after the CTA barrier that follows the last use of tile t: with MC > 1, tells every CTA
  // of the cluster that this CTA is done with the slot, so they may multicast its next tile into it.
  __device__ __forceinline__ void release(int t) const {
    if constexpr (MC > 1) {
#pragma unroll
      for (int r = 0; r < MC; ++r) kf::mbar_arrive_remote(empty0 + 8 * (t % STAGES), (unsigned)r);
    }
  }
};

// ---------------------------------------------------------------------------------------------
// Compute paths. Each provides init(), tile<MASK>(sQ, sK, sV, n0, m0, S, scale_log2, issue) and
// store(sQ, O, m0, S). tile() is called by all threads after the tile is resident in smem; it calls
// issue() (the next tile's loads) once, before its MMAs or (LOAD_ORDER=after_qk) after Q K^T is issued.
#if defined(KF_MMA_MMA)
constexpr int MT = RPW / 16;  // 16-row m-tiles per warp
static_assert(RPW % 16 == 0, "mma path: rows per warp must be a multiple of 16");
constexpr int BNW = WN_RANGE ? BN : BN / WN;  // keys of each tile handled by one warp
static_assert(BNW % 16 == 0, "BLOCK_N / WARPS_N must be a multiple of 16");
constexpr int NTN = BNW / 8;  // 8-column score tiles
constexpr int NTD = HD / 8;   // 8-column output tiles
#if defined(KF_Q_IN_REGS)
constexpr bool Q_REGS = true;
#else
constexpr bool Q_REGS = false;
#endif

struct Path {
  float o[MT][NTD][4];
  kf::OnlineRow row[MT][2];
  unsigned qf[Q_REGS ? MT : 1][Q_REGS ? HD / 16 : 1][4];
  int warp, lane, wn;  // warp = row group (0..WM-1), wn = key group (0..WN-1)
  TmaRing* ring = nullptr;  // KV_LOAD=tma: where P V waits for V (KV_WAIT=split)

  __device__ __forceinline__ void init(int w, int l) {
    warp = w % WM;
    wn = w / WM;
    lane = l;
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
      for (int d = 0; d < NTD; ++d) o[mt][d][0] = o[mt][d][1] = o[mt][d][2] = o[mt][d][3] = 0.f;
      row[mt][0].init();
      row[mt][1].init();
    }
  }

  static constexpr int kNTN = NTN;
  // The lane id read anew in each tile's fragment loops: its fragment addresses are then
  // computed there instead of hoisted out of the key loop, where ~80 of them pinned registers.
  __device__ __forceinline__ int fresh_lane() const {
    if constexpr (!LANE_ADDR) return lane;
    int l;
    asm volatile("mov.u32 %0, %%laneid;" : "=r"(l));
    return l;
  }
  // Offset of this lane's ldmatrix row in the 16x16 block at (r0, c0), where the lane map puts the
  // lane at (row, col) of the block at (0, 0) and lane_off = Lay::off(row, col). LANE_ADDR: one XOR
  // on lane_off (computed once per tile); otherwise the full offset, which the compiler hoists.
  static __device__ __forceinline__ int frag_off(int lane_off, int row, int col, int r0, int c0) {
    if constexpr (LANE_ADDR)
      return r0 * ROWE + Lay::add_col(lane_off, c0);
    else
      return Lay::off(r0 + row, c0 + col);
  }
  __device__ __forceinline__ void load_q_frag(unsigned (&a)[4], const elem_t* sQ, int mt, int kk, int ln) const {
    const int row = warp * RPW + kf::lm_a_row(ln), col = kf::lm_a_col(ln);
    kf::ldmatrix_x4(a[0], a[1], a[2], a[3], sQ + frag_off(Lay::off(row, col), row, col, mt * 16, kk * 16));
  }

  __device__ __forceinline__ void q_to_regs(const elem_t* sQ) {
    if constexpr (Q_REGS) {
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int kk = 0; kk < HD / 16; ++kk) load_q_frag(qf[mt][kk], sQ, mt, kk, lane);
    }
  }

  template <bool MASK, class F>
  __device__ __forceinline__ void tile(const elem_t* sQ, const elem_t* sK, const elem_t* sV, int n0, int m0, int S,
                                       float sl2, F&& issue) {
    if constexpr (WN > 1 && !WN_RANGE) {
      sK += wn * BNW * ROWE;
      sV += wn * BNW * ROWE;
      n0 += wn * BNW;
    }
    float s[MT][NTN][4];
#if defined(KF_MMA_WGMMA)
    if constexpr (KF_DIAG_CUT == 2) {  // timing diagnostic, wrong output: no Q K^T (scores from the lane id)
#pragma unroll
      for (int n = 0; n < NTN; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) s[0][n][e] = (float)(lane + n + e);
      issue();
    } else if constexpr (LOAD_AFTER_QK) {
      wg_qk<false>(sQ, sK, s);
      issue();
      kf::wgmma_wait<0>();
      fence_acc(s[0]);
    } else {
      issue();
      qk(sQ, sK, s);
    }
#else
    issue();
    qk(sQ, sK, s);
#endif
    softmax_pv<MASK>(s, sV, n0, m0, S, sl2);
  }

  // PIPE_QK: Q K^T of the next tile. On the wgmma path it stays in flight while this tile's softmax
  // runs (FA3's intra-warpgroup overlap) and completes with P V's wait; qk_complete() then makes its
  // scores readable. On the mma path it is an ordinary qk().
  __device__ __forceinline__ void qk_issue(const elem_t* sQ, const elem_t* sK, float (&s)[MT][NTN][4]) const {
#if defined(KF_MMA_WGMMA)
    wg_qk<false>(sQ, sK, s);
#else
    qk(sQ, sK, s);
#endif
  }
  __device__ __forceinline__ static void qk_complete(float (&s)[MT][NTN][4]) {
#if defined(KF_MMA_WGMMA)
    fence_acc(s[0]);
#endif
  }

  // S = Q K^T for one tile (this warp's key group)
  __device__ __forceinline__ void qk(const elem_t* sQ, const elem_t* sK, float (&s)[MT][NTN][4]) const {
#if defined(KF_MMA_WGMMA)
    wg_qk(sQ, sK, s);
#else
    const int ln = fresh_lane();
    const int k_row = kf::lm_bn_row(ln), k_col = kf::lm_bn_col(ln), k_lane = Lay::off(k_row, k_col);
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int n = 0; n < NTN; ++n) s[mt][n][0] = s[mt][n][1] = s[mt][n][2] = s[mt][n][3] = 0.f;

    // S = Q K^T
#pragma unroll
    for (int kk = 0; kk < HD / 16; ++kk) {
      unsigned a[MT][4];
#pragma unroll
      for (int mt = 0; mt < MT; ++mt) {
        if constexpr (Q_REGS) {
#pragma unroll
          for (int i = 0; i < 4; ++i) a[mt][i] = qf[mt][kk][i];
        } else {
          load_q_frag(a[mt], sQ, mt, kk, ln);
        }
      }
#pragma unroll
      for (int np = 0; np < BNW / 16; ++np) {
        unsigned b0, b1, b2, b3;
        kf::ldmatrix_x4(b0, b1, b2, b3, sK + frag_off(k_lane, k_row, k_col, np * 16, kk * 16));
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
          kf::mma_16816<TR::is_bf16>(s[mt][2 * np], a[mt], b0, b1);
          kf::mma_16816<TR::is_bf16>(s[mt][2 * np + 1], a[mt], b2, b3);
        }
      }
    }
#endif
  }

  using PPacked = unsigned[P_EARLY ? MT : 1][P_EARLY ? NTN : 1][2];

#if defined(KF_MMA_WGMMA)
  // With WARPS_N > 1 each warpgroup takes its key group's BLOCK_N / WARPS_N keys of every tile
  // (warps w .. w+3 share w / WM) and the groups merge at the end (combine), as on mma.sync.
  static_assert(MT == 1, "wgmma path: 16 rows per warp, 4 warps (64 rows) per warpgroup");
  static_assert(WM % 4 == 0, "wgmma path: whole warpgroups per key group");
  typedef kf::Wgmma<BNW, TR::is_bf16> WgS;  // S = Q K^T: m64 n (BLOCK_N / WARPS_N) k16
  typedef kf::Wgmma<HD, TR::is_bf16> WgO;  // O += P V: m64 n D k16
  // K-major operand (Q or K, [rows][D]) for k-step kk: 32 bytes per step inside a 64-column atom
  static __device__ __forceinline__ unsigned long long k_major(unsigned base, int kk) {
    return kf::wgmma_desc(base + (kk >> 2) * Lay::kAtomBytes + (kk & 3) * 32, 16, Lay::kRowGroupBytes);
  }
  template <int N>
  static __device__ __forceinline__ void fence_acc(float (&d)[N][4]) {
#pragma unroll
    for (int j = 0; j < N; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) kf::fence_operand(d[j][e]);
  }

  // WN_KEYS=pingpong: every MMA issue (Q K^T, then P V, per tile) waits for this group's turn and
  // then hands the turn to the other group. Group 1 hands group 0 the first turn (turn_start) and keeps
  // its last P V turn (pp_last), so each barrier sees as many passes as waits. A group with fewer
  // tiles still takes its turns (turn_idle).
  bool pp_last = false;
  __device__ __forceinline__ void turn_begin() const {
    if constexpr (PINGPONG) turn_wait(pp_group());
  }
  // The turn-taking group: the key group (WN_KEYS=pingpong, WG_PINGPONG with WARPS_N 2) or the row warpgroup.
  __device__ __forceinline__ int pp_group() const { return ROW_PP ? warp >> 2 : wn; }
  __device__ __forceinline__ void turn_end(bool pv) const {
    if constexpr (PINGPONG) {
      if (!(pv && pp_group() == 1 && pp_last)) turn_pass(1 - pp_group());
    }
  }
  __device__ __forceinline__ void turn_start() const {
    if constexpr (PINGPONG) {
      if (pp_group() == 1) turn_pass(0);
    }
  }
  __device__ __forceinline__ void turn_idle() const {
    turn_begin();
    turn_end(false);
    turn_begin();
    turn_end(true);
  }

  // S = Q K^T for the 64 rows of this warp's warpgroup; A = Q (registers or smem), B = K (smem).
  // WAIT = false leaves it in flight (PIPE_QK): the next wgmma wait completes it, then qk_complete().
  template <bool WAIT = true>
  __device__ __forceinline__ void wg_qk(const elem_t* sQ, const elem_t* sK, float (&s)[MT][NTN][4]) const {
    const unsigned q0 = kf::smem_u32(sQ) + (warp >> 2) * 64 * HD * 2;  // 8 row groups per warpgroup
    const unsigned k0 = kf::smem_u32(sK);
    turn_begin();
    kf::wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < HD / 16; ++kk) {
      if constexpr (Q_REGS)
        WgS::template rs<false>(s[0], qf[0][kk], k_major(k0, kk), kk);
      else
        WgS::template ss<false>(s[0], k_major(q0, kk), k_major(k0, kk), kk);
    }
    kf::wgmma_commit();
    turn_end(false);
    if constexpr (WAIT) {
      kf::wgmma_wait<0>();
      fence_acc(s[0]);
    }
  }

  // O += P V; A = P (registers), B = V (smem [keys][D], N-major): 16 keys = two 8-row groups per
  // step, 64-column blocks of D 1024 bytes apart.
  __device__ __forceinline__ void wg_pv(const float (&s)[MT][NTN][4], const PPacked& pk, const elem_t* sV) {
    const unsigned v0 = kf::smem_u32(sV);
    fence_acc(o[0]);
    turn_begin();
    kf::wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < BNW / 16; ++kk) {
      unsigned a[4];
      p_frag(a, s, pk, 0, kk);
      WgO::template rs<true>(o[0], a, kf::wgmma_desc(v0 + kk * 2 * Lay::kRowGroupBytes, Lay::kAtomBytes,
                                                     Lay::kRowGroupBytes), 1);
    }
    kf::wgmma_commit();
    turn_end(true);
    kf::wgmma_wait<0>();
    fence_acc(o[0]);
  }
#endif

  // A operand of P V for m-tile mt, keys [16 kk, 16 kk + 16): P as 16-bit pairs
  __device__ __forceinline__ static void p_frag(unsigned (&a)[4], const float (&s)[MT][NTN][4], const PPacked& pk,
                                                int mt, int kk) {
    if constexpr (P_EARLY) {
      a[0] = pk[mt][2 * kk][0];
      a[1] = pk[mt][2 * kk][1];
      a[2] = pk[mt][2 * kk + 1][0];
      a[3] = pk[mt][2 * kk + 1][1];
    } else {
      a[0] = TR::pack2(s[mt][2 * kk][0], s[mt][2 * kk][1]);
      a[1] = TR::pack2(s[mt][2 * kk][2], s[mt][2 * kk][3]);
      a[2] = TR::pack2(s[mt][2 * kk + 1][0], s[mt][2 * kk + 1][1]);
      a[3] = TR::pack2(s[mt][2 * kk + 1][2], s[mt][2 * kk + 1][3]);
    }
  }

  // mask, online softmax, O += P V for one tile whose scores are in s
  template <bool MASK>
  __device__ __forceinline__ void softmax_pv(float (&s)[MT][NTN][4], const elem_t* sV, int n0, int m0, int S,
                                             float sl2) {
    PPacked pk;  // P as 16-bit pairs (P_EARLY)
    const int g = lane >> 2, t = lane & 3;
    if constexpr (MASK) {
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int n = 0; n < NTN; ++n)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int col = n0 + n * 8 + 2 * t + (e & 1);
            const int rowq = m0 + warp * RPW + mt * 16 + g + (e >> 1) * 8;
            bool masked = col >= S;
            if (CAUSAL) masked = masked || col > rowq;
            if (masked) s[mt][n][e] = KF_NEG_INF;
          }
    }

    // online softmax, P kept in the score registers
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
      float al[2];
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        float mx = KF_NEG_INF;
#pragma unroll
        for (int n = 0; n < NTN; ++n) mx = fmaxf(mx, fmaxf(s[mt][n][2 * r], s[mt][n][2 * r + 1]));
        mx = kf::quad_max(mx);
        if (KF_DIAG_CUT == 4) mx = s[mt][0][2 * r];  // timing diagnostic, wrong output: no row max
        float m_use;
        const float alpha = row[mt][r].update(mx, sl2, m_use);
        float rs = 0.f;
#pragma unroll
        for (int n = 0; n < NTN; ++n) {
          if constexpr (EXP2_PAIR) {
            const unsigned p = TR::exp2_pair(
                TR::pack2(fmaf(s[mt][n][2 * r], sl2, -m_use), fmaf(s[mt][n][2 * r + 1], sl2, -m_use)));
            pk[mt][n][r] = p;
            const float2 pf = TR::unpack2(p);  // the sum uses the P that P V sees
            rs += pf.x + pf.y;
            continue;
          }
#if KF_DIAG_CUT == 1  // timing diagnostic, wrong output: no exp2
          const float p0 = fmaf(s[mt][n][2 * r], sl2, -m_use), p1 = fmaf(s[mt][n][2 * r + 1], sl2, -m_use);
#else
          const float p0 = kf::fast_exp2(fmaf(s[mt][n][2 * r], sl2, -m_use));
          const float x1 = fmaf(s[mt][n][2 * r + 1], sl2, -m_use);
          const float p1 = (EXP2_POLY && (n & 1)) ? kf::poly_exp2(x1) : kf::fast_exp2(x1);
#endif
          if constexpr (P_EARLY) {
            pk[mt][n][r] = TR::pack2(p0, p1);
          } else {
            s[mt][n][2 * r] = p0;
            s[mt][n][2 * r + 1] = p1;
          }
          rs += p0 + p1;
        }
        row[mt][r].l = row[mt][r].l * alpha + rs;
        al[r] = alpha;
      }
      // alpha == 1 exactly when the row max did not move; a warp-uniform vote skips the pass
      if (!KF_LAZY_RESCALE || __any_sync(0xffffffffu, al[0] != 1.f || al[1] != 1.f)) {
#pragma unroll
        for (int r = 0; r < 2; ++r)
#pragma unroll
          for (int d = 0; d < NTD; ++d) {
            o[mt][d][2 * r] *= al[r];
            o[mt][d][2 * r + 1] *= al[r];
          }
      }
    }

    // O += P V
    if constexpr (TMA_KV && SPLIT_WAIT)
      ring->wait_v(sV);
    else
      wait_v();
#if defined(KF_MMA_WGMMA)
#if KF_DIAG_CUT == 3  // timing diagnostic, wrong output: no P V (P kept live)
#pragma unroll
    for (int n = 0; n < NTN; ++n) asm volatile("" ::"r"(pk[0][n][0]), "r"(pk[0][n][1]));
#else
    wg_pv(s, pk, sV);
#endif
#else
    const int ln = fresh_lane();
    const int v_row = kf::lm_bt_row(ln), v_col = kf::lm_bt_col(ln), v_lane = Lay::off(v_row, v_col);
#pragma unroll
    for (int kk = 0; kk < BNW / 16; ++kk) {
      unsigned a[MT][4];
#pragma unroll
      for (int mt = 0; mt < MT; ++mt) p_frag(a[mt], s, pk, mt, kk);
#pragma unroll
      for (int dp = 0; dp < HD / 16; ++dp) {
        unsigned b0, b1, b2, b3;
        kf::ldmatrix_x4_trans(b0, b1, b2, b3, sV + frag_off(v_lane, v_row, v_col, kk * 16, dp * 16));
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
          kf::mma_16816<TR::is_bf16>(o[mt][2 * dp], a[mt], b0, b1);
          kf::mma_16816<TR::is_bf16>(o[mt][2 * dp + 1], a[mt], b2, b3);
        }
      }
    }
#endif
  }

  // Two key-range groups (WN_KEYS=range / pingpong, WARPS_N 2): group 0, which starts first and so finishes
  // first (its tiles are requested first), parks its (m, l) and its unnormalised O in its own K ring (its tiles
  // are done; group 1's ring may still be in use), hands them over on a named barrier without waiting and
  // leaves; group 1 merges them into its registers and stores O as one group would. One barrier and half the
  // shared-memory traffic of merge_store's column split: the key-range CTA at S512 ~7770 cycles against ~8590
  // (perf_notes item 57). The partial travels as split-KV's do (save_partial, merge_partials), as a second slot.
  __device__ __forceinline__ void merge_pair_store(float* cbuf0, elem_t* sQ, elem_t* __restrict__ Oh, int m0, int S) {
    if (wn == 0) {
      save_partial<true>(cbuf0, cbuf0 + BM * HD);  // split-KV's fragment-order layout
      merge_pass();
      return;
    }
    merge_take();
    const float2* part = reinterpret_cast<const float2*>(cbuf0);
    merge_partials<2>([&](int, int kind, int i) { return part[kind == 1 ? i : BM * HD / 2 + i]; }, 0);
    store(sQ, Oh, m0, S);
  }

  // WARPS_N > 1: merge the key groups' (m, l, O) and write O. O = sum_g O_g 2^(m_g - m), l = sum_g l_g 2^(m_g - m),
  // m = max_g m_g. Group wn finalises the column blocks [wn * DB, (wn + 1) * DB): every group parks its (m, l)
  // and its partial O of the other groups' columns in smem (over the K/V ring, idle by now), each merges and
  // normalises its own columns into sQ, and O is stored from there. (Group 0 merging all of O alone took
  // ~840 cycles after the key-range groups at S512, perf_notes item 45.) The group is a template argument so
  // that o is only ever indexed at compile time (a runtime index would move it to local memory).
  __device__ __forceinline__ void merge_store(float* cbuf, elem_t* sQ, elem_t* __restrict__ Oh, int m0, int S,
                                              int tid) {
    if (wn == 0) merge_store_as<0>(cbuf, sQ, Oh, m0, S, tid);
    else if (wn == 1) merge_store_as<1 % WN>(cbuf, sQ, Oh, m0, S, tid);
    else if (wn == 2) merge_store_as<2 % WN>(cbuf, sQ, Oh, m0, S, tid);
    else merge_store_as<3 % WN>(cbuf, sQ, Oh, m0, S, tid);
  }
  template <int G>
  __device__ __forceinline__ void merge_store_as(float* cbuf, elem_t* sQ, elem_t* __restrict__ Oh, int m0, int S,
                                                 int tid) {
    constexpr int CLD = HD + 8;  // floats per row: a quad's float2 stores of one row then hit distinct banks
    constexpr int DB = NTD / WN;  // 8-column blocks per group
    static_assert(NTD % WN == 0, "WARPS_N must divide D / 8");
    const int g = lane >> 2, t = lane & 3;
    float* part = cbuf;                                             // [WN][BM][CLD]
    float2* ml = reinterpret_cast<float2*>(cbuf + WN * BM * CLD);  // [WN][BM]: (m, l)
    float lsum[MT][2];
    __syncthreads();  // every warp is done with the K/V ring
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        const int rl = warp * RPW + mt * 16 + g + 8 * r;
        lsum[mt][r] = kf::quad_sum(row[mt][r].l);
        if (t == 0) ml[G * BM + rl] = make_float2(row[mt][r].m, lsum[mt][r]);
#pragma unroll
        for (int d = 0; d < NTD; ++d)
          if (d / DB != G)
            *reinterpret_cast<float2*>(part + (G * BM + rl) * CLD + d * 8 + 2 * t) =
                make_float2(o[mt][d][2 * r], o[mt][d][2 * r + 1]);
      }
    __syncthreads();
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        const int rl = warp * RPW + mt * 16 + g + 8 * r;
        float2 mlw[WN], v[WN][DB];  // every load issued before the first use
#pragma unroll
        for (int w = 0; w < WN; ++w) {
          if (w == G) continue;
          mlw[w] = ml[w * BM + rl];
#pragma unroll
          for (int k = 0; k < DB; ++k)
            v[w][k] = *reinterpret_cast<const float2*>(part + (w * BM + rl) * CLD + (G * DB + k) * 8 + 2 * t);
        }
        float mtot = row[mt][r].m;
#pragma unroll
        for (int w = 0; w < WN; ++w)
          if (w != G) mtot = fmaxf(mtot, mlw[w].x);
        const float muse = mtot == KF_NEG_INF ? 0.f : mtot;
        const float f0 = kf::fast_exp2(row[mt][r].m - muse);
        float l = lsum[mt][r] * f0;
        float2 acc[DB];
#pragma unroll
        for (int k = 0; k < DB; ++k) acc[k] = make_float2(o[mt][G * DB + k][2 * r] * f0, o[mt][G * DB + k][2 * r + 1] * f0);
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
          *reinterpret_cast<unsigned*>(sQ + Lay::off(rl, (G * DB + k) * 8 + 2 * t)) =
              TR::pack2(acc[k].x * inv, acc[k].y * inv);
      }
    __syncthreads();  // every group's columns of O staged in sQ
    constexpr int CPR = HD / 8;
#pragma unroll
    for (int i = tid; i < BM * CPR; i += NT) {
      const int r = i / CPR, c = (i % CPR) * 8;
      if (m0 + r < S)
        *reinterpret_cast<uint4*>(Oh + (size_t)(m0 + r) * HD + c) = *reinterpret_cast<const uint4*>(sQ + Lay::off(r, c));
    }
  }

  __device__ __forceinline__ float diag_checksum() const {
    float c = 0.f;
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int d = 0; d < NTD; ++d)
#pragma unroll
        for (int e = 0; e < 4; ++e) c += o[mt][d][e];
    return c + row[0][0].l;
  }

  // Split-KV (WARPS_N == 1). Scratch layout per CTA slot, in fragment order so every access is one
  // coalesced float2 per lane: O part [warp][mt][d][r][lane] (float2), (m, l) [warp][mt][r][lane] (float2).
  // put(kind, index, value) for each float2 of this thread's slice: kind 0 = (m, l), 1 = O.
  template <class PUT>
  __device__ __forceinline__ void for_each_partial(PUT put) const {
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        const float l = kf::quad_sum(row[mt][r].l);
        put(0, ((warp * MT + mt) * 2 + r) * 32 + lane, make_float2(row[mt][r].m, l));
#pragma unroll
        for (int d = 0; d < NTD; ++d)
          put(1, (((warp * MT + mt) * NTD + d) * 2 + r) * 32 + lane, make_float2(o[mt][d][2 * r], o[mt][d][2 * r + 1]));
      }
  }
  // This CTA's slice into its own smem (cluster) or global scratch (gmem).
  template <bool SMEM>
  __device__ __forceinline__ void save_partial(float* __restrict__ op, float* __restrict__ ml) const {
    float2* o2 = reinterpret_cast<float2*>(op);
    float2* m2 = reinterpret_cast<float2*>(ml);
    for_each_partial([&](int kind, int i, float2 v) {
      float2* dst = (kind == 1 ? o2 : m2) + i;
      if (SMEM) *dst = v;
      else __stcg(dst, v);
    });
  }
  // KV_MERGE=push: this CTA's slice, in save_partial's layout, into slot `slot` of CTA 0's receive
  // buffer (cluster address rbuf: O parts of every slot, then their (m, l)), counted on CTA 0's mbarrier
  __device__ __forceinline__ void push_partial(unsigned rbuf, unsigned mbar, int slot) const {
    const unsigned o_base = rbuf + (unsigned)slot * BM * HD * 4;
    const unsigned m_base = rbuf + (unsigned)(KS - 1) * BM * HD * 4 + (unsigned)slot * BM * 8 * 4;
    for_each_partial([&](int kind, int i, float2 v) { push_st2((kind == 1 ? o_base : m_base) + i * 8, v, mbar); });
  }

  // Last CTA of a query block: merge the other slots (base = slot 0) into the registers.
  // LD(sp, kind, index): float2 of slot sp; kind 0 = (m, l) array, 1 = O array (float2 indices as in save_partial).
  // SLOTS: KV_SPLITS, or 2 for the key-range groups' merge (slot 1 is group 1's parked partial).
  template <int SLOTS = KS, class LD>
  __device__ __forceinline__ void merge_partials(LD ld, int self) {
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
        const float f0 = kf::fast_exp2(row[mt][r].m - muse);
        float l = kf::quad_sum(row[mt][r].l) * f0;
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
          const float f = kf::fast_exp2(oml[sp].x - muse);
          l += oml[sp].y * f;
#pragma unroll
          for (int d = 0; d < NTD; ++d) {
            o[mt][d][2 * r] = fmaf(v[d].x, f, o[mt][d][2 * r]);
            o[mt][d][2 * r + 1] = fmaf(v[d].y, f, o[mt][d][2 * r + 1]);
          }
        }
        row[mt][r].l = (t == 0) ? l : 0.f;  // store() quad-sums l again
      }
  }

  // Normalise and write this warp's rows (WARPS_N 1): registers -> its own rows of sQ -> 16-byte stores.
  // (A TMA box store per warp was no faster, perf_notes item 46.)
  __device__ __forceinline__ void store(elem_t* sQ, elem_t* __restrict__ Oh, int m0, int S) {
    const int g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        const float l = KF_DIAG_STORE == 2 ? 1.f : kf::quad_sum(row[mt][r].l);
        const float inv = KF_DIAG_STORE == 2 ? 1.f : l > 0.f ? kf::fast_rcp(l) : 0.f;
        const int rl = warp * RPW + mt * 16 + g + 8 * r;
#pragma unroll
        for (int d = 0; d < NTD; ++d) {
          *reinterpret_cast<unsigned*>(sQ + Lay::off(rl, d * 8 + 2 * t)) =
              TR::pack2(o[mt][d][2 * r] * inv, o[mt][d][2 * r + 1] * inv);
        }
      }
    }
    __syncwarp();
    constexpr int CPR = HD / 8;
#pragma unroll
    for (int i = lane; i < RPW * CPR; i += 32) {
      const int r = i / CPR, c = (i % CPR) * 8;
      const int gr = m0 + warp * RPW + r;
      if (KF_DIAG_STORE == 1) {
        const uint4 v = *reinterpret_cast<const uint4*>(sQ + Lay::off(warp * RPW + r, c));
        asm volatile("" ::"r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w));
      } else if (gr < S)
        *reinterpret_cast<uint4*>(Oh + (size_t)gr * HD + c) =
            *reinterpret_cast<const uint4*>(sQ + Lay::off(warp * RPW + r, c));
    }
  }
};
[[maybe_unused]] constexpr int EXTRA_SMEM = 0;

#elif defined(KF_MMA_WMMA)
// WMMA path: scores go through shared memory; O is accumulated in a shared fp32 tile.
static_assert(RPW % 16 == 0, "wmma path: rows per warp must be a multiple of 16");
static_assert(Lay::kWmmaOk, "wmma path needs a plain or padded layout");
constexpr int MT = RPW / 16;
constexpr int SLD = BN + 4;  // fp32 score row stride
constexpr int PLD = BN + 8;  // 16-bit P row stride
constexpr int OLD = HD + 4;  // fp32 O row stride
[[maybe_unused]] constexpr int EXTRA_SMEM = BM * (SLD * 4 + PLD * 2 + OLD * 4);

struct Path {
  float* sS;
  elem_t* sP;
  float* sO;
  float m[RPW], l[RPW];
  int warp, lane;

  __device__ __forceinline__ float diag_checksum() const { return l[0]; }  // O lives in smem

  __device__ __forceinline__ void init(int w, int ln) {
    warp = w;
    lane = ln;
  }
  __device__ __forceinline__ void set_scratch(unsigned char* base, elem_t* sQ) {
    sS = reinterpret_cast<float*>(base);
    sP = reinterpret_cast<elem_t*>(sS + BM * SLD);
    sO = reinterpret_cast<float*>(sP + BM * PLD);
    for (int i = lane; i < RPW * OLD; i += 32) sO[warp * RPW * OLD + i] = 0.f;
#pragma unroll
    for (int r = 0; r < RPW; ++r) {
      m[r] = KF_NEG_INF;
      l[r] = 0.f;
    }
    __syncwarp();
  }
  __device__ __forceinline__ void q_to_regs(const elem_t*) {}

  template <bool MASK, class F>
  __device__ __forceinline__ void tile(const elem_t* sQ, const elem_t* sK, const elem_t* sV, int n0, int m0, int S,
                                       float sl2, F&& issue) {
    using namespace kf;
    issue();
    const int rw = warp * RPW;
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
      for (int nt = 0; nt < BN / 16; ++nt) {
        frag_acc acc;
        wm::fill_fragment(acc, 0.f);
#pragma unroll
        for (int kk = 0; kk < HD / 16; ++kk) {
          frag_a_row<elem_t> a;
          frag_b_col<elem_t> b;
          wm::load_matrix_sync(a, sQ + (rw + mt * 16) * ROWE + kk * 16, ROWE);
          wm::load_matrix_sync(b, sK + (nt * 16) * ROWE + kk * 16, ROWE);
          wm::mma_sync(acc, a, b, acc);
        }
        wm::store_matrix_sync(sS + (rw + mt * 16) * SLD + nt * 16, acc, SLD, wm::mem_row_major);
      }
    }
    __syncwarp();
    // softmax row by row, the warp's lanes across the columns
#pragma unroll
    for (int r = 0; r < RPW; ++r) {
      const int rl = rw + r;
      float v[BN / 32 > 0 ? (BN + 31) / 32 : 1];
      float mx = KF_NEG_INF;
#pragma unroll
      for (int i = 0; i < (BN + 31) / 32; ++i) {
        const int c = lane + 32 * i;
        float x = KF_NEG_INF;
        if (c < BN) {
          x = sS[rl * SLD + c];
          if (MASK) {
            const int col = n0 + c;
            if (col >= S || (CAUSAL && col > m0 + rl)) x = KF_NEG_INF;
          }
        }
        v[i] = x;
        mx = fmaxf(mx, x);
      }
      mx = warp_max(mx);
      float m_new = fmaxf(m[r], mx * sl2);
      float m_use = m_new == KF_NEG_INF ? 0.f : m_new;
      const float alpha = fast_exp2(m[r] - m_use);
      m[r] = m_new;
      float rs = 0.f;
#pragma unroll
      for (int i = 0; i < (BN + 31) / 32; ++i) {
        const int c = lane + 32 * i;
        if (c < BN) {
          const float p = fast_exp2(fmaf(v[i], sl2, -m_use));
          const elem_t pe = TR::from_float(p);
          sP[rl * PLD + c] = pe;
          rs += TR::to_float(pe);
        }
      }
      l[r] = l[r] * alpha + warp_sum(rs);
      for (int c = lane; c < HD; c += 32) sO[rl * OLD + c] *= alpha;
    }
    __syncwarp();
    wait_v();
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
      for (int dt = 0; dt < HD / 16; ++dt) {
        frag_acc acc;
        float* op = sO + (rw + mt * 16) * OLD + dt * 16;
        wm::load_matrix_sync(acc, op, OLD, wm::mem_row_major);
#pragma unroll
        for (int kk = 0; kk < BN / 16; ++kk) {
          frag_a_row<elem_t> a;
          frag_b_row<elem_t> b;
          wm::load_matrix_sync(a, sP + (rw + mt * 16) * PLD + kk * 16, PLD);
          wm::load_matrix_sync(b, sV + (kk * 16) * ROWE + dt * 16, ROWE);
          wm::mma_sync(acc, a, b, acc);
        }
        wm::store_matrix_sync(op, acc, OLD, wm::mem_row_major);
      }
    }
    __syncwarp();
  }

  __device__ __forceinline__ void store(elem_t*, elem_t* __restrict__ Oh, int m0, int S) {
#pragma unroll
    for (int r = 0; r < RPW; ++r) {
      const int rl = warp * RPW + r;
      const int gr = m0 + rl;
      const float inv = l[r] > 0.f ? 1.f / l[r] : 0.f;
      if (gr < S)
        for (int c = 2 * lane; c < HD; c += 64) {
          *reinterpret_cast<unsigned*>(Oh + (size_t)gr * HD + c) =
              TR::pack2(sO[rl * OLD + c] * inv, sO[rl * OLD + c + 1] * inv);
        }
    }
  }
};

#else  // KF_MMA_SIMT
// SIMT path: each warp walks its rows; lanes split the tile's keys for Q.K and the head dim for P.V.
static_assert(BN % 32 == 0, "simt path: BLOCK_N must be a multiple of 32");
static_assert(RPW <= 16, "simt path: at most 16 rows per warp");
[[maybe_unused]] constexpr int EXTRA_SMEM = 0;
constexpr int DPL = HD / 32;  // output columns per lane

struct Path {
  float o[RPW][DPL];
  float m[RPW], l[RPW];
  int warp, lane;

  __device__ __forceinline__ float diag_checksum() const {
    float c = 0.f;
#pragma unroll
    for (int r = 0; r < RPW; ++r)
#pragma unroll
      for (int e = 0; e < DPL; ++e) c += o[r][e] + l[r];
    return c;
  }

  __device__ __forceinline__ void init(int w, int ln) {
    warp = w;
    lane = ln;
#pragma unroll
    for (int r = 0; r < RPW; ++r) {
      m[r] = KF_NEG_INF;
      l[r] = 0.f;
#pragma unroll
      for (int e = 0; e < DPL; ++e) o[r][e] = 0.f;
    }
  }
  __device__ __forceinline__ void q_to_regs(const elem_t*) {}

  template <bool MASK, class F>
  __device__ __forceinline__ void tile(const elem_t* sQ, const elem_t* sK, const elem_t* sV, int n0, int m0, int S,
                                       float sl2, F&& issue) {
    using namespace kf;
    issue();
#pragma unroll
    for (int r = 0; r < RPW; ++r) {
      const int rl = warp * RPW + r;
      float sc[BN / 32];
      float mx = KF_NEG_INF;
#pragma unroll
      for (int i = 0; i < BN / 32; ++i) {
        const int key = lane + 32 * i;
        float acc = 0.f;
#pragma unroll 8
        for (int d = 0; d < HD; d += 2) {
          const unsigned qq = *reinterpret_cast<const unsigned*>(sQ + Lay::off(rl, d));
          const unsigned kk = *reinterpret_cast<const unsigned*>(sK + Lay::off(key, d));
          const elem_t* qe = reinterpret_cast<const elem_t*>(&qq);
          const elem_t* ke = reinterpret_cast<const elem_t*>(&kk);
          acc = fmaf(TR::to_float(qe[0]), TR::to_float(ke[0]), acc);
          acc = fmaf(TR::to_float(qe[1]), TR::to_float(ke[1]), acc);
        }
        if (MASK) {
          const int col = n0 + key;
          if (col >= S || (CAUSAL && col > m0 + rl)) acc = KF_NEG_INF;
        }
        sc[i] = acc;
        mx = fmaxf(mx, acc);
      }
      mx = warp_max(mx);
      const float m_new = fmaxf(m[r], mx * sl2);
      const float m_use = m_new == KF_NEG_INF ? 0.f : m_new;
      const float alpha = fast_exp2(m[r] - m_use);
      m[r] = m_new;
      float rs = 0.f;
#pragma unroll
      for (int i = 0; i < BN / 32; ++i) {
        sc[i] = fast_exp2(fmaf(sc[i], sl2, -m_use));
        rs += sc[i];
      }
      l[r] = l[r] * alpha + warp_sum(rs);
#pragma unroll
      for (int e = 0; e < DPL; ++e) o[r][e] *= alpha;
      if (r == 0) wait_v();  // uniform across the CTA: every warp has RPW rows
#pragma unroll
      for (int i = 0; i < BN / 32; ++i) {
#pragma unroll 4
        for (int j = 0; j < 32; ++j) {
          const float p = __shfl_sync(0xffffffffu, sc[i], j);
          const int key = 32 * i + j;
#pragma unroll
          for (int e = 0; e < DPL; ++e) o[r][e] = fmaf(p, TR::to_float(sV[Lay::off(key, lane + 32 * e)]), o[r][e]);
        }
      }
    }
  }

  __device__ __forceinline__ void store(elem_t*, elem_t* __restrict__ Oh, int m0, int S) {
#pragma unroll
    for (int r = 0; r < RPW; ++r) {
      const int gr = m0 + warp * RPW + r;
      const float inv = l[r] > 0.f ? 1.f / l[r] : 0.f;
      if (gr < S) {
#pragma unroll
        for (int e = 0; e < DPL; ++e) Oh[(size_t)gr * HD + lane + 32 * e] = TR::from_float(o[r][e] * inv);
      }
    }
  }
};
#endif

// ---------------------------------------------------------------------------------------------
#if !defined(KF_MMA_MMA)
static_assert(KS == 1, "KV_SPLITS > 1 needs the mma path");
#endif
static_assert(KS == 1 || KS == 2 || KS == 4, "KV_SPLITS is 1, 2 or 4");
static_assert(KS == 1 || WN == 1, "KV_SPLITS > 1 needs WARPS_N == 1");

// One key tile j of the loop: the masked variant from the first tile that needs a mask on.
template <class F>
__device__ __forceinline__ void run_tile(Path& path, const elem_t* sQ, const elem_t* tK, const elem_t* tV, int j,
                                         int first_mask, int m0, int S, float sl2, F& issue) {
  if (j >= first_mask)
    path.template tile<true>(sQ, tK, tV, j * BN, m0, S, sl2, issue);
  else
    path.template tile<false>(sQ, tK, tV, j * BN, m0, S, sl2, issue);
}

extern "C" __global__ void KF_CLUSTER_ATTR __launch_bounds__(NT, KF_MIN_BLOCKS)
    sdpa_fwd(const elem_t* __restrict__ Q, const elem_t* __restrict__ K, const elem_t* __restrict__ V,
             elem_t* __restrict__ O, int B, int H, int S, float scale, float* __restrict__ Opart,
             float* __restrict__ MLpart, int* __restrict__ Cnt, const __grid_constant__ kf::TmaDesc tmK,
             const __grid_constant__ kf::TmaDesc tmV, const __grid_constant__ kf::TmaDesc tmQ) {
  extern __shared__ __align__(128) unsigned char smem_raw[];
  // wgmma's swizzle atoms must sit on 1024-byte boundaries (the spec adds 1024 bytes of slack)
  const unsigned align_pad = WGMMA ? (1024u - (kf::smem_u32(smem_raw) & 1023u)) & 1023u : 0u;
  elem_t* sQ = reinterpret_cast<elem_t*>(smem_raw + align_pad);
  elem_t* sK = sQ + Q_ELEMS;
  elem_t* sV = sK + RINGS * STAGES * KV_ELEMS;

  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
#if KF_STAMPS
  // in shared memory, one row per warpgroup: as a per-thread array (indexed by the tile) it lived in local
  // memory, and every thread's zero-fill stored 160 bytes at entry, inside the prologue being measured
  __shared__ long long stamps_sm[NT >= 128 ? NT / 128 : 1][KF_NSTAMPS];
  long long* stamps = stamps_sm[tid >> 7];
  if ((tid & 127) == 0)
    for (int k = 0; k < KF_NSTAMPS; ++k) stamps[k] = 0;
  KF_STAMP(0);
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(stamps[16]));
#endif
  // the KV_SPLITS CTAs of one query block are adjacent in x; causal: heavy (late) query blocks first
  const int nblk = (int)gridDim.x / KS;
  const int bx = (int)blockIdx.x / KS, split = KS == 1 ? 0 : (int)blockIdx.x % KS;
  const int mblk = CAUSAL ? nblk - 1 - bx : bx;
  const int h = blockIdx.y, b = blockIdx.z;
  const int m0 = mblk * BM;
  const size_t head = ((size_t)b * H + h) * (size_t)S * HD;
  const elem_t* Qh = Q + head;
  const elem_t* Kh = K + head;
  const elem_t* Vh = V + head;
  elem_t* Oh = O + head;

  int n_end = CAUSAL ? min(S, m0 + BM) : S;
  // KV_MCAST: a cluster streams the tiles of its longest query block (its first, heavy-first); the
  // others mask the extra keys away
  if (CAUSAL && MC > 1) n_end = min(S, (nblk - (bx / MC) * MC) * BM);
  const int ntiles_all = (n_end + BN - 1) / BN;
  // this CTA's key tiles [t0, t0 + ntiles); a split may get none (it still reports m = -inf, l = 0)
  const int per = (ntiles_all + KS - 1) / KS;
  const int t0 = min(split * per, ntiles_all);
  const int ntiles = min(t0 + per, ntiles_all) - t0;
  const float sl2 = scale * KF_LOG2E;

  // Past the K/V rings: KV_MERGE=push's mbarrier and receive buffer in CTA 0 (the spec's push_bytes), then
  // KV_LOAD=tma's ring mbarriers (24 * STAGES bytes per ring) and Q's (8; the spec's tma_bytes)
  [[maybe_unused]] unsigned char* push_tail = reinterpret_cast<unsigned char*>(sV + RINGS * STAGES * KV_ELEMS);
  [[maybe_unused]] const unsigned push_mbar = kf::smem_u32(push_tail), push_rbuf = push_mbar + 16;
  if constexpr (MERGE_PUSH) {
    if (cluster_rank() == 0 && tid == 0) push_mbar_init(push_mbar, (KS - 1) * BM * (HD + 8) * 4);
    cluster_sync_relaxed();  // no CTA pushes before CTA 0's mbarrier is initialised
  }
  // WN_KEYS=range / pingpong: key group g (its GT threads, gtid 0 .. GT - 1) streams tiles [gt0, gt0 + gn)
  // through its own ring (slots gK / gV); gper tiles each, the last group may get fewer
  [[maybe_unused]] const int g = WN_RANGE ? warp / WM : 0, gtid = tid - g * GT;
  [[maybe_unused]] const int gper = (ntiles + WN - 1) / WN;
  [[maybe_unused]] const int gt0 = WN_RANGE ? t0 + min(g * gper, ntiles) : t0;
  [[maybe_unused]] const int gn = WN_RANGE ? t0 + min((g + 1) * gper, ntiles) - gt0 : ntiles;
  elem_t* gK = sK + g * STAGES * KV_ELEMS;
  elem_t* gV = sV + g * STAGES * KV_ELEMS;
  [[maybe_unused]] TmaRing ring;  // (WN_KEYS=range: this thread's group's ring, barriers 24 * STAGES bytes apart)
  constexpr unsigned push_bytes = MERGE_PUSH ? 16 + (KS - 1) * BM * (HD + 8) * 4 : 0;
  [[maybe_unused]] const unsigned q_mbar = kf::smem_u32(push_tail) + push_bytes + 24 * STAGES * RINGS;
  KF_STAMP(22);  // indices computed, parameters read
  // KV_LOAD=tma: every ring's barriers (one ring per key group with WN_KEYS=range) and Q's are initialised by
  // one thread behind one fence: a fence.mbarrier_init costs ~150 cycles, and the key-range groups' two
  // threads initialising and fencing at once took ~550 (perf_notes item 60)
  [[maybe_unused]] const unsigned ring_bars = kf::smem_u32(push_tail) + push_bytes;
  if constexpr (TMA_KV) {
    const int init_tid = WN_RANGE ? 0 : TMA_PRODUCER;
    ring.init(ring_bars + 24 * STAGES * g, gK, gV, gt0 * BN, b * H + h);
    if (tid == init_tid)
      for (int r = 0; r < RINGS; ++r) TmaRing::init_barriers(ring_bars + 24 * STAGES * r);
    if (TMA_Q && tid == 0) kf::mbar_init(q_mbar, 1);
    if (tid == init_tid || (TMA_Q && tid == 0)) kf::fence_mbar_init();
    if (MC > 1) cluster_sync_relaxed();  // no peer multicasts before this CTA's barriers exist
    KF_STAMP(20);
  }

  Path path;
  path.init(warp, lane);
#if defined(KF_MMA_MMA)
  path.ring = &ring;
#endif
#if defined(KF_MMA_WMMA)
  path.set_scratch(reinterpret_cast<unsigned char*>(sV + RINGS * STAGES * KV_ELEMS), sQ);
#endif

  // Q: every thread's cp.async, or (Q_LOAD=tma) one box load by thread 0 on its own mbarrier, requested before
  // any K/V tile (perf_notes item 43: faster for the key-range groups, a little slower for one warpgroup)
  if constexpr (TMA_Q) {
    if (tid == 0) {  // (its barrier initialised with the rings')
      kf::mbar_arrive_expect_tx(q_mbar, BM * HD * (unsigned)sizeof(elem_t));
      kf::tma_load_3d(kf::smem_u32(sQ), tmQ, 0, m0, b * H + h, q_mbar);
    }
  } else {
    load_tile<BM>(sQ, Qh, m0, S, tid);
    kf::cp_async_commit();
  }
  KF_STAMP(21);

  // first tile that needs masking: past the causal diagonal of this block's first row or past S
  int first_mask = S / BN;
  if (CAUSAL) first_mask = min(first_mask, m0 / BN);

  if constexpr (WN_RANGE) {
    // Key group g streams tiles [gt0, gt0 + gn) through its own ring with its own GT threads and
    // barrier (KV_LOAD=tma: its first thread's refills), so no group waits for another's tiles. Started
    // together the groups run in phase (same work, same start); pingpong makes them take turns issuing MMAs
    // (perf_notes item 21), and on TMA the order of the first requests starts group 0 first (item 60).
    if constexpr (TMA_KV) {
      // One CTA barrier publishes thread 0's barrier inits; then thread 0 requests every group's first tiles,
      // stage by stage, group 0's before group 1's, and each group's first thread refills its own ring from
      // then on. An SM's first bytes arrive at ~64 B per cycle, so group 0 starts ~500 cycles ahead, and the
      // two groups run out of phase (started together they contend for the MUFU and tensor cores in the same
      // phases); group 0 finishes first and parks its partial (perf_notes items 59-61).
      __syncwarp();  // (thread 0's warp reconverged before the barrier, which counts whole warps)
      __syncthreads();
      if (tid == 0) {
        TmaRing rg[WN];
        int sn[WN];
        for (int gg = 0; gg < WN; ++gg) {
          const int s0 = t0 + min(gg * gper, ntiles);
          sn[gg] = t0 + min((gg + 1) * gper, ntiles) - s0;
          rg[gg].init(ring_bars + 24 * STAGES * gg, sK + gg * STAGES * KV_ELEMS, sV + gg * STAGES * KV_ELEMS,
                      s0 * BN, b * H + h);
        }
        for (int st = 0; st < STAGES - 1; ++st)
          for (int gg = 0; gg < WN; ++gg)
            if (st < sn[gg]) rg[gg].issue(st, tmK, tmV);
      }
    } else {
#pragma unroll
      for (int st = 0; st < STAGES - 1; ++st) {
        if (st < gn) {
          load_tile<BN, GT>(gK + st * KV_ELEMS, Kh, (gt0 + st) * BN, S, gtid);
          load_tile<BN, GT>(gV + st * KV_ELEMS, Vh, (gt0 + st) * BN, S, gtid);
        }
        kf::cp_async_commit();
      }
    }
    KF_STAMP(18);  // the group's first K/V tiles requested
    wait_q(q_mbar);
    KF_STAMP(19);  // Q resident
    path.q_to_regs(sQ);
    KF_STAMP(1);
#if defined(KF_MMA_WGMMA)
    path.turn_start();
#endif
    for (int jj = 0; jj < (PINGPONG_KEYS ? gper : gn); ++jj) {
#if defined(KF_MMA_WGMMA)
      path.pp_last = jj == gper - 1;
      if (PINGPONG_KEYS && jj >= gn) {
        path.turn_idle();
        continue;
      }
#endif
      const int j = gt0 + jj;
      if constexpr (TMA_KV) {
        group_sync(g);  // the group's warps are done with tile jj-1's slot, which tile jn refills
        ring.wait(jj);
      } else {
        kf::cp_async_wait<STAGES - 2>();
        publish_smem();
        group_sync(g);  // tile jj resident for the group; its warps are done with tile jj-1's slot
      }
      const int jn = jj + STAGES - 1;
      auto issue = [&] {
        if constexpr (TMA_KV) {
          if (gtid == 0 && jn < gn) ring.issue(jn, tmK, tmV);
        } else {
          if (jn < gn) {
            load_tile<BN, GT>(gK + (jn % STAGES) * KV_ELEMS, Kh, (gt0 + jn) * BN, S, gtid);
            load_tile<BN, GT>(gV + (jn % STAGES) * KV_ELEMS, Vh, (gt0 + jn) * BN, S, gtid);
          }
          kf::cp_async_commit();
        }
      };
      KF_STAMP(2 + 2 * jj);
      run_tile(path, sQ, gK + (jj % STAGES) * KV_ELEMS, gV + (jj % STAGES) * KV_ELEMS, j, first_mask, m0, S, sl2, issue);
      KF_STAMP(3 + 2 * jj);
    }
  } else {
  // K/V ring: tile t lives in slot t % STAGES. With KV_WAIT=split, K_t and V_t are separate
  // commit groups so Q K^T can start before V_t has landed (one extra barrier per tile).
  if constexpr (TMA_KV) {
    if (tid == TMA_PRODUCER)
      for (int st = 0; st < min(STAGES - 1, ntiles); ++st) ring.issue(st, tmK, tmV);
  } else if constexpr (STAGES > 1) {
#pragma unroll
    for (int st = 0; st < STAGES - 1; ++st) {
      if (st < ntiles) load_tile<BN>(sK + st * KV_ELEMS, Kh, (t0 + st) * BN, S, tid);
      if (SPLIT_WAIT) kf::cp_async_commit();
      if (st < ntiles) load_tile<BN>(sV + st * KV_ELEMS, Vh, (t0 + st) * BN, S, tid);
      kf::cp_async_commit();
    }
  }
  KF_STAMP(18);  // Q and the first K/V tiles requested
  wait_q(q_mbar);
  KF_STAMP(19);  // Q resident
  path.q_to_regs(sQ);
  KF_STAMP(1);

#if defined(KF_MMA_MMA)
  if constexpr (PIPE_QK) {
    // Q K^T of tile jj+1 is issued before the softmax of tile jj, so the tensor pipe works while the
    // MUFU/ALU pipes do the softmax (one warp per scheduler cannot overlap them otherwise).
    // Needs K_{jj+1} and V_jj resident: STAGES >= 3, one wait depth less than the plain loop.
    static_assert(!PIPE_QK || (STAGES >= 3 && !SPLIT_WAIT && WN == 1), "PIPE_QK needs STAGES >= 3, KV_WAIT=joint, WARPS_N=1");
    float sc[MT][Path::kNTN][4], sn[MT][Path::kNTN][4];
    if constexpr (TMA_KV) {
      if (ntiles > 0) ring.wait(0);
    } else {
      kf::cp_async_wait<(STAGES >= 2 ? STAGES - 2 : 0)>();
      publish_smem();
      __syncthreads();
    }
    if (ntiles > 0) path.qk(sQ, sK, sc);
    for (int jj = 0; jj < ntiles; ++jj) {
      const int j = t0 + jj;
      const int jn = jj + STAGES - 1;
      if constexpr (TMA_KV) {
        __syncthreads();  // every warp is done with tile jj-1's slot, which tile jn refills
        if (tid == 0 && jn < ntiles) {
          if (jj > 0) ring.release(jj - 1);
          ring.issue(jn, tmK, tmV);
        }
        if (jj + 1 < ntiles) ring.wait(jj + 1);
      } else {
        kf::cp_async_wait<(STAGES >= 3 ? STAGES - 3 : 0)>();
        publish_smem();
        __syncthreads();  // tile jj+1 resident for all; every warp is done with tile jj-1's slot
        if (jn < ntiles) {
          load_tile<BN>(sK + (jn % STAGES) * KV_ELEMS, Kh, (t0 + jn) * BN, S, tid);
          load_tile<BN>(sV + (jn % STAGES) * KV_ELEMS, Vh, (t0 + jn) * BN, S, tid);
        }
        kf::cp_async_commit();
      }
      if (jj + 1 < ntiles) path.qk_issue(sQ, sK + ((jj + 1) % STAGES) * KV_ELEMS, sn);
      const elem_t* tV = sV + (jj % STAGES) * KV_ELEMS;
      if (j >= first_mask)
        path.template softmax_pv<true>(sc, tV, j * BN, m0, S, sl2);
      else
        path.template softmax_pv<false>(sc, tV, j * BN, m0, S, sl2);
      Path::qk_complete(sn);
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int n = 0; n < Path::kNTN; ++n)
#pragma unroll
          for (int e = 0; e < 4; ++e) sc[mt][n][e] = sn[mt][n][e];
    }
  } else
#endif
  for (int jj = 0; jj < ntiles; ++jj) {
    const int j = t0 + jj;  // absolute key tile
#if defined(KF_MMA_WGMMA)
    // (inside the loop: a statement between the PIPE_QK branch's else and this loop would be that else's
    // whole body, and the loop would run after the pipelined one too)
    if (WG_PP && jj == 0) path.turn_start();
    path.pp_last = jj == ntiles - 1;
#endif
    const int slot = STAGES == 1 ? 0 : jj % STAGES;
    // DIAG=2 (timing diagnostic, wrong output): no K/V loads after the prologue's, so the loop's
    // time without the K/V stream into the SM
    const int jn = (KF_DIAG_NO_RELOAD ? ntiles : jj + STAGES - 1);
    auto issue = [&] {  // the tile STAGES - 1 ahead, into the slot every warp is done with
      if constexpr (TMA_KV) {
        if (tid == TMA_PRODUCER && jn < ntiles) ring.issue(jn, tmK, tmV);
      } else if constexpr (STAGES > 1) {
        if (jn < ntiles) load_tile<BN>(sK + (jn % STAGES) * KV_ELEMS, Kh, (t0 + jn) * BN, S, tid);
        if (SPLIT_WAIT) kf::cp_async_commit();
        if (jn < ntiles) load_tile<BN>(sV + (jn % STAGES) * KV_ELEMS, Vh, (t0 + jn) * BN, S, tid);
        kf::cp_async_commit();
      }
    };
    if constexpr (TMA_KV) {
      // every warp is done with tile jj - 1, whose slot tile jn refills (WG_PINGPONG: the turns order it,
      // see TMA_PRODUCER)
      if constexpr (!WG_PP) __syncthreads();
      if (tid == TMA_PRODUCER && jj > 0 && jn < ntiles) ring.release(jj - 1);
      if (!KF_DIAG_NO_RELOAD || jj < STAGES - 1) ring.wait(jj);  // DIAG=2 loads the prologue's tiles only
    } else if constexpr (STAGES == 1) {
      if (jj > 0) __syncthreads();
      load_tile<BN>(sK, Kh, j * BN, S, tid);
      if (SPLIT_WAIT) kf::cp_async_commit();
      load_tile<BN>(sV, Vh, j * BN, S, tid);
      kf::cp_async_commit();
      kf::cp_async_wait<SPLIT_WAIT ? 1 : 0>();
      publish_smem();
      __syncthreads();
    } else {
      // groups after K_j (split) / after (K_j,V_j) (joint) that may still be pending
      kf::cp_async_wait<SPLIT_WAIT ? 2 * STAGES - 3 : STAGES - 2>();
      publish_smem();
      __syncthreads();
    }
    KF_STAMP(2 + 2 * jj);
    run_tile(path, sQ, sK + slot * KV_ELEMS, sV + slot * KV_ELEMS, j, first_mask, m0, S, sl2, issue);
    KF_STAMP(3 + 2 * jj);
  }
  }  // !WN_RANGE
  kf::cp_async_wait<0>();
#if defined(KF_DIAG) && KF_DIAG == 1
  // timing diagnostic: no merge, no store. Every accumulator feeds a test the compiler cannot fold,
  // or ptxas drops P V and half the softmax (their results would be dead).
  if (path.diag_checksum() == -1.2345f) O[0] = TR::from_float(0.f);
  return;
#endif
  KF_STAMP(14);
#if defined(KF_MMA_MMA)
  // WARPS_N > 1 (KV_SPLITS is 1): the key groups merge and write O here
  // Two key-range groups: group 0 hands its partial to group 1 (perf_notes items 57, 60); its K ring must hold it
  constexpr bool PAIR_FITS = STAGES * KV_ELEMS * (int)sizeof(elem_t) >= (BM * HD + BM * 8) * 4;
  if constexpr (WN == 2 && WN_RANGE && PAIR_FITS)
    path.merge_pair_store(reinterpret_cast<float*>(sK), sQ, Oh, m0, S);
  else if constexpr (WN > 1)
    path.merge_store(reinterpret_cast<float*>(sK), sQ, Oh, m0, S, tid);
#endif
#if KF_STAMPS
  // one group's epilogue is its store: timed here, so that its span compares with the key groups' merge + store
  if constexpr (WN == 1 && KS == 1) path.store(sQ, Oh, m0, S);
#endif
  KF_STAMP(15);
#if KF_STAMPS
  __syncthreads();  // the stamps go over O rows the merge may have written
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(stamps[17]));
  if (path.diag_checksum() == -1.2345f) stamps[17] = 0;  // keeps P V live (see DIAG=1)
  if ((tid & 127) == 0 && m0 < S) {
    long long* out = reinterpret_cast<long long*>(Oh + (size_t)m0 * HD) + (tid >> 7) * KF_NSTAMPS;
    for (int k = 0; k < KF_NSTAMPS; ++k) out[k] = stamps[k];
  }
  return;
#endif
#if defined(KF_MMA_MMA)
  if constexpr (MERGE_PUSH) {
    const int rank = (int)cluster_rank();
    if (rank != 0) {
      path.push_partial(dsmem_map(push_rbuf, 0), dsmem_map(push_mbar, 0), rank - 1);
      return;
    }
    push_mbar_wait(push_mbar);
    const float2* o2 = reinterpret_cast<const float2*>(push_tail + 16);
    const float2* m2 = o2 + (KS - 1) * BM * HD / 2;
    path.merge_partials(
        [&](int sp, int kind, int idx) {
          return kind == 1 ? o2[(sp - 1) * (BM * HD / 2) + idx] : m2[(sp - 1) * (BM * 4) + idx];
        },
        0);
    path.store(sQ, Oh, m0, S);
    return;
  }
#if KF_MERGE_IN_CLUSTER
  if constexpr (!MERGE_PUSH) {
    // each CTA parks its slice in its own smem (over the idle K/V ring), cluster barrier, then CTA r merges
    // (over DSMEM) and stores the rows of warps w with w % KS == r; a second barrier keeps every CTA's smem
    // alive until all remote reads are done
    float* part = reinterpret_cast<float*>(sK);  // O [BM * HD] then (m, l) [BM * 8]
    __syncthreads();  // every warp is done with the K/V ring
    path.template save_partial<true>(part, part + BM * HD);
    cluster_sync_all();
    const int rank = (int)cluster_rank();
    if (warp % KS == rank) {
      const unsigned base = kf::smem_u32(part);
      path.merge_partials(
          [&](int sp, int kind, int idx) {
            const unsigned a = base + (unsigned)(kind == 1 ? idx * 8 : BM * HD * 4 + idx * 8);
            return dsmem_ld2(dsmem_map(a, (unsigned)sp));
          },
          rank);
      path.store(sQ, Oh, m0, S);
    }
    cluster_sync_relaxed();
    return;
  }
#endif
  if constexpr (KS > 1) {
    // publish this slice, count arrivals; the last CTA of the query block merges and stores
    const size_t blk = ((size_t)b * H + h) * nblk + mblk;
    path.template save_partial<false>(Opart + (blk * KS + split) * (BM * HD), MLpart + (blk * KS + split) * (BM * 8));
    __threadfence();
    __syncthreads();  // also: every warp is done with the K/V ring, reused below for the flag
    volatile int* flag = reinterpret_cast<volatile int*>(sK);
    if (tid == 0) {
      const int prev = atomicAdd(Cnt + blk, 1);
      const int last = prev == KS - 1;
      if (last) Cnt[blk] = 0;  // every slice has arrived: leave the counter zero for the next launch
      *flag = last;
    }
    __syncthreads();
    if (!*flag) return;
    __threadfence();
    const float2* o2 = reinterpret_cast<const float2*>(Opart + blk * KS * (BM * HD));
    const float2* m2 = reinterpret_cast<const float2*>(MLpart + blk * KS * (BM * 8));
    path.merge_partials(
        [&](int sp, int kind, int idx) {
          return kind == 1 ? __ldcg(o2 + sp * (BM * HD / 2) + idx) : __ldcg(m2 + sp * (BM * 4) + idx);
        },
        split);
  }
#endif
  if constexpr (WN == 1) path.store(sQ, Oh, m0, S);
}
