#!/usr/bin/env python3
"""Standalone SDPA harness: compile sdpa_fwd variants (KF_* defines, NVRTC), check them against
torch's math SDPA in fp64 (campaign shape + the spec's gate cases, NaN-poisoned outputs, re-check
after timing), and time them side by side with torch's flash / efficient / cuDNN SDPA backends by
CUDA-graph replay (median of many replays), all in one process.

  python3 tools/sdpa_bench/bench.py --suite mission --defaults --baselines --out $OUT/mission.json
  python3 tools/sdpa_bench/bench.py --shape B=1,H=16,S=8192,D=128,causal=0,dtype=f16 \
      --grid "BLOCK_M=128 BLOCK_N=64 WARPS=4,8 STAGES=2 MMA=mma VEC=8 LAYOUT=swizzled Q_IN=smem"
  python3 tools/sdpa_bench/bench.py --ceilings          # copy bandwidth and bf16 GEMM on this device
  python3 tools/sdpa_bench/bench.py --compile-only ...  # no GPU: render + compile (nvcc/NVRTC) only
"""
import argparse
import concurrent.futures as cf
import itertools
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kfbench as kb  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SPEC = os.path.join(ROOT, "search_spaces", "sdpa_fwd.json")


def parse_shape(text):
    out = {}
    for kv in text.split(","):
        k, v = kv.split("=")
        k = k.strip()
        out[k] = v.strip() if k == "dtype" else int(v)
    return out


def shape_str(s):
    return ",".join(f"{k}={s[k]}" for k in ["B", "H", "S", "D", "causal", "dtype"])


def cfg_str(c):
    return " ".join(f"{k}={v}" for k, v in c.items() if not k.startswith("_"))


def cfg_key(c):
    return tuple(sorted((k, v) for k, v in c.items() if not k.startswith("_")))


def grid_configs(text, fam):
    """'NAME=v1,v2 NAME=v' -> cartesian product (names not given take the first spec value)."""
    given = {}
    for part in text.split():
        k, vs = part.split("=")
        vals = []
        for v in vs.split(","):
            vals.append(int(v) if v.lstrip("-").isdigit() else v)
        given[k] = vals
    names = list(fam.params.keys())
    names += [n for n in given if n not in names]  # extra defines (diagnostics), e.g. DIAG=1
    lists = [given.get(n, [fam.params[n][0]] if n in fam.params else [0]) for n in names]
    return [dict(zip(names, combo)) for combo in itertools.product(*lists)]


def ceilings(out):
    import torch
    res = {}
    n = 1 << 29  # 1 GiB of f16
    x = torch.randn(n, device="cuda", dtype=torch.float16)
    y = torch.empty_like(x)
    t = kb.time_graph(lambda: y.copy_(x), target_us=20000, reps=15, max_launches=20)
    res["copy"] = {"bytes": 4 * n, "median_us": t["median_us"], "TBps": 4 * n / t["median_us"] / 1e6}
    del x, y
    for dt in ["bf16", "f16"]:
        a = torch.rand(8192, 8192, device="cuda", dtype=kb.torch_dtype(dt)) - 0.5
        b = torch.rand(8192, 8192, device="cuda", dtype=kb.torch_dtype(dt)) - 0.5
        c = torch.empty_like(a)
        t = kb.time_graph(lambda: torch.mm(a, b, out=c), target_us=30000, reps=15, max_launches=20)
        res["gemm_" + dt] = {"flops": 2 * 8192 ** 3, "median_us": t["median_us"],
                             "TFLOPs": 2 * 8192 ** 3 / t["median_us"] / 1e6}
    # floor of one launch in a graph: an empty kernel
    cubin, log = kb.Nvrtc().compile('extern "C" __global__ void null_kernel() {}', "null.cu",
                                    "sm_%d%d" % torch.cuda.get_device_capability(), [])
    k = kb.Driver().load(cubin, "null_kernel")
    fn = k.launcher([132, 1, 1], [128, 1, 1], 0, [])
    t = kb.time_graph(lambda: fn(torch.cuda.current_stream().cuda_stream), target_us=2000, reps=25)
    res["null_kernel"] = {"median_us": t["median_us"]}
    print(f"CEILINGS empty kernel in a graph: {t['median_us']:.2f} us per launch", flush=True)
    out["ceilings"] = res
    print(f"CEILINGS copy {res['copy']['TBps']:.2f} TB/s (read+write) | bf16 GEMM 8192^3 "
          f"{res['gemm_bf16']['TFLOPs']:.0f} TFLOP/s | f16 GEMM {res['gemm_f16']['TFLOPs']:.0f} TFLOP/s", flush=True)


class Bench:
    def __init__(self, fam, args):
        import torch
        self.torch = torch
        self.fam = fam
        self.args = args
        torch.cuda.init()
        torch.zeros(1, device="cuda")
        self.drv = kb.Driver()
        self.dev = self.drv.device_info()
        self.ident = kb.device_identity()
        self.kernels = {}
        self.gate_inputs = {}
        self.gate_pass = {}
        self.ref_kernel = None
        self.ref_checked = {}

    # ---------------- compile
    def compile_all(self, pairs):
        """pairs: list of (config, shape). Compiles each distinct (config, specialization) once."""
        todo = {}
        for cfg, shape in pairs:
            key = (cfg_key(cfg), tuple(shape[k] for k in self.fam.specialize))
            if key not in self.kernels and key not in todo:
                todo[key] = (cfg, shape)
        try:
            nv = kb.Nvrtc()
        except OSError:
            nv = None
        t0 = time.time()

        def work(item):
            key, (cfg, shape) = item
            src = self.fam.render(cfg, shape)
            arch = f"sm_{self.dev['cc']}{self.fam.arch_suffix(cfg, shape, self.dev)}"
            if nv:
                cubin, log = nv.compile(src, "sdpa_fwd.cu", arch, self.fam.options)
            else:
                cubin, log = kb.nvcc_compile(src, arch, self.fam.options)
            return key, cubin, log
        with cf.ThreadPoolExecutor(max_workers=self.args.jobs) as ex:
            for key, cubin, log in ex.map(work, todo.items()):
                if cubin is None:
                    self.kernels[key] = ("compile_error", log[-2000:])
                    print(f"COMPILE ERROR {dict(key[0])} {key[1]}:\n{log[-1500:]}", flush=True)
                else:
                    k = self.drv.load(cubin, self.fam.entry)
                    self.kernels[key] = ("ok", k)
        print(f"compiled {len(todo)} kernels in {time.time() - t0:.1f}s "
              f"({'nvrtc' if nv else 'nvcc'})", flush=True)

    def kernel(self, cfg, shape):
        return self.kernels[(cfg_key(cfg), tuple(shape[k] for k in self.fam.specialize))]

    # ---------------- launching from the spec
    def build_args(self, arg_specs, tensors, scope):
        out = []
        for a in arg_specs:
            if "buffer" in a:
                out.append(("ptr", tensors[a["buffer"]].data_ptr()))
            elif "i32" in a:
                out.append(("i32", int(kb.ev(a["i32"], scope))))
            elif "f32" in a:
                out.append(("f32", float(kb.ev(a["f32"], scope))))
            elif "tensor_map" in a:
                t = tensors[a["tensor_map"]]
                out.append(self.drv.tensor_map(t.data_ptr(), kb.dtype_name(t.dtype), [kb.ev(d, scope) for d in a["dims"]],
                                               [kb.ev(b, scope) for b in a["box"]], a.get("swizzle", 0)))
            else:
                raise ValueError(f"unsupported arg {a}")
        return out

    def scratch(self, cfg, shape, tensors):
        """Allocates the spec's role-"scratch" buffers (zero-filled once) into tensors."""
        torch = self.torch
        sc = self.fam.scope(cfg, shape, self.dev)
        tdt = {"f32": torch.float32, "i32": torch.int32, "f16": torch.float16, "bf16": torch.bfloat16}
        names = []
        for b in self.fam.spec["buffers"]:
            if b.get("role") == "scratch":
                n = int(kb.ev(b["count"], sc))
                tensors[b["name"]] = torch.zeros(max(1, n), device="cuda", dtype=tdt[kb.ev(b["dtype"], sc)])
                names.append(b["name"])
        return names

    def counters_zero(self, tensors):
        """A kernel must leave its integer scratch (counters) zero."""
        return all(int(t.abs().max().item()) == 0 for n, t in tensors.items()
                   if n not in ("Q", "K", "V", "O") and t.dtype == self.torch.int32)

    def launcher(self, k, cfg, shape, tensors):
        grid, block, smem = self.fam.launch(cfg, shape, self.dev)
        keep = [tensors[n] for n in self.scratch(cfg, shape, tensors)]
        args = self.build_args(self.fam.spec["args"], tensors, self.fam.scope(cfg, shape, self.dev))
        fn = k.launcher(grid, block, smem, args)
        torch = self.torch
        return lambda: (keep, fn(torch.cuda.current_stream().cuda_stream))

    def make_inputs(self, shape, seed, scale=1.0):
        torch = self.torch
        gen = torch.Generator(device="cuda")
        gen.manual_seed(seed)
        dt = kb.torch_dtype(shape["dtype"])
        dims = (shape["B"], shape["H"], shape["S"], shape["D"])
        t = {}
        for n in ["Q", "K", "V"]:
            t[n] = ((torch.rand(dims, device="cuda", generator=gen, dtype=torch.float32) * 2 - 1) * scale).to(dt)
        t["O"] = torch.empty(dims, device="cuda", dtype=dt)
        return t

    def run_checked(self, k, cfg, shape, tensors, ref):
        tensors["O"].fill_(float("nan"))
        fn = self.launcher(k, cfg, shape, tensors)
        fn()
        fn()  # twice: the second launch sees the counters the first one left
        self.torch.cuda.synchronize()
        err = kb.errors(tensors["O"], ref)
        if not self.counters_zero(tensors):
            err["finite"] = False
            err["counters"] = "not reset"
        return err

    def passes(self, err, dtype):
        tol = self.fam.tolerance(dtype)
        return err["finite"] and err["max_abs"] <= tol["max_abs"] and err["rel_l2"] <= tol["rel_l2"]

    def check_reference_kernel(self, shape, tensors, ref):
        """Validates reference.cu itself against torch fp64 (once per gate input)."""
        rspec = self.fam.spec["reference"]
        if self.ref_kernel is None:
            src = open(os.path.join(self.fam.dir, rspec["template"])).read()
            try:
                cubin, log = kb.Nvrtc().compile(src, "reference.cu", f"sm_{self.dev['cc']}", ["--std=c++17"])
            except OSError:
                cubin, log = kb.nvcc_compile(src, f"sm_{self.dev['cc']}", ["--std=c++17"])
            if cubin is None:
                raise RuntimeError("reference compile failed: " + log)
            self.ref_kernel = self.drv.load(cubin, rspec["entry"])
        scope = dict(shape)
        scope.update({"device." + k: v for k, v in self.dev.items()})
        grid = [int(kb.ev(e, scope)) for e in rspec["launch"]["grid"]]
        block = [int(kb.ev(e, scope)) for e in rspec["launch"]["block"]]
        smem = int(kb.ev(rspec["launch"]["smem"], scope))
        args = self.build_args(rspec["args"], tensors, scope)
        tensors["O"].fill_(float("nan"))
        self.ref_kernel.launcher(grid, block, smem, args)(self.torch.cuda.current_stream().cuda_stream)
        self.torch.cuda.synchronize()
        return kb.errors(tensors["O"], ref)

    def gate(self, k, cfg, shape):
        """The spec's gate cases for this specialization; cached per (config, specialization)."""
        spkey = tuple(shape[x] for x in self.fam.specialize)
        gk = (cfg_key(cfg), spkey)
        if gk in self.gate_pass:
            return self.gate_pass[gk]
        worst = {"max_abs": 0.0, "rel_l2": 0.0, "finite": True, "failed": []}
        for i, case in enumerate(self.fam.spec.get("gate", [])):
            gshape = dict(shape)
            gshape.update(case["override"])
            if self.fam.violations(cfg, gshape, self.dev):
                continue
            ck = (spkey, case["name"])
            if ck not in self.gate_inputs:
                t = self.make_inputs(gshape, 1000 + i, case.get("input_scale", 1.0))
                ref = kb.reference_fp64(t["Q"], t["K"], t["V"], gshape["causal"])
                self.gate_inputs[ck] = (t, ref)
                rerr = self.check_reference_kernel(gshape, t, ref)
                self.ref_checked[f"{case['name']} {shape_str(gshape)}"] = rerr
                if not self.passes(rerr, gshape["dtype"]):
                    print(f"WARNING reference.cu off on {case['name']} {shape_str(gshape)}: {rerr}", flush=True)
            t, ref = self.gate_inputs[ck]
            err = self.run_checked(k, cfg, gshape, t, ref)
            worst["max_abs"] = max(worst["max_abs"], err["max_abs"])
            worst["rel_l2"] = max(worst["rel_l2"], err["rel_l2"])
            worst["finite"] &= err["finite"]
            if not self.passes(err, gshape["dtype"]):
                worst["failed"].append(f"{case['name']}: max_abs {err['max_abs']:.3g} rel_l2 {err['rel_l2']:.3g}")
        self.gate_pass[gk] = worst
        return worst

    # ---------------- one shape
    def run_shape(self, shape, configs, baselines, seed):
        torch = self.torch
        rows = []
        flops, nbytes = self.fam.cost(shape)
        t = self.make_inputs(shape, seed)
        ref = kb.reference_fp64(t["Q"], t["K"], t["V"], shape["causal"])
        q, k_, v = t["Q"], t["K"], t["V"]
        if baselines:
            for name, be in kb.sdpa_backends().items():
                row = {"shape": shape, "kind": name}
                try:
                    fn, hold = kb.sdpa_fn(be, q, k_, v, shape["causal"])
                    fn()
                    torch.cuda.synchronize()
                    row["err"] = kb.errors(hold["o"], ref)
                    row.update(kb.time_graph(fn, target_us=self.args.target_us, reps=self.args.reps))
                    row["status"] = "ok" if self.passes(row["err"], shape["dtype"]) else "wrong_result"
                except Exception as e:  # backend not available for this shape
                    row["status"] = "unsupported"
                    row["error"] = str(e).splitlines()[0][:200] if str(e) else type(e).__name__
                    torch.cuda.synchronize()
                rows.append(row)
        for cfg in configs:
            row = {"shape": shape, "kind": "kforge", "config": {k: v for k, v in cfg.items()
                                                               if not k.startswith("_")}}
            if cfg.get("_name"):
                row["name"] = cfg["_name"]
            viol = self.fam.violations(cfg, shape, self.dev)
            if viol:
                row["status"] = "invalid"
                row["violations"] = viol
                rows.append(row)
                continue
            st, kern = self.kernel(cfg, shape)
            if st != "ok":
                row["status"] = st
                rows.append(row)
                continue
            row["regs"] = kern.regs()
            row["local_bytes"] = kern.local_bytes()
            try:
                err = self.run_checked(kern, cfg, shape, t, ref)
                row["err"] = err
                if not self.passes(err, shape["dtype"]):
                    row["status"] = "wrong_result"
                    if self.args.time_anyway:  # diagnostics only: never a valid result
                        row.update(kb.time_graph(self.launcher(kern, cfg, shape, t), target_us=self.args.target_us,
                                                 reps=self.args.reps))
                    rows.append(row)
                    continue
                if not self.args.skip_gate:
                    g = self.gate(kern, cfg, shape)
                    row["gate"] = g
                    if g["failed"] or not g["finite"]:
                        row["status"] = "wrong_result"
                        rows.append(row)
                        continue
                if not self.args.check_only:
                    t["O"].fill_(float("nan"))
                    row.update(kb.time_graph(self.launcher(kern, cfg, shape, t), target_us=self.args.target_us,
                                             reps=self.args.reps))
                    torch.cuda.synchronize()
                    err2 = kb.errors(t["O"], ref)
                    if not self.counters_zero(t):
                        err2["finite"] = False
                    row["err_after_timing"] = err2
                    if not self.passes(err2, shape["dtype"]):
                        row["status"] = "wrong_result"
                        rows.append(row)
                        continue
                row["status"] = "ok"
            except Exception as e:
                row["status"] = "runtime_fault"
                row["error"] = str(e)[:300]
                print("RUNTIME FAULT", cfg_str(cfg), shape_str(shape), e, flush=True)
                rows.append(row)
                raise
            rows.append(row)
        for r in rows:
            if "median_us" in r:
                r["tflops"] = flops / r["median_us"] / 1e6
                r["gbps"] = nbytes / r["median_us"] / 1e3
        del t, ref
        torch.cuda.empty_cache()
        return rows


def summarize(rows, shapes):
    lines = []
    hdr = f"{'shape':44s} {'kforge_us':>9s} {'TF/s':>5s} {'flash':>8s} {'effic':>8s} {'cudnn':>8s} " \
          f"{'x/flash':>7s} {'x/cudnn':>7s}  best config"
    lines.append(hdr)
    for s in shapes:
        rs = [r for r in rows if r["shape"] == s]
        kf = [r for r in rs if r["kind"] == "kforge" and r.get("status") == "ok" and "median_us" in r]
        best = min(kf, key=lambda r: r["median_us"]) if kf else None
        bt = {r["kind"]: r.get("median_us") for r in rs if r["kind"] != "kforge"}

        def f(x):
            return f"{x:8.1f}" if x else "       -"
        kt = best["median_us"] if best else None
        rf = f"{bt['torch.flash'] / kt:7.2f}" if kt and bt.get("torch.flash") else "      -"
        rc = f"{bt['torch.cudnn'] / kt:7.2f}" if kt and bt.get("torch.cudnn") else "      -"
        lines.append(f"{shape_str(s):44s} {f(kt):>9s} {best['tflops'] if best else 0:5.0f} {f(bt.get('torch.flash'))} "
                     f"{f(bt.get('torch.efficient'))} {f(bt.get('torch.cudnn'))} {rf} {rc}  "
                     f"{cfg_str(best['config']) if best else '-'}")
    lines.append("(x/flash, x/cudnn = backend time / kforge time: > 1 means kforge is faster)")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--spec", default=SPEC)
    ap.add_argument("--suite", action="append", default=[], help="suite name from the spec (repeatable)")
    ap.add_argument("--shape", action="append", default=[], help="B=..,H=..,S=..,D=..,causal=..,dtype=..")
    ap.add_argument("--configs", help="JSON file: list of configs (optional '_name')")
    ap.add_argument("--grid", action="append", default=[], help="'NAME=v1,v2 ...' cartesian product")
    ap.add_argument("--defaults", action="store_true", help="the spec's default configs")
    ap.add_argument("--baselines", action="store_true", help="also time torch flash/efficient/cudnn")
    ap.add_argument("--ceilings", action="store_true", help="measure copy bandwidth and bf16 GEMM")
    ap.add_argument("--filter", action="append", default=[], help="keep shapes with NAME=value")
    ap.add_argument("--skip-gate", action="store_true")
    ap.add_argument("--check-only", action="store_true")
    ap.add_argument("--time-anyway", action="store_true", help="diagnostics: also time configs that fail the check")
    ap.add_argument("--compile-only", action="store_true", help="no GPU: compile with nvcc for --arch")
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--jobs", type=int, default=16)
    ap.add_argument("--reps", type=int, default=25)
    ap.add_argument("--target-us", type=float, default=3000.0)
    ap.add_argument("--out", help="JSON results file")
    args = ap.parse_args()

    fam = kb.Family(args.spec)
    shapes = [dict(s) for n in args.suite for s in fam.suite(n)] + [parse_shape(s) for s in args.shape]
    for f in args.filter:
        k, v = f.split("=")
        shapes = [s for s in shapes if str(s[k]) == v]
    configs = []
    if args.defaults:
        configs += [dict(c) for c in fam.spec.get("defaults", [])]
    if args.configs:
        with open(args.configs) as f:
            c = json.load(f)
        configs += c["configs"] if isinstance(c, dict) else c
    for g in args.grid:
        configs += grid_configs(g, fam)
    for c in configs:  # params a config file predates take the spec's first value
        for n, vals in fam.params.items():
            c.setdefault(n, vals[0])
    seen, uniq = set(), []
    for c in configs:
        if cfg_key(c) not in seen:
            seen.add(cfg_key(c))
            uniq.append(c)
    configs = uniq

    if args.compile_only:
        dev = {"cc": int(args.arch[3:5]), "sm_count": 132, "smem_optin": 232448, "smem_per_block": 49152,
               "max_threads": 1024, "regs_per_block": 65536, "l2_bytes": 50 << 20}
        pairs = {}
        for s in shapes:
            for c in configs:
                if not fam.violations(c, s, dev):
                    pairs[(cfg_key(c), tuple(s[k] for k in fam.specialize))] = (c, s)
        bad = 0

        def work(p):
            c, s = p
            return c, s, kb.nvcc_compile(fam.render(c, s), args.arch + fam.arch_suffix(c, s, dev),
                                         fam.options + ["-Xptxas=-v"])
        with cf.ThreadPoolExecutor(max_workers=args.jobs) as ex:
            for c, s, (cubin, log) in ex.map(work, pairs.values()):
                regs = [ln.strip() for ln in log.splitlines() if "registers" in ln or "spill" in ln]
                print(("OK  " if cubin else "ERR ") + cfg_str(c), {k: s[k] for k in fam.specialize}, " | ".join(regs))
                if not cubin:
                    bad += 1
                    print(log[-2000:])
        print(f"{len(pairs)} variants, {bad} failed")
        sys.exit(1 if bad else 0)

    out = {"device": None, "results": [], "ref_checks": {}}
    b = Bench(fam, args)
    out["device"] = dict(b.ident, **b.dev)
    print("device", out["device"], flush=True)
    if args.ceilings:
        ceilings(out)
    if shapes:
        b.compile_all([(c, s) for s in shapes for c in configs if not fam.violations(c, s, b.dev)])
    for i, s in enumerate(shapes):
        t0 = time.time()
        rows = b.run_shape(s, configs, args.baselines, seed=i + 1)
        out["results"] += rows
        for r in rows:
            tag = r.get("name") or (cfg_str(r["config"]) if "config" in r else "")
            med = f"{r['median_us']:9.2f}us {r['tflops']:6.1f}TF" if "median_us" in r else " " * 20
            e = r.get("err", {})
            print(f"  {shape_str(s):40s} {r['kind']:15s} {r['status']:13s} {med} "
                  f"err {e.get('max_abs', float('nan')):.2e}/{e.get('rel_l2', float('nan')):.1e} "
                  f"{'regs ' + str(r['regs']) if 'regs' in r else ''} {tag}"
                  f"{' ' + str(r.get('gate', {}).get('failed')) if r.get('gate', {}).get('failed') else ''}"
                  f"{' ' + r['error'] if 'error' in r else ''}", flush=True)
        print(f"  ({time.time() - t0:.1f}s)", flush=True)
        if args.out:
            with open(args.out, "w") as f:
                json.dump(out, f, indent=1)
    out["ref_checks"] = b.ref_checked
    if b.ref_checked:
        worst = max(b.ref_checked.values(), key=lambda e: e["rel_l2"])
        print(f"reference.cu vs torch fp64 on {len(b.ref_checked)} gate inputs: worst max_abs "
              f"{max(e['max_abs'] for e in b.ref_checked.values()):.2e} rel_l2 {worst['rel_l2']:.2e}")
    if args.out:
        with open(args.out, "w") as f:
            json.dump(out, f, indent=1)
    if shapes:
        print(summarize(out["results"], shapes))


if __name__ == "__main__":
    main()
