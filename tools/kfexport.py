"""Kernels from `kforge export` in Python, and the timing method the Python tools share.

kforge renders, compiles and gates kernels; Python tools that need one (tools/compare_torch.py)
ask `kforge export` for it and load the cubin it wrote:

    man = export(kforge, "sdpa_fwd", "B=2,H=8,S=512,D=64,causal=0,dtype=f16", out_dir,
                 config="best,STAGES=2", defines=["DIAG=3"])    # config None: the stored winner
    launch = launcher(Driver(), man, out_dir, tensors)          # tensors: torch tensors by buffer name
    launch()                                                    # on torch's current stream

- Driver / Kernel: ctypes over libcuda (cuModuleLoadData, cuLaunchKernel, cuTensorMapEncodeTiled):
  no compiled extension and no cuda-python needed.
- time_graphs(): CUDA-graph replay of many launches per op, the replays of several ops
  interleaved, median of many replays (one method for every op, kforge's or torch's).
Only the launch and timing parts need torch and a GPU.
"""
import ctypes
import json
import os
import shutil
import statistics
import subprocess

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def add_compare_args(ap, what="torch's timings"):
    """The options the side-by-side tools (compare_torch, compare_gemm) share."""
    ap.add_argument("--kforge", help="kforge executable (default: $KFORGE, else build/kforge or build-*/kforge "
                                     "in this checkout, else kforge on PATH)")
    ap.add_argument("--db", help="kforge database (passed to export)")
    ap.add_argument("--baselines-only", action="store_true", help="skip kforge; time torch only")
    ap.add_argument("--baselines-out", help=f"write {what} (JSON list) for `kforge baseline import`")
    ap.add_argument("--json-out", help="write every row (kforge included) as JSON")
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--target-us", type=float, default=3000.0)
    ap.add_argument("--seed", type=int, default=0)


def spec_and_shapes(spec_path, args, parse_shape):
    """The family spec (plain data only: suites, tolerance; kforge owns the expressions) and the shapes to
    compare: each --shape parsed, else the --suite's."""
    with open(spec_path) as f:
        spec = json.load(f)
    shapes = [parse_shape(t) for t in args.shape] if args.shape else spec["suites"][args.suite]
    return spec, shapes


def write_compare_outputs(args, baselines, dev, rows):
    """The side-by-side tools' files: --baselines-out (for `kforge baseline import`) and --json-out."""
    if args.baselines_out:
        with open(args.baselines_out, "w") as f:
            json.dump(baselines, f, indent=1)
    if args.json_out:
        with open(args.json_out, "w") as f:
            json.dump({"device": dev, "rows": rows}, f, indent=1)


def find_kforge(given=None, tool="kforge"):
    """The kforge executable: `given` (a --kforge option), else $KFORGE, else a build in this
    checkout (build/kforge, build-*/kforge), else `kforge` on PATH. Raises SystemExit naming all
    four when none is there."""
    def runnable(p):
        return p and os.path.isfile(p) and os.access(p, os.X_OK)
    for name, p in (("--kforge", given), ("KFORGE", os.environ.get("KFORGE"))):
        if p:
            found = p if runnable(p) else shutil.which(p)
            if not found:
                raise SystemExit(f"{tool}: {name} {p!r} is not an executable")
            return os.path.abspath(found)
    builds = [os.path.join(REPO, "build", "kforge")]
    if os.path.isdir(REPO):
        builds += sorted(os.path.join(REPO, d, "kforge") for d in os.listdir(REPO) if d.startswith("build-"))
    for p in builds:
        if runnable(p):
            return p
    on_path = shutil.which("kforge")
    if on_path:
        return on_path
    raise SystemExit(f"{tool}: no kforge executable: pass --kforge PATH, set KFORGE, build it in this checkout "
                     f"(build/kforge) or install it on PATH")


def export(kforge, family, shape, out_dir, db=None, config=None, defines=(), spec_dir=None):
    """Runs `kforge export` for one shape into out_dir and returns its manifest (a dict).
    config: None for the stored winner, else a `--config` text (K=V,... or best[,K=V,...]); defines:
    NAME=V texts."""
    cmd = [kforge]
    if db:
        cmd += ["--db", db]
    if spec_dir:
        cmd += ["--spec-dir", spec_dir]
    cmd += ["export", "--family", family, "--shape", shape, "--out", out_dir]
    if config:
        cmd += ["--config", config]
    for d in defines:
        cmd += ["--define", d]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"kforge export failed ({r.returncode}): {(r.stderr or r.stdout).strip()[:300]}")
    with open(os.path.join(out_dir, "manifest.json")) as f:
        return json.load(f)


def launcher(drv, man, out_dir, tensors):
    """The manifest's launch as fn() on torch's current stream: buffers by name from `tensors`
    (scratch buffers the caller lacks are zero-filled once per name and size, and kept in `tensors`
    under ("scratch", name, count, dtype), so kernels sized alike share them and others do not),
    scalars by value, tensor maps encoded over the named tensor. The cubin is loaded at once;
    out_dir may go afterwards."""
    import torch
    with open(os.path.join(out_dir, man["cubin"]), "rb") as f:
        k = drv.load(f.read(), man["entry"])
    tdt = {"f32": torch.float32, "i32": torch.int32, "f16": torch.float16, "bf16": torch.bfloat16}
    args = []
    for a in man["args"]:
        if a["kind"] == "buffer":
            if a["name"] in tensors:
                t = tensors[a["name"]]
                if "count" in a and int(a["count"]) != t.numel():
                    raise RuntimeError(f"buffer {a['name']}: manifest count {a['count']} != {t.numel()}")
            else:  # scratch: a kernel leaves it as it found it (zero), so one of each size serves them all
                dtype = a.get("dtype", "f32")
                key = ("scratch", a["name"], max(1, int(a["count"])), dtype)
                if key not in tensors:
                    tensors[key] = torch.zeros(key[2], device="cuda", dtype=tdt[dtype])
                t = tensors[key]
            args.append(("ptr", t.data_ptr()))
        elif a["kind"] in ("i32", "f32"):
            args.append((a["kind"], a["value"]))
        elif a["kind"] == "tensor_map":
            t = tensors[a["name"]]
            args.append(drv.tensor_map(t.data_ptr(), a["dtype"], a["dims"], a["box"], a.get("swizzle", 0)))
        else:
            raise RuntimeError(f"unsupported arg kind {a['kind']}")
    L = man["launch"]
    fn = k.launcher(L["grid"], L["block"], int(L.get("smem", 0)), args)
    return lambda: fn(torch.cuda.current_stream().cuda_stream)


CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
CU_FUNC_ATTRIBUTE_NUM_REGS = 4
CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES = 3


class Driver:
    def __init__(self):
        self.lib = ctypes.CDLL("libcuda.so.1")
        L = self.lib
        L.cuLaunchKernel.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 6 + [ctypes.c_uint, ctypes.c_void_p,
                                                                                 ctypes.c_void_p, ctypes.c_void_p]
        L.cuModuleLoadData.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_char_p]
        L.cuModuleGetFunction.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p, ctypes.c_char_p]
        L.cuFuncSetAttribute.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int]
        L.cuFuncGetAttribute.argtypes = [ctypes.POINTER(ctypes.c_int), ctypes.c_int, ctypes.c_void_p]
        # cuTensorMapEncodeTiled(map, dtype, rank, address, dims, strides, box, element strides, interleave,
        # swizzle, L2 promotion, OOB fill)
        L.cuTensorMapEncodeTiled.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32] + [ctypes.c_void_p] * 5 + \
            [ctypes.c_int] * 4

    def check(self, r, what):
        if r != 0:
            s = ctypes.c_char_p()
            self.lib.cuGetErrorString(r, ctypes.byref(s))
            raise RuntimeError(f"{what}: CUDA error {r} {s.value.decode() if s.value else ''}")

    def attr(self, a):
        dev = ctypes.c_int()
        self.check(self.lib.cuCtxGetDevice(ctypes.byref(dev)), "cuCtxGetDevice")
        v = ctypes.c_int()
        self.check(self.lib.cuDeviceGetAttribute(ctypes.byref(v), a, dev), "cuDeviceGetAttribute")
        return v.value

    def tensor_map(self, ptr, dtype, dims, box, swizzle=0):
        """A CUtensorMap (cuTensorMapEncodeTiled) over the packed tensor at device address ptr: dims and
        box innermost first, interleave none, L2 promotion 256B, out-of-range elements read as zeros.
        Returns the 128-byte map as a launcher argument ('tmap', holder)."""
        esize = {"f16": 2, "bf16": 2, "f32": 4, "i32": 4}[dtype]
        dtype_enum = {"f16": 6, "bf16": 9, "f32": 7, "i32": 3}[dtype]
        swz = {0: 0, 32: 1, 64: 2, 128: 3}[int(swizzle)]
        rank = len(dims)
        u64, u32 = ctypes.c_uint64, ctypes.c_uint32
        gdim = (u64 * rank)(*[int(d) for d in dims])
        strides, acc = [], esize
        for d in dims[:-1]:
            acc *= int(d)
            strides.append(acc)
        gstr = (u64 * max(1, rank - 1))(*(strides or [0]))
        bdim = (u32 * rank)(*[int(b) for b in box])
        estr = (u32 * rank)(*([1] * rank))
        holder = TensorMapArg()
        self.check(self.lib.cuTensorMapEncodeTiled(holder.address(), dtype_enum, rank, ctypes.c_void_p(ptr), gdim, gstr,
                                                   bdim, estr, 0, swz, 3, 0),
                   f"cuTensorMapEncodeTiled(dims {list(dims)}, box {list(box)}, swizzle {swizzle})")
        return ("tmap", holder)

    def load(self, cubin, entry):
        mod = ctypes.c_void_p()
        self.check(self.lib.cuModuleLoadData(ctypes.byref(mod), cubin), "cuModuleLoadData")
        fn = ctypes.c_void_p()
        self.check(self.lib.cuModuleGetFunction(ctypes.byref(fn), mod, entry.encode()), "cuModuleGetFunction")
        return Kernel(self, mod, fn)


class TensorMapArg:
    """128 bytes at a 128-byte-aligned host address (CUDA 13's CUtensorMap alignment): a tensor map,
    passed to the kernel by value."""

    def __init__(self):
        self._buf = ctypes.create_string_buffer(128 + 128)
        self._addr = (ctypes.addressof(self._buf) + 127) & ~127

    def address(self):
        return ctypes.c_void_p(self._addr)


class Kernel:
    def __init__(self, drv, mod, fn):
        self.drv, self.mod, self.fn = drv, mod, fn
        self._smem_set = 0

    def attr(self, a):
        v = ctypes.c_int()
        self.drv.check(self.drv.lib.cuFuncGetAttribute(ctypes.byref(v), a, self.fn), "cuFuncGetAttribute")
        return v.value

    def regs(self):
        return self.attr(CU_FUNC_ATTRIBUTE_NUM_REGS)

    def local_bytes(self):
        return self.attr(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES)

    def prepare(self, smem):
        if smem > self._smem_set:
            self.drv.check(self.drv.lib.cuFuncSetAttribute(self.fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                                           smem), "cuFuncSetAttribute(max dynamic smem)")
            self._smem_set = smem

    def launcher(self, grid, block, smem, args):
        """args: list of ('ptr', int) | ('i32', int) | ('f32', float) | ('tmap', TensorMapArg).
        Returns fn(stream_handle)."""
        self.prepare(smem)
        holders, addrs = [], []
        for kind, v in args:
            if kind == "tmap":
                holders.append(v)
                addrs.append(v.address())
                continue
            if kind == "ptr":
                holders.append(ctypes.c_void_p(v))
            elif kind == "i32":
                holders.append(ctypes.c_int(int(v)))
            elif kind == "f32":
                holders.append(ctypes.c_float(float(v)))
            else:
                raise ValueError(kind)
            addrs.append(ctypes.cast(ctypes.byref(holders[-1]), ctypes.c_void_p))
        params = (ctypes.c_void_p * len(holders))(*addrs)
        lib, fn, drv = self.drv.lib, self.fn, self.drv
        g = [int(x) for x in grid]
        b = [int(x) for x in block]

        def launch(stream):
            r = lib.cuLaunchKernel(fn, g[0], g[1], g[2], b[0], b[1], b[2], smem, stream, params, None)
            if r:
                drv.check(r, "cuLaunchKernel")
        launch._keep = (holders, params)
        return launch


# Timing (needs torch)


def time_graph(fn, target_us=3000.0, reps=25, max_launches=2000, warmup=3, probe_launches=10):
    """fn() enqueues one op on torch's current stream. Captures N launches in one CUDA graph
    (N chosen so a replay lasts ~target_us), replays `reps` times, each timed with events.
    Returns dict(median_us, p10_us, p90_us, launches, reps) per launch.

    N comes from a probe graph of `probe_launches` launches: a single eager launch costs tens of us
    of launch latency, so sizing N from it gave the few-us mission kernels only ~20 launches per
    replay, and each launch then carried ~1/20 of the replay's own start-up cost."""
    return time_graphs({"op": fn}, target_us, reps, max_launches, warmup, probe_launches)["op"]


def time_graphs(fns, target_us=3000.0, reps=25, max_launches=2000, warmup=3, probe_launches=10):
    """time_graph for several ops side by side: {name: fn} -> {name: result}. Each op gets its own graph,
    sized as in time_graph, and the timed replays go round-robin (replay r of every op before replay r + 1
    of any), so a drift of the clocks over the run (boost, power, temperature) reaches every op alike
    instead of whichever was timed last."""
    import torch
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for fn in fns.values():
            for _ in range(warmup):
                fn()
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

    def capture(fn, n):
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            for _ in range(n):
                fn()
        g.replay()
        torch.cuda.synchronize()
        return g

    def replay_us(g, n):
        e0.record()
        g.replay()
        e1.record()
        e1.synchronize()
        return e0.elapsed_time(e1) * 1000.0 / n

    graphs = {}
    for name, fn in fns.items():
        probe = capture(fn, probe_launches)
        est = max(min(replay_us(probe, probe_launches) for _ in range(3)), 0.5)
        del probe
        n = int(max(3, min(max_launches, target_us / est)))
        graphs[name] = (capture(fn, n), n)
    ts = {name: [] for name in fns}
    for _ in range(reps):
        for name, (g, n) in graphs.items():
            ts[name].append(replay_us(g, n))
    out = {}
    for name, t in ts.items():
        t.sort()
        out[name] = {"median_us": statistics.median(t), "p10_us": t[len(t) // 10], "p90_us": t[(len(t) * 9) // 10],
                     "launches": graphs[name][1], "reps": reps}
    del graphs
    return out


def torch_dtype(name):
    import torch
    return {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32}[name]


def errors(out, ref):
    """max_abs, rel_l2, finite flag of out against a float64 reference."""
    import torch
    o = out.double()
    finite = bool(torch.isfinite(o).all().item())
    d = (o - ref)
    return {"max_abs": float(d.abs().max().item()) if finite else float("inf"),
            "rel_l2": float((d.norm() / ref.norm().clamp_min(1e-30)).item()) if finite else float("inf"),
            "finite": finite}


def device_identity():
    import torch
    p = torch.cuda.get_device_properties(0)
    return {"name": p.name, "cc": p.major * 10 + p.minor, "sm_count": p.multi_processor_count}
