// The gemm family's pre-Hopper paths (MMA = simt, wmma, mma; sm_80 and later): block tiling with a warp grid,
// a warp computing (BLOCK_M / WARPS_M) x (BLOCK_N / WARPS_N); scalar FMA, nvcuda::wmma 16x16x16 or mma.sync
// m16n8k16 + ldmatrix; plain loads through registers (STAGES=1) or a cp.async pipeline. The tensor maps
// (the wgmma path's operands) are parameters here too, so every variant has one signature; they go unread.
//
// Parameters: KF_BLOCK_M, KF_BLOCK_N, KF_BLOCK_K (block tile), KF_WARPS_M, KF_WARPS_N (warp grid), KF_STAGES,
// KF_VEC (global load width in halves: 2, 4, 8), KF_MMA_SIMT | KF_MMA_WMMA | KF_MMA_MMA.
// Launch: grid (ceil(N/BLOCK_N), ceil(M/BLOCK_M)), block 32*WARPS_M*WARPS_N, dynamic smem =
// max(STAGES * (BLOCK_M*(BLOCK_K+8) + BLOCK_K*(BLOCK_N+8)) * 2, wmma ? warps*1024 : 0).
// Blocks are remapped in groups of 8 block-rows so that neighbours share tiles of B in L2.
// Any M; N and K must be multiples of VEC (vector loads of VEC halves need rows aligned to VEC*2 bytes).
#pragma once
#if defined(KF_MMA_WMMA)
#include <mma.h>
#endif

#if !defined(KF_WARPS_M) || !defined(KF_WARPS_N) || !defined(KF_VEC)
#error "gemm_sm80.cuh: a parameter #define is missing"
#endif

namespace kfgemm {

constexpr int BM = KF_BLOCK_M, BN = KF_BLOCK_N, BK = KF_BLOCK_K;
constexpr int WARPS_M = KF_WARPS_M, WARPS_N = KF_WARPS_N;
constexpr int THREADS = 32 * WARPS_M * WARPS_N;
constexpr int STAGES = KF_STAGES;
constexpr int VEC = KF_VEC;
constexpr int WM = BM / WARPS_M, WN = BN / WARPS_N;  // warp tile
constexpr int PAD = 8;                               // halves; keeps ldmatrix / wmma rows conflict-free
constexpr int LDA = BK + PAD;                        // smem row stride of the A tile [BM][LDA]
constexpr int LDB = BN + PAD;                        // smem row stride of the B tile [BK][LDB]
constexpr int A_STAGE = BM * LDA;                    // halves per stage
[[maybe_unused]] constexpr int B_STAGE = BK * LDB;
constexpr int GROUP_M = 8;

static_assert(VEC == 2 || VEC == 4 || VEC == 8, "VEC must be 2, 4 or 8");
static_assert(STAGES >= 1, "STAGES >= 1");
static_assert(BM % WARPS_M == 0 && BN % WARPS_N == 0, "block tile must split into warp tiles");
static_assert(BK % 16 == 0 && BK % VEC == 0, "BLOCK_K must be a multiple of 16 and of VEC");
static_assert(BN % VEC == 0, "BLOCK_N must be a multiple of VEC");
#if defined(KF_MMA_SIMT)
static_assert(WM % 4 == 0 && WN % 8 == 0, "simt: warp tile must be a multiple of 4 x 8");
#elif defined(KF_MMA_WMMA) || defined(KF_MMA_MMA)
static_assert(WM % 16 == 0 && WN % 16 == 0, "tensor-core paths need warp tiles in multiples of 16");
#else
#error "gemm_sm80.cuh: define KF_MMA_SIMT, KF_MMA_WMMA or KF_MMA_MMA"
#endif

// Vector of VEC halves, moved as one load/store.
template <int V> struct VecOf;
template <> struct VecOf<2> { typedef unsigned T; };
template <> struct VecOf<4> { typedef uint2 T; };
template <> struct VecOf<8> { typedef uint4 T; };
typedef typename VecOf<VEC>::T vec_t;

constexpr int A_CHUNKS_ROW = BK / VEC;
constexpr int A_CHUNKS = BM * A_CHUNKS_ROW;
constexpr int A_ITERS = (A_CHUNKS + THREADS - 1) / THREADS;
constexpr int B_CHUNKS_ROW = BN / VEC;
constexpr int B_CHUNKS = BK * B_CHUNKS_ROW;
constexpr int B_ITERS = (B_CHUNKS + THREADS - 1) / THREADS;

// ---- global -> shared, asynchronous (STAGES >= 2). Out-of-range chunks are zero-filled. ----
__device__ __forceinline__ void load_tile_async(__half* sA, __half* sB, const __half* __restrict__ A,
                                                const __half* __restrict__ B, int M, int N, int K, int m0,
                                                int n0, int k0, int tid) {
#pragma unroll
  for (int i = 0; i < A_ITERS; ++i) {
    const int c = tid + i * THREADS;
    if (A_CHUNKS % THREADS == 0 || c < A_CHUNKS) {
      const int r = c / A_CHUNKS_ROW, kc = (c % A_CHUNKS_ROW) * VEC;
      const int gr = m0 + r, gk = k0 + kc;
      const bool ok = gr < M && gk < K;  // K % VEC == 0: a chunk is wholly in or wholly out
      kf::cp_async<VEC * 2>(sA + r * LDA + kc, ok ? A + (size_t)gr * K + gk : A, ok);
    }
  }
#pragma unroll
  for (int i = 0; i < B_ITERS; ++i) {
    const int c = tid + i * THREADS;
    if (B_CHUNKS % THREADS == 0 || c < B_CHUNKS) {
      const int r = c / B_CHUNKS_ROW, nc = (c % B_CHUNKS_ROW) * VEC;
      const int gk = k0 + r, gn = n0 + nc;
      const bool ok = gk < K && gn < N;  // N % VEC == 0
      kf::cp_async<VEC * 2>(sB + r * LDB + nc, ok ? B + (size_t)gk * N + gn : B, ok);
    }
  }
}

// ---- global -> registers -> shared (STAGES == 1) ----
struct TileRegs {
  vec_t a[A_ITERS];
  vec_t b[B_ITERS];
};

__device__ __forceinline__ void load_tile_regs(TileRegs& t, const __half* __restrict__ A,
                                               const __half* __restrict__ B, int M, int N, int K, int m0,
                                               int n0, int k0, int tid) {
#pragma unroll
  for (int i = 0; i < A_ITERS; ++i) {
    const int c = tid + i * THREADS;
    t.a[i] = vec_t{};
    if (A_CHUNKS % THREADS == 0 || c < A_CHUNKS) {
      const int r = c / A_CHUNKS_ROW, kc = (c % A_CHUNKS_ROW) * VEC;
      const int gr = m0 + r, gk = k0 + kc;
      if (gr < M && gk < K) t.a[i] = *reinterpret_cast<const vec_t*>(A + (size_t)gr * K + gk);
    }
  }
#pragma unroll
  for (int i = 0; i < B_ITERS; ++i) {
    const int c = tid + i * THREADS;
    t.b[i] = vec_t{};
    if (B_CHUNKS % THREADS == 0 || c < B_CHUNKS) {
      const int r = c / B_CHUNKS_ROW, nc = (c % B_CHUNKS_ROW) * VEC;
      const int gk = k0 + r, gn = n0 + nc;
      if (gk < K && gn < N) t.b[i] = *reinterpret_cast<const vec_t*>(B + (size_t)gk * N + gn);
    }
  }
}

__device__ __forceinline__ void store_tile_regs(const TileRegs& t, __half* sA, __half* sB, int tid) {
#pragma unroll
  for (int i = 0; i < A_ITERS; ++i) {
    const int c = tid + i * THREADS;
    if (A_CHUNKS % THREADS == 0 || c < A_CHUNKS) {
      const int r = c / A_CHUNKS_ROW, kc = (c % A_CHUNKS_ROW) * VEC;
      *reinterpret_cast<vec_t*>(sA + r * LDA + kc) = t.a[i];
    }
  }
#pragma unroll
  for (int i = 0; i < B_ITERS; ++i) {
    const int c = tid + i * THREADS;
    if (B_CHUNKS % THREADS == 0 || c < B_CHUNKS) {
      const int r = c / B_CHUNKS_ROW, nc = (c % B_CHUNKS_ROW) * VEC;
      *reinterpret_cast<vec_t*>(sB + r * LDB + nc) = t.b[i];
    }
  }
}

__device__ __forceinline__ void store_pair(out_t* __restrict__ C, int M, int N, int row, int col, float x,
                                           float y) {
  // col is even and N is even (N % VEC == 0), so col < N implies col + 1 < N and the pair is aligned.
  if (row < M && col < N) {
    out_t* p = C + (size_t)row * N + col;
#if defined(KF_DTYPE_F16)
    *reinterpret_cast<__half2*>(p) = __floats2half2_rn(x, y);
#else
    *reinterpret_cast<float2*>(p) = make_float2(x, y);
#endif
  }
}

__device__ __forceinline__ void store_one(out_t* __restrict__ C, int M, int N, int row, int col, float x) {
  if (row < M && col < N) {
#if defined(KF_DTYPE_F16)
    C[(size_t)row * N + col] = __float2half_rn(x);
#else
    C[(size_t)row * N + col] = x;
#endif
  }
}

// ---- the per-warp math on one smem stage, and the epilogue, for each MMA flavour ----
#if defined(KF_MMA_MMA)
constexpr int MI = WM / 16, NI = WN / 8;  // m16 x n8 tiles per warp
struct Acc {
  float v[MI][NI][4];
};
__device__ __forceinline__ void acc_zero(Acc& acc) {
#pragma unroll
  for (int i = 0; i < MI; ++i)
#pragma unroll
    for (int j = 0; j < NI; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc.v[i][j][e] = 0.f;
}
__device__ __forceinline__ void compute_stage(Acc& acc, const __half* sA, const __half* sB, int wm0, int wn0,
                                              int lane) {
#pragma unroll
  for (int kk = 0; kk < BK; kk += 16) {
    unsigned a[MI][4];
    unsigned b[NI][2];
#pragma unroll
    for (int i = 0; i < MI; ++i)
      kf::ldmatrix_x4(a[i][0], a[i][1], a[i][2], a[i][3], sA + (wm0 + i * 16 + (lane % 16)) * LDA + kk + (lane / 16) * 8);
#pragma unroll
    for (int j = 0; j < NI / 2; ++j) {
      unsigned r[4];
      kf::ldmatrix_x4_trans(r[0], r[1], r[2], r[3], sB + (kk + (lane % 8) + ((lane / 8) % 2) * 8) * LDB + wn0 + j * 16 + (lane / 16) * 8);
      b[2 * j][0] = r[0];
      b[2 * j][1] = r[1];
      b[2 * j + 1][0] = r[2];
      b[2 * j + 1][1] = r[3];
    }
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
      for (int j = 0; j < NI; ++j) kf::mma_16816<false>(acc.v[i][j], a[i], b[j][0], b[j][1]);
  }
}
__device__ __forceinline__ void epilogue(const Acc& acc, out_t* __restrict__ C, int M, int N, int m0, int n0,
                                         int wm0, int wn0, int lane, unsigned char* /*smem*/, int /*warp*/) {
#pragma unroll
  for (int i = 0; i < MI; ++i)
#pragma unroll
    for (int j = 0; j < NI; ++j) {
      const int row = m0 + wm0 + i * 16 + lane / 4;
      const int col = n0 + wn0 + j * 8 + (lane % 4) * 2;
      store_pair(C, M, N, row, col, acc.v[i][j][0], acc.v[i][j][1]);
      store_pair(C, M, N, row + 8, col, acc.v[i][j][2], acc.v[i][j][3]);
    }
}

#elif defined(KF_MMA_WMMA)
constexpr int MI = WM / 16, NJ = WN / 16;
struct Acc {
  nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 16, 16, 16, float> f[MI][NJ];
};
__device__ __forceinline__ void acc_zero(Acc& acc) {
#pragma unroll
  for (int i = 0; i < MI; ++i)
#pragma unroll
    for (int j = 0; j < NJ; ++j) nvcuda::wmma::fill_fragment(acc.f[i][j], 0.f);
}
__device__ __forceinline__ void compute_stage(Acc& acc, const __half* sA, const __half* sB, int wm0, int wn0,
                                              int /*lane*/) {
  using namespace nvcuda;
#pragma unroll
  for (int kk = 0; kk < BK; kk += 16) {
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa[MI];
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> fb[NJ];
#pragma unroll
    for (int i = 0; i < MI; ++i) wmma::load_matrix_sync(fa[i], sA + (wm0 + i * 16) * LDA + kk, LDA);
#pragma unroll
    for (int j = 0; j < NJ; ++j) wmma::load_matrix_sync(fb[j], sB + kk * LDB + wn0 + j * 16, LDB);
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
      for (int j = 0; j < NJ; ++j) wmma::mma_sync(acc.f[i][j], fa[i], fb[j], acc.f[i][j]);
  }
}
// Each warp stages one 16x16 fragment at a time through its own 1 KiB of shared memory (the
// caller has drained the pipeline and synchronised, so the stage buffers are free).
__device__ __forceinline__ void epilogue(const Acc& acc, out_t* __restrict__ C, int M, int N, int m0, int n0,
                                         int wm0, int wn0, int lane, unsigned char* smem, int warp) {
  using namespace nvcuda;
  float* scratch = reinterpret_cast<float*>(smem) + warp * 256;
#pragma unroll
  for (int i = 0; i < MI; ++i)
#pragma unroll
    for (int j = 0; j < NJ; ++j) {
      wmma::store_matrix_sync(scratch, acc.f[i][j], 16, wmma::mem_row_major);
      __syncwarp();
#pragma unroll
      for (int e = 0; e < 8; e += 2) {
        const int idx = lane * 8 + e;
        const int r = idx / 16, c = idx % 16;
        store_pair(C, M, N, m0 + wm0 + i * 16 + r, n0 + wn0 + j * 16 + c, scratch[idx], scratch[idx + 1]);
      }
      __syncwarp();
    }
}

#else  // KF_MMA_SIMT: a lane owns a TM x TN block of its warp tile; lanes form a 4 x 8 grid.
constexpr int TM = WM / 4, TN = WN / 8;
struct Acc {
  float v[TM][TN];
};
__device__ __forceinline__ void acc_zero(Acc& acc) {
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc.v[i][j] = 0.f;
}
__device__ __forceinline__ void compute_stage(Acc& acc, const __half* sA, const __half* sB, int wm0, int wn0,
                                              int lane) {
  const int lm = lane / 8, ln = lane % 8;
#pragma unroll 4
  for (int k = 0; k < BK; ++k) {
    float a[TM], b[TN];
#pragma unroll
    for (int i = 0; i < TM; ++i) a[i] = __half2float(sA[(wm0 + lm * TM + i) * LDA + k]);
#pragma unroll
    for (int j = 0; j < TN; ++j) b[j] = __half2float(sB[k * LDB + wn0 + ln * TN + j]);
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
      for (int j = 0; j < TN; ++j) acc.v[i][j] = fmaf(a[i], b[j], acc.v[i][j]);
  }
}
__device__ __forceinline__ void epilogue(const Acc& acc, out_t* __restrict__ C, int M, int N, int m0, int n0,
                                         int wm0, int wn0, int lane, unsigned char* /*smem*/, int /*warp*/) {
  const int lm = lane / 8, ln = lane % 8;
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j)
      store_one(C, M, N, m0 + wm0 + lm * TM + i, n0 + wn0 + ln * TN + j, acc.v[i][j]);
}
#endif

}  // namespace kfgemm

using namespace kfgemm;

extern "C" __global__ void __launch_bounds__(THREADS)
    gemm_kernel(const __half* __restrict__ A, const __half* __restrict__ B, out_t* __restrict__ C, int M, int N,
                int K, const __grid_constant__ kf::TmaDesc /*tmA*/, const __grid_constant__ kf::TmaDesc /*tmB*/) {
  extern __shared__ __align__(128) unsigned char smem[];
  __half* sA0 = reinterpret_cast<__half*>(smem);
  __half* sB0 = sA0 + STAGES * A_STAGE;

  // Grouped raster: consecutive blocks walk down GROUP_M block-rows before moving right.
  const int grid_n = gridDim.x, grid_m = gridDim.y;
  const int pid = blockIdx.y * grid_n + blockIdx.x;
  const int group_size = GROUP_M * grid_n;
  const int first_m = (pid / group_size) * GROUP_M;
  const int group_m = min(grid_m - first_m, GROUP_M);
  const int bm = first_m + (pid % group_size) % group_m;
  const int bn = (pid % group_size) / group_m;
  const int m0 = bm * BM, n0 = bn * BN;

  const int tid = threadIdx.x;
  const int lane = tid % 32, warp = tid / 32;
  const int wm0 = (warp / WARPS_N) * WM, wn0 = (warp % WARPS_N) * WN;
  const int ktiles = (K + BK - 1) / BK;

  Acc acc;
  acc_zero(acc);

#if KF_STAGES == 1
  for (int kt = 0; kt < ktiles; ++kt) {
    TileRegs t;
    load_tile_regs(t, A, B, M, N, K, m0, n0, kt * BK, tid);
    __syncthreads();  // everyone is done reading the previous tile
    store_tile_regs(t, sA0, sB0, tid);
    __syncthreads();
    compute_stage(acc, sA0, sB0, wm0, wn0, lane);
  }
  __syncthreads();
#else
  // Prologue: tiles 0 .. STAGES-2 in flight. One commit group per tile, empty ones included,
  // so that "wait until at most STAGES-2 groups are pending" always means "tile kt has landed".
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < ktiles) load_tile_async(sA0 + s * A_STAGE, sB0 + s * B_STAGE, A, B, M, N, K, m0, n0, s * BK, tid);
    kf::cp_async_commit();
  }
  for (int kt = 0; kt < ktiles; ++kt) {
    kf::cp_async_wait<STAGES - 2>();
    __syncthreads();  // tile kt visible to all; everyone finished tile kt-1, whose stage is refilled next
    const int pre = kt + STAGES - 1;
    if (pre < ktiles) {
      const int ps = pre % STAGES;
      load_tile_async(sA0 + ps * A_STAGE, sB0 + ps * B_STAGE, A, B, M, N, K, m0, n0, pre * BK, tid);
    }
    kf::cp_async_commit();
    const int cs = kt % STAGES;
    compute_stage(acc, sA0 + cs * A_STAGE, sB0 + cs * B_STAGE, wm0, wn0, lane);
  }
  kf::cp_async_wait<0>();
  __syncthreads();
#endif

  epilogue(acc, C, M, N, m0, n0, wm0, wn0, lane, smem, warp);
}
