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
  static __device__ __forceinline__ float2 unpack2(unsigned p) {
    return __half22float2(*reinterpret_cast<__half2*>(&p));
  }
  // exp2 of both halves of a packed pair in one MUFU op (half the issue slots of two f32 ex2).
  static __device__ __forceinline__ unsigned exp2_pair(unsigned x) {
    unsigned y;
    asm("ex2.approx.f16x2 %0, %1;\n" : "=r"(y) : "r"(x));
    return y;
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
  static __device__ __forceinline__ float2 unpack2(unsigned p) {
    return __bfloat1622float2(*reinterpret_cast<__nv_bfloat162*>(&p));
  }
  static __device__ __forceinline__ unsigned exp2_pair(unsigned x) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    unsigned y;
    asm("ex2.approx.ftz.bf16x2 %0, %1;\n" : "=r"(y) : "r"(x));
    return y;
#else  // bf16x2 ex2 is sm_90+: two f32 ops, correct but no faster
    const float2 v = unpack2(x);
    return pack2(exp2f(v.x), exp2f(v.y));
#endif
  }
};

}  // namespace kf
