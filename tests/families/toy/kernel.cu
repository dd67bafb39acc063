// Toy candidate: y = alpha * x, VEC elements per thread, staged through shared memory.
#include "local.cuh"
#include "common/types.cuh"

extern "C" __global__ void toy_scale(const elem_t* __restrict__ x, elem_t* __restrict__ y, int n, float alpha) {
  extern __shared__ unsigned char smem_raw[];
  elem_t* tile = reinterpret_cast<elem_t*>(smem_raw);
  const int base = blockIdx.x * KF_BLOCK * KF_VEC;
#if defined(KF_MODE_UNROLLED)
#pragma unroll
#endif
  for (int v = 0; v < KF_VEC; ++v) {
    const int i = base + v * KF_BLOCK + threadIdx.x;
    if (i < n) tile[v * KF_BLOCK + threadIdx.x] = x[i];
  }
  __syncthreads();
  for (int v = 0; v < KF_VEC; ++v) {
    const int i = base + v * KF_BLOCK + threadIdx.x;
    if (i < n) y[i] = scale(tile[v * KF_BLOCK + threadIdx.x], alpha);
  }
}
