// Reference for the gemm family: C[M,N] = A[M,K] * B[K,N] (b_nk 0) or A[M,K] * B[N,K]^T (b_nk 1), A and B
// f16 (in_bf16 0) or bf16 (1), row-major, f32 math. Deliberately simple: 16x16 shared-memory tiles, one output
// per thread, k in increasing order, every access bounds-checked. `out` selects the output type (1: f16,
// 2: bf16, 0: f32), so the reference needs no specialization. Launch: grid (ceil(N/16), ceil(M/16)),
// block (16, 16).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

__device__ __forceinline__ float load_in(const void* p, size_t i, int in_bf16) {
  return in_bf16 ? __bfloat162float(static_cast<const __nv_bfloat16*>(p)[i]) : __half2float(static_cast<const __half*>(p)[i]);
}

extern "C" __global__ void gemm_reference(const void* __restrict__ A, const void* __restrict__ B, void* __restrict__ C,
                                          int M, int N, int K, int out, int in_bf16, int b_nk) {
  __shared__ float sA[16][17];
  __shared__ float sB[16][17];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * 16 + ty;
  const int col = blockIdx.x * 16 + tx;
  float acc = 0.f;
  for (int k0 = 0; k0 < K; k0 += 16) {
    const int ka = k0 + tx, kb = k0 + ty;
    sA[ty][tx] = (row < M && ka < K) ? load_in(A, (size_t)row * K + ka, in_bf16) : 0.f;
    sB[ty][tx] = (kb < K && col < N) ? load_in(B, b_nk ? (size_t)col * K + kb : (size_t)kb * N + col, in_bf16) : 0.f;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < 16; ++k) acc = fmaf(sA[ty][k], sB[k][tx], acc);
    __syncthreads();
  }
  if (row < M && col < N) {
    const size_t i = (size_t)row * N + col;
    if (out == 1)
      static_cast<__half*>(C)[i] = __float2half_rn(acc);
    else if (out == 2)
      static_cast<__nv_bfloat16*>(C)[i] = __float2bfloat16_rn(acc);
    else
      static_cast<float*>(C)[i] = acc;
  }
}
