// Element type chosen by the specialized dimension dtype. Included twice, inlined once.
#pragma once
#include <cuda_fp16.h>

#if defined(KF_DTYPE_F16)
typedef __half elem_t;
__device__ inline float to_float(elem_t v) { return __half2float(v); }
__device__ inline elem_t from_float(float v) { return __float2half(v); }
#else
typedef float elem_t;
__device__ inline float to_float(elem_t v) { return v; }
__device__ inline elem_t from_float(float v) { return v; }
#endif
