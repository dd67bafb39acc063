// kforge family sdpa_basic: scaled-dot-product attention forward, O = softmax(Q K^T * scale) V, on the
// paths that need no mma.sync fragments: SIMT (no tensor cores) and WMMA. Same layout, arguments (the first
// eight of sdpa_fwd's) and reference as sdpa_fwd, whose mma.sync / wgmma paths beat these on every measured
// shape (docs/perf_notes.md); kept as the small, portable baseline of the attention family.
// Layout [B, H, S, D] contiguous, 16-bit elements (f16 or bf16), fp32 accumulation.
//
// FlashAttention-2 structure: each CTA owns BLOCK_M query rows of one (b, h); each warp owns BLOCK_M / WARPS
// of them; K/V are streamed once through a STAGES-deep cp.async ring of BLOCK_N-row tiles
// (common/kv_pipeline.cuh); the softmax is online (running max and sum), in the base-2 domain.
//
// Parameters (#define KF_<NAME>, see docs/family_spec.md):
//   KF_BLOCK_M, KF_BLOCK_N, KF_WARPS, KF_STAGES, KF_VEC (elements per cp.async: 2, 4, 8), KF_MIN_BLOCKS
//   KF_MMA_SIMT | KF_MMA_WMMA                    compute path (sdpa_basic/path_simt.cuh, path_wmma.cuh)
//   KF_LAYOUT_PLAIN | KF_LAYOUT_PADDED | KF_LAYOUT_SWIZZLED   shared-memory tile layout (wmma: not swizzled)
//   KF_KV_WAIT_JOINT | KF_KV_WAIT_SPLIT          one cp.async group per K/V tile, or K and V apart
//   specialised dims: KF_D (64|128), KF_CAUSAL (0|1), KF_DTYPE_F16 | KF_DTYPE_BF16
// Runtime arguments: Q, K, V, O, int B, int H, int S, float scale.
// Launch: grid (ceil(S / BLOCK_M), H, B), block 32 * WARPS, dynamic smem = spec's smem_bytes.
#include "common/dtype.cuh"
#include "common/kv_pipeline.cuh"
#include "common/smem_layout.cuh"
#include "common/tile_scheduler.cuh"

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
constexpr int HD = KF_D;
constexpr int BM = KF_BLOCK_M;
constexpr int BN = KF_BLOCK_N;
constexpr int NW = KF_WARPS;
constexpr int NT = 32 * NW;
constexpr int STAGES = KF_STAGES;
constexpr int VEC = KF_VEC;
constexpr int RPW = BM / NW;  // query rows per warp
constexpr bool CAUSAL = KF_CAUSAL != 0;
#if defined(KF_KV_WAIT_SPLIT)
constexpr bool SPLIT_WAIT = true;
#else
constexpr bool SPLIT_WAIT = false;
#endif
static_assert(HD == 64 || HD == 128, "D must be 64 or 128");
static_assert(BM % NW == 0, "WARPS must divide BLOCK_M");
static_assert(BN % 16 == 0, "BLOCK_N must be a multiple of 16");
static_assert(STAGES >= 1, "STAGES >= 1");
static_assert(VEC == 2 || VEC == 4 || VEC == 8, "VEC is 2, 4 or 8 elements");
#if !defined(KF_MMA_SIMT) && !defined(KF_MMA_WMMA)
#error "sdpa_basic: MMA is simt or wmma"
#endif

#if defined(KF_LAYOUT_SWIZZLED)
typedef kf::SwizzledLayout<HD> Lay;
#elif defined(KF_LAYOUT_PADDED)
typedef kf::PaddedLayout<HD> Lay;
#else
typedef kf::PlainLayout<HD> Lay;
#endif
constexpr int ROWE = Lay::kRowElems;  // allocated elements per smem row
// Shared memory (the spec's smem_bytes): sQ [BM][ROWE], sK [STAGES][BN][ROWE], sV [STAGES][BN][ROWE], then
// (wmma) the S, P and O tiles.
constexpr int Q_ELEMS = BM * ROWE;
constexpr int KV_ELEMS = BN * ROWE;

typedef kf::CpAsyncKv<elem_t, Lay, HD, BN, STAGES, VEC, NT, SPLIT_WAIT, false> KvPipe;
// With split waits: V_j resident for the whole CTA before P V.
__device__ __forceinline__ void wait_v() { KvPipe::wait_v(nullptr); }

#include "sdpa_basic/path_simt.cuh"
#include "sdpa_basic/path_wmma.cuh"

extern "C" __global__ void __launch_bounds__(NT, KF_MIN_BLOCKS)
    sdpa_basic(const elem_t* __restrict__ Q, const elem_t* __restrict__ K, const elem_t* __restrict__ V,
               elem_t* __restrict__ O, int B, int H, int S, float scale) {
  extern __shared__ __align__(128) unsigned char smem_raw[];
  elem_t* sQ = reinterpret_cast<elem_t*>(smem_raw);
  elem_t* sK = sQ + Q_ELEMS;
  elem_t* sV = sK + STAGES * KV_ELEMS;

  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  kf::AttnBlock<BM, BN, 1, CAUSAL, 1> blk;  // query block m0.., key tiles [t0, t0 + ntiles)
  blk.init();
  const int h = blockIdx.y, b = blockIdx.z;
  const int m0 = blk.m0;
  const size_t head = ((size_t)b * H + h) * (size_t)S * HD;
  const elem_t* Qh = Q + head;
  elem_t* Oh = O + head;
  blk.slice_keys(S, 0);
  const int t0 = blk.t0, ntiles = blk.ntiles;
  const float sl2 = scale * KF_LOG2E;
  KvPipe pipe;
  pipe.init(sK, sV, K + head, V + head, t0, ntiles, S, tid);

  Path path;
  path.init(warp, lane);
#if defined(KF_MMA_WMMA)
  path.set_scratch(reinterpret_cast<unsigned char*>(sV + STAGES * KV_ELEMS), sQ);
#endif
  kf::load_tile_async<BM, HD, VEC, NT, Lay>(sQ, Qh, m0, S, tid);
  kf::cp_async_commit();
  const int first_mask = blk.first_masked_tile(S, 0);

  // the first STAGES - 1 K/V tiles, then Q resident (the groups issued after Q's may still be pending)
  if constexpr (STAGES > 1) {
#pragma unroll
    for (int st = 0; st < STAGES - 1; ++st) pipe.issue(st);
  }
  kf::cp_async_wait<((SPLIT_WAIT ? 2 : 1) * (STAGES - 1))>();
  __syncthreads();

  for (int jj = 0; jj < ntiles; ++jj) {
    const int j = t0 + jj;  // absolute key tile
    const int slot = STAGES == 1 ? 0 : jj % STAGES;
    const int jn = jj + STAGES - 1;
    auto issue = [&] {  // the tile STAGES - 1 ahead, into the slot every warp is done with
      if constexpr (STAGES > 1) pipe.issue(jn);
    };
    if constexpr (STAGES == 1) {
      if (jj > 0) __syncthreads();  // every warp is done with the one slot
      pipe.issue_in_range(jj);
      pipe.wait<0>(jj);
    } else {
      pipe.wait<(STAGES >= 2 ? STAGES - 2 : 0)>(jj);
    }
    __syncthreads();  // tile jj resident for the CTA
    const elem_t* tK = sK + slot * KV_ELEMS;
    const elem_t* tV = sV + slot * KV_ELEMS;
    if (j >= first_mask)
      path.template tile<true>(sQ, tK, tV, j * BN, m0, S, sl2, issue);
    else
      path.template tile<false>(sQ, tK, tV, j * BN, m0, S, sl2, issue);
  }
  kf::cp_async_wait<0>();
  path.store(sQ, Oh, m0, S);
}
