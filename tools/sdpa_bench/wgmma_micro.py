#!/usr/bin/env python3
"""Cycles of the wgmma shapes one sdpa_fwd tile issues, alone (perf_notes item 52): one warpgroup per SM issues
a group of wgmmas, commits, waits, and repeats; clock64 per group, median over the SMs. Modes:
  pv      8 x m64n64k16, A from registers, B N-major (V as the tile stores it): the P V of a BN128 tile
  pv_k    the same with B K-major
  pv_ss   the same with A from shared memory
  pv_2acc the same as pv into two accumulators (even / odd steps)
  qk      4 x m64n128k16, A from registers, B K-major: the Q K^T of a BN128 tile
  qk_ss   the same with A from shared memory
  python3 tools/sdpa_bench/wgmma_micro.py [--ctas 132] [--iters 64]"""
import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kfbench as kb  # noqa: E402

SRC = r'''
#include "common/wgmma_sm90.cuh"
#include "common/smem_layout.cuh"
typedef kf::Sw128Layout<64> Lay;
__device__ __forceinline__ unsigned long long k_major(unsigned base, int kk) {
  return kf::wgmma_desc(base + (kk >> 2) * Lay::kAtomBytes + (kk & 3) * 32, 16, Lay::kRowGroupBytes);
}
__device__ __forceinline__ unsigned long long n_major(unsigned base, int kk) {
  return kf::wgmma_desc(base + kk * 2 * Lay::kRowGroupBytes, Lay::kAtomBytes, Lay::kRowGroupBytes);
}
template <int N>
__device__ __forceinline__ void fence(float (&d)[N][4]) {
#pragma unroll
  for (int j = 0; j < N; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) kf::fence_operand(d[j][e]);
}
extern "C" __global__ void __launch_bounds__(128) micro(long long* out, int iters) {
  extern __shared__ __align__(1024) unsigned char smem[];
  const unsigned base = (static_cast<unsigned>(__cvta_generic_to_shared(smem)) + 1023u) & ~1023u;
  for (int i = threadIdx.x; i < 40 * 1024 / 4; i += 128) reinterpret_cast<unsigned*>(smem)[i] = 0x3c003c00u;
  kf::fence_proxy_async();
  __syncthreads();
  float acc[16][4], acc2[8][4];
#pragma unroll
  for (int j = 0; j < 16; ++j) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.f;
#pragma unroll
  for (int j = 0; j < 8; ++j) acc2[j][0] = acc2[j][1] = acc2[j][2] = acc2[j][3] = 0.f;
  unsigned a[4] = {0x3c003c00u, 0x3c003c00u, 0x3c003c00u, 0x3c003c00u};
  float (&acc8)[8][4] = *reinterpret_cast<float(*)[8][4]>(&acc[0][0]);
  long long t0 = 0;
  for (int it = -2; it < iters; ++it) {
    if (it == 0) t0 = clock64();
    fence(acc);
    fence(acc2);
    kf::wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < (MODE >= 4 ? 4 : 8); ++kk) {
      if (MODE == 0) kf::Wgmma<64, false>::rs<true>(acc8, a, n_major(base, kk), 1);
      if (MODE == 1) kf::Wgmma<64, false>::rs<false>(acc8, a, k_major(base, kk), 1);
      if (MODE == 2) kf::Wgmma<64, false>::ss<true>(acc8, k_major(base + 16384, kk), n_major(base, kk), 1);
      if (MODE == 3) {
        if (kk & 1) kf::Wgmma<64, false>::rs<true>(acc2, a, n_major(base, kk), 1);
        else kf::Wgmma<64, false>::rs<true>(acc8, a, n_major(base, kk), 1);
      }
      if (MODE == 4) kf::Wgmma<128, false>::rs<false>(acc, a, k_major(base, kk), 1);
      if (MODE == 5) kf::Wgmma<128, false>::ss<false>(acc, k_major(base + 16384, kk), k_major(base, kk), 1);
    }
    kf::wgmma_commit();
    kf::wgmma_wait<0>();
    fence(acc);
    fence(acc2);
  }
  const long long t1 = clock64();
  float c = 0.f;
#pragma unroll
  for (int j = 0; j < 16; ++j) c += acc[j][0];
#pragma unroll
  for (int j = 0; j < 8; ++j) c += acc2[j][0];
  if (threadIdx.x == 0) out[blockIdx.x] = c == -1.2345f ? 0 : (t1 - t0);
}
'''
MODES = ["pv", "pv_k", "pv_ss", "pv_2acc", "qk", "qk_ss"]


def main():
    import torch
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ctas", type=int, default=132)
    ap.add_argument("--iters", type=int, default=64)
    a = ap.parse_args()
    inc = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "kernel_templates")
    nv, drv = kb.Nvrtc(), kb.Driver()
    out = torch.zeros(a.ctas, dtype=torch.int64, device="cuda")
    for m, name in enumerate(MODES):
        cubin, log = nv.compile(SRC, "micro.cu", "sm_90a", ["-I" + inc, "-std=c++17", f"-DMODE={m}"])
        if cubin is None:
            print(name, "compile error", log[-600:])
            continue
        k = drv.load(cubin, "micro")
        fn = k.launcher([a.ctas, 1, 1], [128, 1, 1], 41 * 1024, [("ptr", out.data_ptr()), ("i32", a.iters)])
        for _ in range(3):
            fn(torch.cuda.current_stream().cuda_stream)
        torch.cuda.synchronize()
        per = [v / a.iters for v in out.tolist()]
        print(f"{name:8s} {statistics.median(per):7.1f} cycles per group (min {min(per):.1f}, max {max(per):.1f}; "
              f"{a.ctas} CTAs)", flush=True)


if __name__ == "__main__":
    main()
