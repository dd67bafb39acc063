// gemm family: C[M,N] = A[M,K] * B[K,N].
// A and B are f16, row-major; accumulation is f32; C is f16 or f32 (the specialized dim `dtype`),
// row-major. Any M. The spec's constraints give each path's alignment rules (N and K multiples of VEC
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
//   KF_DTYPE_F16 | KF_DTYPE_F32   output type
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
#elif defined(KF_DTYPE_F32)
typedef float out_t;
#else
#error "gemm.cu: define KF_DTYPE_F16 or KF_DTYPE_F32"
#endif

#if defined(KF_MMA_WGMMA)
#include "gemm/gemm_wgmma.cuh"
#else
#include "gemm/gemm_sm80.cuh"
#endif
