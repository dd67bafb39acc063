// Reference for the gemm family: C[M,N] = A[M,K] * B[K,N], A and B f16 row-major, f32 math.
// Deliberately simple: 16x16 shared-memory tiles, one output per thread, k in increasing order,
// every access bounds-checked. `out_f16` selects the output type (1: f16, 0: f32), so the
// reference needs no specialization. Launch: grid (ceil(N/16), ceil(M/16)), block (16, 16).
#include <cuda_fp16.h>

extern "C" __global__ void gemm_reference(const __half* __restrict__ A, const __half* __restrict__ B,
                                          void* __restrict__ C, int M, int N, int K, int out_f16) {
  __shared__ float sA[16][17];
  __shared__ float sB[16][17];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * 16 + ty;
  const int col = blockIdx.x * 16 + tx;
  float acc = 0.f;
  for (int k0 = 0; k0 < K; k0 += 16) {
    const int ka = k0 + tx, kb = k0 + ty;
    sA[ty][tx] = (row < M && ka < K) ? __half2float(A[(size_t)row * K + ka]) : 0.f;
    sB[ty][tx] = (kb < K && col < N) ? __half2float(B[(size_t)kb * N + col]) : 0.f;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < 16; ++k) acc = fmaf(sA[ty][k], sB[k][tx], acc);
    __syncthreads();
  }
  if (row < M && col < N) {
    if (out_f16)
      static_cast<__half*>(C)[(size_t)row * N + col] = __float2half_rn(acc);
    else
      static_cast<float*>(C)[(size_t)row * N + col] = acc;
  }
}
