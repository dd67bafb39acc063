import sys, os, ctypes
sys.path.insert(0, "tools/sdpa_bench")
import kfbench as kb, torch
nv, drv = kb.Nvrtc(), kb.Driver()
src = r'''
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
cubin, log = nv.compile(src, "l.cu", "sm_90", ["-std=c++17"])
assert cubin, log
x = torch.zeros(16, device="cuda")
p = x.data_ptr()
maps = [kb.TensorMapArg() for _ in range(3)]
res = {}
for name, args in [("k0", []), ("k2", [("ptr", p)]*4 + [("i32", 1)]*3 + [("f32", 1.0)] + [("ptr", p)]*3),
                   ("k1", [("ptr", p)]*4 + [("i32", 1)]*3 + [("f32", 1.0)] + [("ptr", p)]*3 + [("tmap", m) for m in maps])]:
    k = drv.load(cubin, name)
    for grid in (128, 132):
        fn = k.launcher([8, 8, 2] if grid == 128 else [grid, 1, 1], [128, 1, 1], 0, args)
        fn(torch.cuda.current_stream().cuda_stream)
        t = kb.time_graph(lambda: fn(torch.cuda.current_stream().cuda_stream), target_us=2000, reps=25)
        print(f"{name} grid {'8x8x2' if grid == 128 else grid}: {t['median_us']:.3f} us per launch", flush=True)
