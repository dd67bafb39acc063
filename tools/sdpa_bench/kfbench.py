"""Shared pieces of the standalone SDPA harness (tools/sdpa_bench) and tools/compare_torch.py.

- Expr: the family-spec expression language (src/space/expr.hpp) in Python.
- render(): kforge's #define convention + inlining of quoted includes.
- Nvrtc / Driver: ctypes wrappers over libnvrtc and libcuda (no compiled extension needed).
- time_graph(): CUDA-graph replay of many launches, median of many replays (one method for all);
  time_graphs(): the same for several ops at once, their replays interleaved.
Only the timing / launch parts need torch and a GPU; Expr and render() run anywhere.
"""
import ctypes
import ctypes.util
import glob
import json
import math
import os
import re
import statistics
import subprocess
import tempfile

# ----------------------------------------------------------------------------------------------
# Expression language


class ExprError(Exception):
    pass


_TOK = re.compile(r"\s*(?:(\d+\.\d*(?:[eE][-+]?\d+)?|\d+[eE][-+]?\d+|\.\d+)|(\d+)|('[^']*'|\"[^\"]*\")|"
                  r"([A-Za-z_][A-Za-z0-9_.]*)|(&&|\|\||==|!=|<=|>=|[-+*/%<>!?:(),]))")


def _tokens(text):
    pos, out = 0, []
    text = text.rstrip()
    while pos < len(text):
        m = _TOK.match(text, pos)
        if not m:
            raise ExprError(f"bad character at {pos} in {text!r}")
        pos = m.end()
        f, i, s, n, op = m.groups()
        if f is not None:
            out.append(("num", float(f)))
        elif i is not None:
            out.append(("num", int(i)))
        elif s is not None:
            out.append(("str", s[1:-1]))
        elif n is not None:
            out.append(("name", n))
        else:
            out.append(("op", op))
    out.append(("end", None))
    return out


def _cdiv(a, b):
    if b == 0:
        raise ExprError("division by zero")
    if isinstance(a, int) and isinstance(b, int):
        q = abs(a) // abs(b)
        return q if (a >= 0) == (b >= 0) else -q
    return a / b


def _cmod(a, b):
    if b == 0:
        raise ExprError("modulo by zero")
    if isinstance(a, int) and isinstance(b, int):
        return a - b * _cdiv(a, b)
    return math.fmod(a, b)


_FUNCS = {
    "min": min, "max": max,
    "ceil_div": lambda a, b: -((-a) // b) if isinstance(a, int) and isinstance(b, int) else math.ceil(a / b),
    "sqrt": math.sqrt, "rsqrt": lambda x: 1.0 / math.sqrt(x), "log2": math.log2, "pow": math.pow,
    "abs": abs, "floor": math.floor, "ceil": math.ceil,
    "sizeof_dtype": lambda s: {"f16": 2, "bf16": 2, "f32": 4, "f64": 8, "i32": 4, "u8": 1, "i8": 1}[s],
}

_BIN = [("||",), ("&&",), ("==", "!="), ("<", "<=", ">", ">="), ("+", "-"), ("*", "/", "%")]


class Expr:
    def __init__(self, text):
        self.text = str(text)
        self._t = _tokens(self.text)
        self._i = 0
        self._root = self._ternary()
        if self._t[self._i][0] != "end":
            raise ExprError(f"trailing input in {self.text!r}")

    def _peek(self):
        return self._t[self._i]

    def _next(self):
        t = self._t[self._i]
        self._i += 1
        return t

    def _expect(self, op):
        t = self._next()
        if t != ("op", op):
            raise ExprError(f"expected {op!r} in {self.text!r}")

    def _ternary(self):
        c = self._binary(0)
        if self._peek() == ("op", "?"):
            self._next()
            a = self._ternary()
            self._expect(":")
            b = self._ternary()
            return lambda s: a(s) if _truth(c(s)) else b(s)
        return c

    def _binary(self, lvl):
        if lvl == len(_BIN):
            return self._unary()
        lhs = self._binary(lvl + 1)
        while self._peek()[0] == "op" and self._peek()[1] in _BIN[lvl]:
            op = self._next()[1]
            rhs = self._binary(lvl + 1)
            lhs = _mk(op, lhs, rhs)
        return lhs

    def _unary(self):
        t = self._peek()
        if t == ("op", "-"):
            self._next()
            e = self._unary()
            return lambda s: -e(s)
        if t == ("op", "!"):
            self._next()
            e = self._unary()
            return lambda s: int(not _truth(e(s)))
        return self._primary()

    def _primary(self):
        kind, v = self._next()
        if kind in ("num", "str"):
            return lambda s, v=v: v
        if kind == "op" and v == "(":
            e = self._ternary()
            self._expect(")")
            return e
        if kind == "name":
            if self._peek() == ("op", "("):
                self._next()
                args = []
                if self._peek() != ("op", ")"):
                    args.append(self._ternary())
                    while self._peek() == ("op", ","):
                        self._next()
                        args.append(self._ternary())
                self._expect(")")
                if v not in _FUNCS:
                    raise ExprError(f"unknown function {v}")
                fn = _FUNCS[v]
                return lambda s: fn(*[a(s) for a in args])

            def look(s, v=v):
                if v not in s:
                    raise ExprError(f"unknown name {v}")
                return s[v]
            return look
        raise ExprError(f"unexpected token {v!r} in {self.text!r}")

    def eval(self, scope):
        return self._root(scope)


def _truth(x):
    if isinstance(x, str):
        raise ExprError("string used as a condition")
    return x != 0


def _mk(op, a, b):
    if op == "||":
        return lambda s: int(_truth(a(s)) or _truth(b(s)))
    if op == "&&":
        return lambda s: int(_truth(a(s)) and _truth(b(s)))
    f = {"==": lambda x, y: int(x == y), "!=": lambda x, y: int(x != y), "<": lambda x, y: int(x < y),
         "<=": lambda x, y: int(x <= y), ">": lambda x, y: int(x > y), ">=": lambda x, y: int(x >= y),
         "+": lambda x, y: x + y, "-": lambda x, y: x - y, "*": lambda x, y: x * y, "/": _cdiv, "%": _cmod}[op]
    return lambda s: f(a(s), b(s))


def ev(text, scope):
    return Expr(text).eval(scope)


# ----------------------------------------------------------------------------------------------
# Family spec


class Family:
    def __init__(self, path):
        self.path = os.path.abspath(path)
        self.dir = os.path.dirname(self.path)
        with open(self.path) as f:
            self.spec = json.load(f)
        s = self.spec
        self.name = s["name"]
        self.template = os.path.join(self.dir, s["template"])
        self.entry = s["entry"]
        self.include_dirs = [os.path.join(self.dir, d) for d in s.get("include_dirs", [])]
        self.options = list(s.get("compile_options", []))
        self.params = s["params"]
        self.specialize = s.get("specialize", [])

    def scope(self, config, shape, device):
        sc = {}
        sc.update(shape)
        sc.update(config)
        for k, v in device.items():
            sc["device." + k] = v
        for k, e in self.spec.get("derived", {}).items():
            sc[k] = ev(e, sc)
        return sc

    def violations(self, config, shape, device):
        """Names of the constraints that fail (empty list: valid)."""
        sc = self.scope(config, shape, device)
        return [c for c in self.spec.get("constraints", []) if not _truth(ev(c, sc))]

    def launch(self, config, shape, device):
        sc = self.scope(config, shape, device)
        L = self.spec["launch"]
        return ([int(ev(e, sc)) for e in L["grid"]], [int(ev(e, sc)) for e in L["block"]], int(ev(L["smem"], sc)))

    def arch_suffix(self, config, shape, device):
        e = self.spec.get("arch_suffix")
        return ev(e, self.scope(config, shape, device)) if e else ""

    def render(self, config, shape):
        spec_dims = {k: shape[k] for k in self.specialize}
        return render(self.template, config, spec_dims, self.include_dirs)

    def tolerance(self, dtype):
        t = self.spec.get("tolerance", {})
        return t.get(dtype, t.get("default"))

    def suite(self, name):
        return self.spec["suites"][name]

    def cost(self, shape):
        c = self.spec.get("cost", {})
        return (float(ev(c["flops"], dict(shape))) if "flops" in c else 0.0,
                float(ev(c["bytes"], dict(shape))) if "bytes" in c else 0.0)


def define_lines(values):
    out = []
    for k, v in values.items():
        name = "KF_" + k.upper()
        if isinstance(v, str):
            out.append(f"#define {name}_{v.upper()} 1")
        else:
            out.append(f"#define {name} {int(v)}")
    return out


def _inline(path, include_dirs, seen):
    real = os.path.realpath(path)
    if real in seen:
        return ""
    seen.add(real)
    out = []
    with open(path) as f:
        for line in f:
            m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
            if m:
                cands = [os.path.join(os.path.dirname(path), m.group(1))] + [os.path.join(d, m.group(1))
                                                                            for d in include_dirs]
                for c in cands:
                    if os.path.exists(c):
                        out.append(_inline(c, include_dirs, seen))
                        break
                else:
                    raise FileNotFoundError(m.group(1))
            elif re.match(r"\s*#\s*pragma\s+once", line):
                continue
            else:
                out.append(line)
    return "".join(out)


def render(template, config, spec_dims, include_dirs):
    body = _inline(template, include_dirs, set())
    return "\n".join(define_lines(config) + define_lines(spec_dims)) + "\n" + body


# ----------------------------------------------------------------------------------------------
# NVRTC and the driver API through ctypes


def _find_lib(names, globs):
    for n in names:
        try:
            return ctypes.CDLL(n)
        except OSError:
            pass
    for g in globs:
        for p in sorted(glob.glob(g), reverse=True):
            try:
                return ctypes.CDLL(p)
            except OSError:
                pass
    return None


def cuda_home():
    for c in [os.environ.get("CUDA_HOME"), "/usr/local/cuda"]:
        if c and os.path.isdir(os.path.join(c, "include")):
            return c
    return "/usr/local/cuda"


class Nvrtc:
    def __init__(self):
        self.lib = _find_lib(["libnvrtc.so"], [cuda_home() + "/lib64/libnvrtc.so*",
                                               "/usr/local/cuda*/lib64/libnvrtc.so*"])
        if self.lib is None:
            raise OSError("libnvrtc not found")

    def compile(self, src, name, arch, options):
        """Returns (cubin bytes or None, log)."""
        L = self.lib
        prog = ctypes.c_void_p()
        r = L.nvrtcCreateProgram(ctypes.byref(prog), src.encode(), name.encode(), 0, None, None)
        if r:
            return None, f"nvrtcCreateProgram {r}"
        opts = [f"--gpu-architecture={arch}", f"-I{cuda_home()}/include"] + list(options)
        arr = (ctypes.c_char_p * len(opts))(*[o.encode() for o in opts])
        r = L.nvrtcCompileProgram(prog, len(opts), arr)
        n = ctypes.c_size_t()
        L.nvrtcGetProgramLogSize(prog, ctypes.byref(n))
        buf = ctypes.create_string_buffer(n.value + 1)
        L.nvrtcGetProgramLog(prog, buf)
        log = buf.value.decode(errors="replace")
        cubin = None
        if r == 0:
            L.nvrtcGetCUBINSize(prog, ctypes.byref(n))
            cb = ctypes.create_string_buffer(n.value)
            L.nvrtcGetCUBIN(prog, cb)
            cubin = cb.raw
        L.nvrtcDestroyProgram(ctypes.byref(prog))
        return cubin, log


def nvcc_compile(src, arch, options):
    """Fallback when libnvrtc is missing: nvcc -cubin."""
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "k.cu")
        with open(p, "w") as f:
            f.write(src)
        out = os.path.join(d, "k.cubin")
        opts = [o.replace("--std=", "-std=") for o in options]
        r = subprocess.run([cuda_home() + "/bin/nvcc", "-cubin", f"-arch={arch}", "-o", out, p] + opts,
                           capture_output=True, text=True)
        if r.returncode:
            return None, r.stderr
        with open(out, "rb") as f:
            return f.read(), r.stderr


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

    def device_info(self):
        """device.* names of the spec language, read from the driver."""
        return {"cc": self.attr(75) * 10 + self.attr(76), "sm_count": self.attr(16), "smem_optin": self.attr(97),
                "smem_per_block": self.attr(8), "max_threads": self.attr(1), "regs_per_block": self.attr(12),
                "l2_bytes": self.attr(38)}

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


# ----------------------------------------------------------------------------------------------
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


def dtype_name(torch_dt):
    import torch
    return {torch.float16: "f16", torch.bfloat16: "bf16", torch.float32: "f32", torch.int32: "i32"}[torch_dt]


def sdpa_backends():
    from torch.nn.attention import SDPBackend
    return {"torch.flash": SDPBackend.FLASH_ATTENTION, "torch.efficient": SDPBackend.EFFICIENT_ATTENTION,
            "torch.cudnn": SDPBackend.CUDNN_ATTENTION}


def sdpa_fn(backend, q, k, v, causal):
    """Returns (fn, out_holder) where fn runs SDPA with exactly that backend."""
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import sdpa_kernel
    holder = {}

    def fn():
        with sdpa_kernel([backend]):
            holder["o"] = F.scaled_dot_product_attention(q, k, v, is_causal=bool(causal))
    return fn, holder


def reference_fp64(q, k, v, causal, chunk_elems=1 << 29):
    """torch math SDPA in fp64 on upcast inputs, chunked over batch*heads."""
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    B, H, S, D = q.shape
    out = torch.empty(B, H, S, D, dtype=torch.float64, device=q.device)
    qf, kf, vf = (x.reshape(B * H, S, D) for x in (q, k, v))
    of = out.view(B * H, S, D)
    step = max(1, chunk_elems // max(1, S * S))
    with sdpa_kernel([SDPBackend.MATH]):
        for i in range(0, B * H, step):
            sl = slice(i, min(B * H, i + step))
            of[sl] = F.scaled_dot_product_attention(qf[sl].double(), kf[sl].double(), vf[sl].double(),
                                                    is_causal=bool(causal))
    return out


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
