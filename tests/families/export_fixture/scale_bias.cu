// export_fixture family: Y[r, c] = X[r, c] * scale + bias[c]. Test-only (export tests).
// Params: KF_BLOCK threads, KF_VEC columns per thread, KF_LOAD_PLAIN | KF_LOAD_LDG.
// Specialized: KF_DTYPE_F16 | KF_DTYPE_BF16 | KF_DTYPE_F32 (type of X and Y).
// Launch: grid (ceil(C / (BLOCK*VEC)), R), block BLOCK, dynamic smem BLOCK*VEC*4 bytes.
#include <cuda_fp16.h>
#include <cuda_bf16.h>

#if defined(KF_DTYPE_F16)
typedef __half elem_t;
#elif defined(KF_DTYPE_BF16)
typedef __nv_bfloat16 elem_t;
#elif defined(KF_DTYPE_F32)
typedef float elem_t;
#else
#error "scale_bias.cu: define KF_DTYPE_F16, KF_DTYPE_BF16 or KF_DTYPE_F32"
#endif

__device__ __forceinline__ float sb_to_float(__half v) { return __half2float(v); }
__device__ __forceinline__ float sb_to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float sb_to_float(float v) { return v; }
__device__ __forceinline__ void sb_store(__half* p, float v) { *p = __float2half_rn(v); }
__device__ __forceinline__ void sb_store(__nv_bfloat16* p, float v) { *p = __float2bfloat16_rn(v); }
__device__ __forceinline__ void sb_store(float* p, float v) { *p = v; }

__device__ __forceinline__ elem_t sb_fetch(const elem_t* p) {
#if defined(KF_LOAD_LDG)
  return __ldg(p);
#else
  return *p;
#endif
}

extern "C" __global__ void __launch_bounds__(KF_BLOCK)
    scale_bias(const elem_t* __restrict__ X, const float* __restrict__ bias, elem_t* __restrict__ Y, int R, int C,
               float scale) {
  extern __shared__ __align__(16) unsigned char sb_smem[];
  float* tile = reinterpret_cast<float*>(sb_smem);
  const long long row = blockIdx.y;
  const long long c0 = static_cast<long long>(blockIdx.x) * (KF_BLOCK * KF_VEC);
  if (row >= R) return;
#pragma unroll
  for (int v = 0; v < KF_VEC; ++v) {
    const int t = v * KF_BLOCK + threadIdx.x;
    const long long c = c0 + t;
    tile[t] = c < C ? sb_to_float(sb_fetch(X + row * C + c)) * scale : 0.f;
  }
  __syncthreads();
  // Each thread writes the columns another thread loaded, so the staging is not a no-op.
#pragma unroll
  for (int v = 0; v < KF_VEC; ++v) {
    const int t = (KF_VEC - 1 - v) * KF_BLOCK + (KF_BLOCK - 1 - threadIdx.x);
    const long long c = c0 + t;
    if (c < C) sb_store(Y + row * C + c, tile[t] + bias[c]);
  }
}
