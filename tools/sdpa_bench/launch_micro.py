#!/usr/bin/env python3
"""The launch floor of a graph replay with sdpa_fwd's argument list (perf_notes item 56): empty kernels with
no arguments (k0), the pointer/scalar arguments (k2) and those plus three 128-byte tensor maps (k1), on the
S512 mission grid (8 x 8 x 2 CTAs) and on 132 CTAs; microseconds per launch, graph-replayed.
  python3 tools/sdpa_bench/launch_micro.py"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kfbench as kb  # noqa: E402

SRC = r'''
struct __align__(64) Map { unsigned long long w[16]; };
extern "C" __global__ void k0() {}
extern "C" __global__ void k1(const void* q, const void* k, const void* v, void* o, int b, int h, int s, float sc,
  void* a, void* c, void* d, const __grid_constant__ Map m1, const __grid_constant__ Map m2, const __grid_constant__ Map m3) {
  if (threadIdx.x == 999) ((int*)o)[0] = (int)m1.w[0] + (int)m2.w[1] + (int)m3.w[2];
}
extern "C" __global__ void k2(const void* q, const void* k, const void* v, void* o, int b, int h, int s, float sc,
  void* a, void* c, void* d) {
  if (threadIdx.x == 999) ((int*)o)[0] = b;
}
'''


def main():
    import torch
    nv, drv = kb.Nvrtc(), kb.Driver()
    cubin, log = nv.compile(SRC, "launch.cu", "sm_90", ["-std=c++17"])
    if cubin is None:
        sys.exit(log)
    x = torch.zeros(16, device="cuda")
    p = x.data_ptr()
    maps = [kb.TensorMapArg() for _ in range(3)]
    ptrs = [("ptr", p)] * 4 + [("i32", 1)] * 3 + [("f32", 1.0)] + [("ptr", p)] * 3
    for name, args in [("k0", []), ("k2", ptrs), ("k1", ptrs + [("tmap", m) for m in maps])]:
        k = drv.load(cubin, name)
        for grid in ([8, 8, 2], [132, 1, 1]):
            fn = k.launcher(grid, [128, 1, 1], 0, args)
            stream = torch.cuda.current_stream().cuda_stream
            fn(stream)
            t = kb.time_graph(lambda: fn(torch.cuda.current_stream().cuda_stream), target_us=2000, reps=25)
            print(f"{name} grid {'x'.join(map(str, grid))}: {t['median_us']:.3f} us per launch", flush=True)


if __name__ == "__main__":
    main()
