// sdpa_fwd's configuration: the parameters (#define KF_<NAME>, see docs/family_spec.md) with their
// defaults, the compile-time constants the blocks read, and the combinations the template rejects.
// The spec's constraints keep a search from proposing a rejected combination; the static_asserts here
// name the rule when a config is built by hand.
//
// Parameters (#define KF_<NAME>, see docs/family_spec.md):
//   KF_BLOCK_M, KF_BLOCK_N, KF_WARPS, KF_STAGES, KF_VEC (elements per cp.async: 2, 4, 8)
//   KF_MMA_MMA | KF_MMA_WGMMA      compute path: mma.sync (sm_80+), or warpgroup MMA (sm_90a, one
//                 warpgroup per 64 query rows of a key group, 16 rows per warp, swizzled layout)
//                 (the simt and wmma paths are the sdpa_basic family)
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
//   KF_KV_LOAD_CP_ASYNC | KF_KV_LOAD_TMA  how K/V tiles reach smem: every thread's cp.async, or (wgmma)
//                 one thread's TMA box loads (one box per 64 columns of D) from the tensor maps tmK / tmV, each ring slot completed on a
//                 "full" mbarrier by byte count (no LSU issue, no cp.async wait in the compute warps)
//   KF_KV_MCAST  (TMA) cluster of KV_MCAST neighbouring query blocks of one head: each CTA loads 1 / KV_MCAST
//                 of every K/V tile and multicasts it to all of them, so each tile crosses L2 -> SM once per
//                 cluster; an "empty" mbarrier per slot counts the cluster's CTAs done with it before reuse
//   KF_WS  (wgmma, TMA, PIPE_QK=2) 1: warp specialisation (FA3): a producer warpgroup, past the WARPS consumer
//                 warps, issues every TMA load (Q, then each tile's K and V as soon as every consumer warp has
//                 released the slot's previous K or V) and gives its registers to the consumers (setmaxnreg:
//                 24 for it, 240 for two consumer warpgroups), so two stages suffice and BLOCK_N may pass 128
//                 (96 to 192, as far as the registers allow; sdpa/producer.cuh)
//   KF_PERSIST  (WS) 1: a persistent CTA per SM walks the work tiles (query block, head), head by head, longest
//                 first within a head when causal (common/tile_scheduler.cuh); its producer loads the next work
//                 tile's Q and K/V while the consumers run this one (Q in smem: two Q buffers, O staged in the
//                 finished one; Q in registers: Q's buffer released once copied, O staged in rows of its own)
//                 (sdpa/persistent.cuh); 2: the same CTAs, but the consumers' overlap loop runs on across work
//                 tiles (a work tile's last P V goes out with the next one's first Q K^T) and Q has two buffers
//                 (sdpa/persistent_stream.cuh)
//   KF_MIN_BLOCKS  second __launch_bounds__ argument (caps registers for more CTAs per SM)
//   KF_KV_SPLITS  (mma path) CTAs per query block, each over a contiguous slice of the key tiles; each
//                 writes unnormalised O and (m, l) to scratch, the last to finish (atomic counter,
//                 reset to 0 by it) merges them and writes O. One launch.
//                 KV_SPLITS 8 to 32 (a decode step's few query rows against a long KV cache: enough CTAs to
//                 stream the cache at full bandwidth) merge through global scratch only.
//   KF_PACK_GQA  1: a CTA's query rows are the G = H / Hkv query heads that share one K/V head, their rows one
//                 after another (Q and O of those heads are contiguous: a [G * S] x D block), so each K/V tile
//                 is loaded once for all of them (FA3's packed GQA); row r is query row r % S of its head, which
//                 the causal mask reads. For few query rows (decode): G heads fill one BLOCK_M. Not with PERSIST.
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
//   KF_PIPE_QK  (mma path) 1: software-pipelined key loop, Q K^T of the next tile before this tile's softmax;
//                 2 (wgmma, TMA): FA3's intra-warpgroup overlap, Q K^T of the next tile and P V of this one in flight
//                 together under the next tile's softmax (sdpa/overlap_loop.cuh)
//   KF_LAZY_RESCALE  (mma path) 1: skip the O *= alpha pass when no row of the warp's m-tile has a new max
//   KF_LANE_ADDR  (mma.sync only) 1: ldmatrix addresses recomputed per tile instead of hoisted (fewer live registers)
// The mma-path options (Q_IN, KV_SPLITS, P_EARLY, EXP2, PIPE_QK, LAZY_RESCALE) apply to wgmma too.
//   specialised dims: KF_D (64|128|256), KF_CAUSAL (0|1), KF_DTYPE_F16 | KF_DTYPE_BF16
#pragma once

#if defined(KF_MMA_WGMMA)
// The wgmma path is the mma path (same fragments, softmax and epilogue) with Q K^T and P V on
// warpgroup MMA (sm_90a): no ldmatrix, no per-warp B fragments in registers.
#define KF_MMA_MMA 1
constexpr bool WGMMA = true;
#else
constexpr bool WGMMA = false;
#endif
#if !defined(KF_MMA_MMA)
#error "sdpa_fwd: MMA is mma or wgmma (simt and wmma are the sdpa_basic family)"
#endif
#include "common/dtype.cuh"
#include "common/smem_layout.cuh"

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
// address) instead of hoisted out of the key loop (docs/experiments/14-lane-addr-*.md)
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
#ifndef KF_PACK_GQA
#define KF_PACK_GQA 0
#endif
constexpr bool GQA_PACK = KF_PACK_GQA != 0;  // (PACK is softmax's name for P_EARLY)
#ifndef KF_KV_MCAST
#define KF_KV_MCAST 1
#endif
constexpr int MC = KF_KV_MCAST;
// A cluster: KV_MCAST's multicast group, or the split-KV CTAs of a query block merging in it.
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
#if defined(KF_KV_MERGE_PUSH) && KF_MERGE_IN_CLUSTER
constexpr bool MERGE_PUSH = true;
#else
constexpr bool MERGE_PUSH = false;
#endif

constexpr int HD = KF_D;
constexpr int BM = KF_BLOCK_M;
constexpr int BN = KF_BLOCK_N;
constexpr int NW = KF_WARPS;
constexpr int NT = 32 * NW;  // the compute (consumer) threads
#ifndef KF_WS
#define KF_WS 0
#endif
constexpr bool WS = KF_WS != 0;
constexpr int NT_ALL = NT + (WS ? 128 : 0);  // the block: with WS, the producer warpgroup follows the consumers
// setmaxnreg (WS, two consumer warpgroups): 128 * 24 + 256 * 240 <= 64 K registers; 0: left as launched
constexpr int PRODUCER_REGS = WS && NW == 8 ? 24 : 0;
constexpr int CONSUMER_REGS = WS && NW == 8 ? 240 : 0;
#ifndef KF_PERSIST
#define KF_PERSIST 0
#endif
constexpr bool PERSIST = KF_PERSIST != 0;
constexpr bool STREAM = KF_PERSIST == 2;  // PERSIST=2: the consumers' key loop runs on across work tiles
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
constexpr int PP_THREADS = WG_PP ? 256 : 2 * GT;  // the two turn-taking groups' threads

#if defined(KF_MMA_WGMMA)
#if !defined(KF_LAYOUT_SWIZZLED)
#error "MMA=wgmma needs LAYOUT=swizzled"
#endif
// what wgmma's 128-byte-swizzle descriptors read and TMA boxes write: 64-column blocks of the tile's rows
typedef kf::Sw128Layout<HD, BM> LayQ;
typedef kf::Sw128Layout<HD, BN> LayKV;
#elif defined(KF_LAYOUT_SWIZZLED)
typedef kf::SwizzledLayout<HD> LayQ;
typedef LayQ LayKV;
#elif defined(KF_LAYOUT_PADDED)
typedef kf::PaddedLayout<HD> LayQ;
typedef LayQ LayKV;
#else
typedef kf::PlainLayout<HD> LayQ;
typedef LayQ LayKV;
#endif
#if defined(KF_Q_IN_REGS)
constexpr bool Q_REGS = true;
#else
constexpr bool Q_REGS = false;
#endif
// Persistent CTAs load the next work tile's Q while this one runs: with Q in smem into a second buffer (O is
// staged in the finished one), with Q in registers into the one buffer, which the consumers release once they
// copied Q (2-3% faster than releasing it after the work tile's last MMA: docs/experiments/71-*).
constexpr bool Q_EARLY = PERSIST && !STREAM && Q_REGS;  // Q's one buffer released once Q is in registers
constexpr int Q_BUFS = STREAM || (PERSIST && !Q_REGS) ? 2 : 1;
constexpr int ROWE = LayQ::kRowElems;  // allocated elements per smem row
// Shared-memory carve-up (must match the spec's smem_bytes): sQ [BM][ROWE], sK [RINGS][STAGES][BN][ROWE],
// sV [RINGS][STAGES][BN][ROWE], then KV_MERGE=push's mbarrier and receive buffer, the TMA ring barriers, Q's.
constexpr int Q_ELEMS = BM * ROWE;
constexpr int KV_ELEMS = BN * ROWE;
constexpr int O_ELEMS = PERSIST && Q_BUFS == 1 ? BM * ROWE : 0;  // O's staging rows where Q has one buffer

// mma fragments: 16-row m-tiles per warp, the keys of a tile one warp handles, 8-column tiles
constexpr int MT = RPW / 16;
constexpr int BNW = WN_RANGE ? BN : BN / WN;
constexpr int NTN = BNW / 8;  // 8-column score tiles
constexpr int NTD = HD / 8;   // 8-column output tiles

static_assert(HD == 64 || HD == 128 || HD == 256, "D must be 64, 128 or 256");
static_assert(NW % WN == 0 && BM % WM == 0, "WARPS_N must divide WARPS, WARPS / WARPS_N must divide BLOCK_M");
static_assert(!WN_RANGE || (STAGES >= 2 && (TMA_KV || !SPLIT_WAIT)),
              "WN_KEYS=range needs STAGES >= 2, and KV_WAIT=joint on cp.async");
static_assert(!PINGPONG_KEYS || WN == 2, "WN_KEYS=pingpong needs WARPS_N == 2");
static_assert(BN % 16 == 0, "BLOCK_N must be a multiple of 16");
static_assert(STAGES >= 1, "STAGES >= 1");
static_assert(VEC == 2 || VEC == 4 || VEC == 8, "VEC is 2, 4 or 8 elements");
static_assert(RPW % 16 == 0, "mma path: rows per warp must be a multiple of 16");
static_assert(BNW % 16 == 0, "BLOCK_N / WARPS_N must be a multiple of 16");
static_assert(!TMA_KV || (WGMMA && STAGES >= 2), "KV_LOAD=tma needs wgmma and STAGES >= 2");
static_assert(!TMA_Q || TMA_KV, "Q_LOAD=tma needs KV_LOAD=tma");
static_assert(!TMA_KV || !WN_RANGE || MC == 1, "KV_LOAD=tma with WN_KEYS=range / pingpong needs KV_MCAST 1");
static_assert(MC == 1 || (TMA_KV && KS == 1 && BN % (8 * MC) == 0),
              "KV_MCAST > 1 needs KV_LOAD=tma, KV_SPLITS 1 and 8-row slices");
static_assert(!WG_PP || (WGMMA && TMA_KV && NW == 8 && LOAD_AFTER_QK && STAGES >= (WS ? 2 : 3) && MC == 1 && KS == 1 &&
                         ((WN == 1 && BM == 128) || (WN == 2 && !WN_RANGE && BM == 64 && !PIPE_QK))),
              "WG_PINGPONG needs wgmma, KV_LOAD=tma, WARPS 8, LOAD_ORDER=after_qk, STAGES >= 3 (2 with WS), KV_MCAST 1, "
              "KV_SPLITS 1, and BLOCK_M 128 with WARPS_N 1 or BLOCK_M 64 with WARPS_N 2 (WN_KEYS=tile, PIPE_QK 0)");
static_assert(KF_PIPE_QK != 2 || (WGMMA && TMA_KV && !EXP2_PAIR), "PIPE_QK=2 needs MMA=wgmma, KV_LOAD=tma, EXP2 != pair");
static_assert(!PIPE_QK || (STAGES >= (WS ? 2 : 3) && (!SPLIT_WAIT || TMA_KV) && WN == 1),
              "PIPE_QK needs STAGES >= 3 (2 with WS), KV_WAIT=joint on cp.async, WARPS_N=1");
static_assert(KS == 1 || KS == 2 || KS == 4 || KS == 8 || KS == 16 || KS == 32, "KV_SPLITS is 1, 2, 4, 8, 16 or 32");
static_assert(KS <= 4 || !KF_MERGE_IN_CLUSTER, "KV_SPLITS 8 to 32 merge through global scratch (KV_MERGE=gmem)");
static_assert(!GQA_PACK || !PERSIST, "PACK_GQA needs PERSIST=0");
static_assert(!WS || (KF_PIPE_QK == 2 && TMA_Q && SPLIT_WAIT && WN == 1 && KS == 1 && MC == 1 && (NW == 4 || NW == 8)),
              "WS=1 needs PIPE_QK=2, Q_LOAD=tma, KV_WAIT=split, WARPS_N 1, KV_SPLITS 1, KV_MCAST 1, WARPS 4 or 8");
static_assert(!PERSIST || WS, "PERSIST needs WS=1");
static_assert(KF_PERSIST >= 0 && KF_PERSIST <= 2, "PERSIST is 0, 1 or 2");
static_assert(KS == 1 || WN == 1, "KV_SPLITS > 1 needs WARPS_N == 1");
