// Element access for the specialized dtype: loads widen to float, stores round to nearest.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#if defined(KF_DTYPE_F16)
typedef __half elem_t;
__device__ __forceinline__ float load_elem(const elem_t* p, long i) { return __half2float(p[i]); }
__device__ __forceinline__ void store_elem(elem_t* p, long i, float v) { p[i] = __float2half_rn(v); }
#elif defined(KF_DTYPE_BF16)
typedef __nv_bfloat16 elem_t;
__device__ __forceinline__ float load_elem(const elem_t* p, long i) { return __bfloat162float(p[i]); }
__device__ __forceinline__ void store_elem(elem_t* p, long i, float v) { p[i] = __float2bfloat16_rn(v); }
#else
typedef float elem_t;
__device__ __forceinline__ float load_elem(const elem_t* p, long i) { return p[i]; }
__device__ __forceinline__ void store_elem(elem_t* p, long i, float v) { p[i] = v; }
#endif
