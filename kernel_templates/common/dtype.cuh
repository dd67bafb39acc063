// Type traits for the 16-bit element types used by kforge templates (f16, bf16).
// NVRTC-safe: toolkit headers only, no host code.
#pragma once
#include <cuda_fp16.h>
#include <cuda_bf16.h>

namespace kf {

template <class T> struct dtype_traits;

template <> struct dtype_traits<__half> {
  static constexpr bool is_bf16 = false;
  static __device__ __forceinline__ float to_float(__half x) { return __half2float(x); }
  static __device__ __forceinline__ __half from_float(float x) { return __float2half_rn(x); }
  // Two floats -> one 32-bit register holding {lo, hi} as f16 (lo in the low half).
  static __device__ __forceinline__ unsigned pack2(float lo, float hi) {
    __half2 h = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<unsigned*>(&h);
  }
};

template <> struct dtype_traits<__nv_bfloat16> {
  static constexpr bool is_bf16 = true;
  static __device__ __forceinline__ float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
  static __device__ __forceinline__ __nv_bfloat16 from_float(float x) { return __float2bfloat16_rn(x); }
  static __device__ __forceinline__ unsigned pack2(float lo, float hi) {
    __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<unsigned*>(&h);
  }
};

}  // namespace kf
