// Warpgroup register reallocation (sm_90a): a warp-specialised kernel launches with one register budget
// for every thread; its producer warpgroup, which only issues TMA loads, gives registers back and its
// consumer warpgroups, which hold the MMA accumulators, take them. Every thread of a warpgroup executes
// the same setmaxnreg; N is a multiple of 8 in [24, 256], and the CTA's new total must fit the registers
// it was launched with. Used by gemm's and attention's warp-specialised paths.
#pragma once

namespace kf {

template <int N>
__device__ __forceinline__ void setmaxnreg_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
}
template <int N>
__device__ __forceinline__ void setmaxnreg_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
}

}  // namespace kf
