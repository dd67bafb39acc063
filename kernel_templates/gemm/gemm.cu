// gemm family: C[M,N] = A[M,K] * B[K,N], or A[M,K] * B[N,K]^T with B stored as [N][K] (b_layout nk: a
// layer's weights, torch's x @ W.T).
// A and B are f16 or bf16 (in_dtype), row-major; accumulation is f32; C is f16, bf16 or f32 (dtype),
// row-major; all three dims are specialized. Any M. bf16, bf16 output and nk are the wgmma path's. The spec's constraints give each path's alignment rules (N and K multiples of VEC
// for the pre-Hopper paths, of 8 for wgmma).
//
// Two kernels behind one entry point and one signature, chosen by MMA:
//   gemm/gemm_sm80.cuh   simt, wmma, mma (sm_80+): warp-grid block tiles, cp.async or plain loads
//   gemm/gemm_wgmma.cuh  wgmma (sm_90a): TMA ring (gemm/gemm_ring.cuh), a producer warpgroup and one or two
//                        consumer warpgroups on warpgroup MMA, optionally persistent CTAs
//
// Runtime arguments: A, B, C, int M, int N, int K, then the tensor maps of A (2-D (K, M), box (64, BLOCK_M))
// and B (2-D (N, K), box (64, 64)), 128-byte swizzle, which only the wgmma path reads (the other paths get
// a small map they ignore).
// Parameters (prepended as #defines by kforge's renderer), besides those the two files list:
//   KF_DTYPE_F16 | KF_DTYPE_BF16 | KF_DTYPE_F32   output type
//   KF_IN_DTYPE_F16 | KF_IN_DTYPE_BF16             type of A and B
//   KF_B_LAYOUT_KN | KF_B_LAYOUT_NK                B as [K][N] or as [N][K]
#include <cuda_bf16.h>
#include <cuda_fp16.h>
// (each include is inlined once, where it first appears: the headers both paths use are included here,
// outside the selection below)
#include "common/cp_async.cuh"
#include "common/mma_sm80.cuh"
#include "common/tma_sm90.cuh"

#if !defined(KF_BLOCK_M) || !defined(KF_BLOCK_N) || !defined(KF_BLOCK_K) || !defined(KF_STAGES)
#error "gemm.cu: a parameter #define is missing"
#endif

#if defined(KF_DTYPE_F16)
typedef __half out_t;
#elif defined(KF_DTYPE_BF16)
typedef __nv_bfloat16 out_t;
#elif defined(KF_DTYPE_F32)
typedef float out_t;
#else
#error "gemm.cu: define KF_DTYPE_F16, KF_DTYPE_BF16 or KF_DTYPE_F32"
#endif
#if defined(KF_IN_DTYPE_BF16)
typedef __nv_bfloat16 in_t;
constexpr bool IN_BF16 = true;
#else
typedef __half in_t;
constexpr bool IN_BF16 = false;
#endif
#if defined(KF_B_LAYOUT_NK)
constexpr bool B_NK = true;
#else
constexpr bool B_NK = false;
#endif

#if defined(KF_MMA_WGMMA)
#include "gemm/gemm_wgmma.cuh"
#else
#include "gemm/gemm_sm80.cuh"
#endif
