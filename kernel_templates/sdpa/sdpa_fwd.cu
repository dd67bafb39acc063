// kforge family sdpa_fwd: scaled-dot-product attention forward, O = softmax(Q K^T * scale) V.
// Layout: Q and O [B, H, S, D], K and V [B, Hkv, Skv, D], contiguous; 16-bit elements (f16 or bf16), fp32
// accumulation. Grouped-query attention: query head h reads K/V head h / (H / Hkv). A KV cache: S query rows
// against Skv >= S keys, the causal mask aligned bottom-right (row i sees keys 0 .. i + Skv - S).
//
// FlashAttention-2 structure: each CTA owns BLOCK_M query rows of one (b, h); each warp owns
// BLOCK_M / WARPS of them; K/V are streamed once through a STAGES-deep ring of BLOCK_N-row tiles
// (cp.async, or TMA with mbarriers); the softmax is online (running max and sum), in the base-2 domain.
// Q K^T and P V run on mma.sync or (sm_90a) warpgroup MMA.
//
// The kernel below is the algorithm; the blocks it is built from:
//   sdpa/config.cuh        the parameters (documented there), constants and rejected combinations
//   sdpa/diag.cuh          timing diagnostics (DIAG, DIAG_CUT, DIAG_STORE: wrong output on purpose)
//   sdpa/pipeline.cuh      Q's load and the K/V pipeline of this config (common/kv_pipeline.cuh)
//   sdpa/producer.cuh      WS=1: the producer warpgroup that issues every load
//   sdpa/persistent.cuh    PERSIST=1: the persistent CTA's producer and consumer loops over its work tiles
//   sdpa/persistent_stream.cuh  PERSIST=2: the same, one key loop across the work tiles
//   sdpa/mainloop.cuh      one key tile: Q K^T, mask, online softmax, P V, over the path's GEMMs
//                          (sdpa/gemm_mma.cuh, sdpa/gemm_wgmma.cuh; state in sdpa/path_state.cuh)
//   sdpa/key_loops.cuh     the loops over the key tiles (key-range groups, PIPE_QK, plain);
//   sdpa/overlap_loop.cuh  PIPE_QK=2, FA3's intra-warpgroup overlap
//   sdpa/merge.cuh         key groups' merge and store; sdpa/merge_splits.cuh split-KV merges and store
//   common/tile_scheduler.cuh  which query block and key slice a CTA owns
//
// Runtime arguments: Q, K, V, O, int B, int H, int S, int Hkv, int Skv, float scale, then the scratch buffers
//   OPART (f32, [B*H*nblk][KV_SPLITS][BM*D]), MLPART (f32, [..][KV_SPLITS][BM*8]), CNT (i32, [B*H*nblk]),
//   unused when KV_SPLITS == 1, then the tensor maps of K, V and Q (TMA only): 3-D (D, Skv, B*Hkv) for K and V,
//   (D, S, B*H) for Q, box
//   (64, BLOCK_N / KV_MCAST, 1) for K and V, (64, BLOCK_M, 1) for Q, 128-byte swizzle.
// Launch: grid (ceil(S / BLOCK_M) rounded up to KV_MCAST, times KV_SPLITS, H, B), block 32 * WARPS (+ 128: WS),
//   PACK_GQA: grid (ceil(H / Hkv * S / BLOCK_M) ..., Hkv, B), the Q and O maps (D, H / Hkv * S, B * Hkv),
//   PERSIST: grid (min(SMs, work tiles), 1, 1),
//   dynamic smem = spec's smem_bytes. Query blocks past S (the rounding) only help their cluster load.
#include "sdpa/config.cuh"
#include "sdpa/diag.cuh"
#include "common/tile_scheduler.cuh"
#include "sdpa/pipeline.cuh"
#include "sdpa/producer.cuh"
#include "sdpa/mainloop.cuh"
#include "sdpa/key_loops.cuh"
#include "sdpa/overlap_loop.cuh"
#include "sdpa/merge.cuh"
#include "sdpa/merge_splits.cuh"
#include "sdpa/persistent.cuh"
#include "sdpa/persistent_stream.cuh"
static_assert(!WS || !KF_STAMPS, "the DIAG stamps time a CTA whose warps all load: not with WS=1");

extern "C" __global__ void KF_CLUSTER_ATTR __launch_bounds__(NT_ALL, KF_MIN_BLOCKS)
    sdpa_fwd(const elem_t* __restrict__ Q, const elem_t* __restrict__ K, const elem_t* __restrict__ V,
             elem_t* __restrict__ O, int B, int H, int S, int Hkv, int Skv, float scale, float* __restrict__ Opart,
             float* __restrict__ MLpart, int* __restrict__ Cnt, const __grid_constant__ kf::TmaDesc tmK,
             const __grid_constant__ kf::TmaDesc tmV, const __grid_constant__ kf::TmaDesc tmQ) {
  extern __shared__ __align__(128) unsigned char smem_raw[];
  // wgmma's swizzle atoms must sit on 1024-byte boundaries (the spec adds 1024 bytes of slack)
  const unsigned align_pad = WGMMA ? (1024u - (kf::smem_u32(smem_raw) & 1023u)) & 1023u : 0u;
  elem_t* sQ = reinterpret_cast<elem_t*>(smem_raw + align_pad);
  elem_t* sK = sQ + Q_BUFS * Q_ELEMS;  // (persistent CTAs with Q in smem: two Q buffers)
  elem_t* sV = sK + RINGS * STAGES * KV_ELEMS;
  elem_t* sO = sV + RINGS * STAGES * KV_ELEMS;  // persistent CTAs' O staging rows with one Q buffer (O_ELEMS)

  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  KF_STAMPS_BEGIN(tid);
  kf::AttnBlock<BM, BN, KS, CAUSAL, MC> blk;  // query block m0.., key tiles [t0, t0 + ntiles)
  blk.init();
  const int h = blockIdx.y, b = blockIdx.z;  // h: the query head (PACK_GQA: the K/V head)
  const int m0 = blk.m0;
  const int off = Skv - S;                     // the causal diagonal's offset (bottom-right aligned)
  const int G = H / Hkv;                       // query heads per K/V head
  // The block's view of Q and O: heads of qrows rows. PACK_GQA: the G heads of K/V head h, G * S rows in a row.
  const int qheads = GQA_PACK ? Hkv : H, qrows = GQA_PACK ? G * S : S;
  const int bh = b * qheads + h;               // Q's and O's head (PACK_GQA: its group of G)
  const int kvh = GQA_PACK ? b * Hkv + h : b * Hkv + h / G;
  const size_t qhead = (size_t)bh * (size_t)qrows * HD, kvhead = (size_t)kvh * (size_t)Skv * HD;
  const elem_t* Qh = Q + qhead;
  const elem_t* Kh = K + kvhead;
  const elem_t* Vh = V + kvhead;
  elem_t* Oh = O + qhead;
  // (PACK_GQA: a block's rows come from every query row of a head: its keys, all of them, are masked per row)
  blk.slice_keys(Skv, GQA_PACK ? Skv : off);
  const int t0 = blk.t0, ntiles = blk.ntiles;
  const float sl2 = scale * KF_LOG2E;

  // past the K/V rings (and PERSIST's O rows): KV_MERGE=push's mbarrier and receive buffer (the spec's push_bytes),
  // then KV_LOAD=tma's ring barriers (24 * STAGES bytes per ring, 32 with WS) and Q's (8; PERSIST 16 per Q buffer:
  // full and empty; the spec's tma_bytes)
  unsigned char* tail = reinterpret_cast<unsigned char*>(sO + O_ELEMS);
  if constexpr (MERGE_PUSH) {
    if (kf::cluster_rank() == 0 && tid == 0) kf::push_mbar_init(kf::smem_u32(tail), (KS - 1) * BM * (HD + 8) * 4);
    kf::cluster_sync_relaxed();  // no CTA pushes before CTA 0's mbarrier is initialised
  }
  // WN_KEYS=range / pingpong: key group g (its GT threads, gtid 0 .. GT - 1) streams tiles [gt0, gt0 + gn)
  // through its own ring (slots gK / gV)
  const int g = WN_RANGE ? warp / WM : 0, gtid = tid - g * GT;
  const kf::KeyRange range(t0, ntiles, g, WN);
  const int gt0 = WN_RANGE ? range.first : t0, gn = WN_RANGE ? range.count : ntiles;
  elem_t* gK = sK + g * STAGES * KV_ELEMS;
  elem_t* gV = sV + g * STAGES * KV_ELEMS;
  KvPipe pipe;  // this thread's K/V pipeline
  constexpr unsigned push_bytes = MERGE_PUSH ? 16 + (KS - 1) * BM * (HD + 8) * 4 : 0;
  [[maybe_unused]] const unsigned q_mbar = kf::smem_u32(tail) + push_bytes + TmaRing::BARRIER_BYTES * RINGS;
  KF_STAMP(22);  // indices computed, parameters read

  [[maybe_unused]] const unsigned ring_bars = kf::smem_u32(tail) + push_bytes;
  init_pipe(pipe, ring_bars + TmaRing::BARRIER_BYTES * g, gK, gV, Kh, Vh, gt0, gn, Skv, kvh, gtid, tmK, tmV);
  if constexpr (TMA_KV) {
    init_tma_barriers(ring_bars, q_mbar, tid);
    KF_STAMP(20);
  }
  if constexpr (WS) {
    __syncthreads();  // every mbarrier initialised before the producer issues or a consumer waits
    if constexpr (PERSIST) {
      const Work work(S, Skv, H, Hkv, B);
      const unsigned q_empty = q_mbar + 8 * Q_BUFS;  // (Q's full barriers, then its empty ones)
      if (tid >= NT)
        persistent_producer(pipe, sQ, tmQ, q_mbar, q_empty, work, S, tid);
      else if constexpr (STREAM)
        stream_consumer(pipe, sQ, sK, sV, O, q_mbar, work, S, sl2, tid);
      else
        persistent_consumer(pipe, sQ, sK, sV, sO, O, q_mbar, q_empty, work, S, sl2, tid);
      return;
    }
    if (tid >= NT) {
      produce(pipe, sQ, tmQ, q_mbar, m0, bh, qrows, ntiles, tid);
      return;  // (no CTA barrier follows)
    }
    consume_registers();
  }

  Path path;
  path.init(warp, lane);
  if constexpr (TMA_KV) path.pipe = &pipe;
  path.q_rows = S;
  path.q_off = off;
  if constexpr (!WS) load_q(sQ, Qh, tmQ, q_mbar, m0, bh, qrows, tid);
  KF_STAMP(21);
  const int first_mask = GQA_PACK ? kf::first_masked_tile<BN, CAUSAL>(off, Skv) : blk.first_masked_tile(Skv, off);

  request_first_tiles(pipe, ring_bars, sK, sV, t0, ntiles, kvh, tid, tmK, tmV);
  KF_STAMP(18);  // Q and the first K/V tiles requested
  wait_q(q_mbar);
  KF_STAMP(19);  // Q resident
  path.q_to_regs(sQ);
  KF_STAMP(1);

  const KeyLoop loop{sQ, gK, gV, gt0, gn, first_mask, GQA_PACK ? m0 : m0 + off, Skv, sl2, tid, KF_STAMPS_PTR};
  if constexpr (WN_RANGE)
    key_range_loop(path, pipe, loop, g, gtid, range.per);
  else if constexpr (KF_PIPE_QK == 2)
    overlap_loop(path, pipe, loop);
  else if constexpr (PIPE_QK)
    pipelined_loop(path, pipe, loop);
  else
    tile_loop(path, pipe, loop);
  kf::cp_async_wait<0>();
#if KF_DIAG_STOP_AFTER_LOOP
  // every accumulator feeds a test the compiler cannot fold, or ptxas drops P V and half the softmax
  if (path.diag_checksum() == -1.2345f) O[0] = TR::from_float(0.f);
  return;
#endif
  KF_STAMP(14);

  if constexpr (WN > 1) merge_key_groups_and_store(path, sQ, sK, Oh, m0, qrows, tid);
#if KF_STAMPS
  // one group's epilogue is its store: timed here, so that its span compares with the key groups' merge + store
  if constexpr (WN == 1 && KS == 1) path.store(sQ, Oh, m0, qrows);
  KF_STAMP(15);
  diag_write_stamps(path, stamps, Oh, m0, qrows, tid);
  return;
#endif
  if constexpr (WN == 1)
    merge_splits_and_store(path, SplitScratch{Opart, MLpart, Cnt, tail}, sQ, sK, Oh, m0, qrows, tid, warp, b, qheads, h,
                           blk.nblk, blk.mblk, blk.split);
}
