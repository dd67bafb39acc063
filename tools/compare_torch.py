#!/usr/bin/env python3
"""Compare the best stored kforge sdpa_fwd kernels with torch's SDPA backends, one process, one method.

For each shape of a suite (search_spaces/sdpa_fwd.json), unless --baselines-only:
  <kforge> export --family sdpa_fwd --shape B=..,H=..,S=..,D=..,causal=..,dtype=.. --out <dir> --db <db>
  [--config ...] [--define ...]
then load <dir>/<manifest.cubin> through libcuda (ctypes, tools/kfexport.py), launch it on torch's current stream, and
time it and torch.flash / torch.efficient / torch.cudnn (torch.nn.attention.sdpa_kernel) by CUDA-graph
replay (many launches per graph, median of many replays, the replays of all of them interleaved). All outputs are checked against torch's math
SDPA in fp64 and against each other. Prints a table and, with --baselines-out, writes the backend
timings as a JSON list for `kforge baseline import`.

  python3 tools/compare_torch.py --suite mission --baselines-only --baselines-out base.json
  python3 tools/compare_torch.py --suite sweep --kforge build/kforge --db kforge.db --json-out cmp.json
  python3 tools/compare_torch.py --shape B=2,H=8,S=512,D=64,causal=0,dtype=f16 --config best --define DIAG_STORE=1
"""
import argparse
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import kfexport as kx  # noqa: E402

SPEC = os.path.join(HERE, "..", "search_spaces", "sdpa_fwd.json")
BACKENDS = ["torch.flash", "torch.efficient", "torch.cudnn"]
DIMS = ["B", "H", "S", "D", "causal", "dtype"]
OPTIONAL = {"Hkv": "H", "Skv": "S"}  # K/V heads and keys; left out (or equal), the dim they default to


def full(shape):
    """The shape with Hkv and Skv filled in (a shape of the spec leaves them out at their defaults)."""
    out = dict(shape)
    for k, default in OPTIONAL.items():
        out.setdefault(k, out[default])
    return out


def shape_arg(s):
    """kforge's spelling of the shape: Hkv and Skv only where they differ from their defaults."""
    s = full(s)
    return ",".join([f"{k}={s[k]}" for k in DIMS] + [f"{k}={s[k]}" for k, d in OPTIONAL.items() if s[k] != s[d]])


def parse_shape(text):
    s = dict(kv.split("=", 1) for kv in text.split(","))
    if not set(DIMS) <= set(s) or not set(s) <= set(DIMS) | set(OPTIONAL):
        raise SystemExit(f"compare_torch: a shape names {', '.join(DIMS)} (and optionally Hkv, Skv): got '{text}'")
    return {k: (v if k == "dtype" else int(v)) for k, v in s.items()}


def attention_flops(shape):
    """The spec's cost.flops: a causal row i sees keys 0 .. i + Skv - S (aligned bottom-right)."""
    s = full(shape)
    b, h, sq, skv, d = s["B"], s["H"], s["S"], s["Skv"], s["D"]
    return 2.0 * b * h * sq * (sq + 1 + 2 * (skv - sq)) * d if s["causal"] else 4.0 * b * h * sq * skv * d


def sdpa_backends():
    from torch.nn.attention import SDPBackend
    return {"torch.flash": SDPBackend.FLASH_ATTENTION, "torch.efficient": SDPBackend.EFFICIENT_ATTENTION,
            "torch.cudnn": SDPBackend.CUDNN_ATTENTION}


def sdpa_args(q, k, causal):
    """SDPA's keyword arguments for kforge's semantics: grouped-query heads by enable_gqa (torch >= 2.5), and a
    causal mask aligned bottom-right (torch's is_causal aligns top-left, the same only where S == Skv)."""
    kw = {"enable_gqa": True} if q.shape[1] != k.shape[1] else {}
    if causal and q.shape[2] != k.shape[2]:
        from torch.nn.attention.bias import causal_lower_right
        kw["attn_mask"] = causal_lower_right(q.shape[2], k.shape[2])
    else:
        kw["is_causal"] = bool(causal)
    return kw


def sdpa_fn(backend, q, k, v, causal):
    """Returns (fn, out_holder) where fn runs SDPA with exactly that backend."""
    import torch.nn.functional as F
    from torch.nn.attention import sdpa_kernel
    holder = {}
    kw = sdpa_args(q, k, causal)

    def fn():
        with sdpa_kernel([backend]):
            holder["o"] = F.scaled_dot_product_attention(q, k, v, **kw)
    return fn, holder


def reference_fp64(q, k, v, causal, chunk_elems=1 << 29):
    """torch math SDPA in fp64 on upcast inputs (K/V heads repeated for grouped-query shapes, an explicit
    bottom-right causal mask), chunked over batch*heads."""
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    B, H, S, D = q.shape
    Hkv, Skv = k.shape[1], k.shape[2]
    if Hkv != H:
        k, v = (x.repeat_interleave(H // Hkv, dim=1) for x in (k, v))
    mask = None
    if causal:  # row i sees keys 0 .. i + Skv - S
        rows = torch.arange(S, device=q.device).unsqueeze(1)
        mask = torch.arange(Skv, device=q.device).unsqueeze(0) <= rows + (Skv - S)
    out = torch.empty(B, H, S, D, dtype=torch.float64, device=q.device)
    qf, kf, vf = (x.reshape(B * H, x.shape[2], D) for x in (q, k, v))
    of = out.view(B * H, S, D)
    step = max(1, chunk_elems // max(1, S * Skv))
    with sdpa_kernel([SDPBackend.MATH]):
        for i in range(0, B * H, step):
            sl = slice(i, min(B * H, i + step))
            of[sl] = F.scaled_dot_product_attention(qf[sl].double(), kf[sl].double(), vf[sl].double(), attn_mask=mask)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--suite", default="mission", help="suite name in the spec (mission, sweep, default)")
    ap.add_argument("--shape", action="append", help="a shape instead of the suite (repeatable)")
    ap.add_argument("--config", action="append",
                    help="export this config (kforge export --config) instead of the stored winner; repeatable: "
                         "each further config is timed side by side with the first (rows kforge.2, kforge.3, ...); "
                         "'best' is the stored winner")
    ap.add_argument("--define", action="append", default=[], help="extra define for the kforge kernel (NAME=V)")
    ap.add_argument("--spec", default=SPEC)
    kx.add_compare_args(ap, "backend timings")
    ap.add_argument("--max-launches", type=int, default=2000, help="launches per graph at most (all backends alike)")
    ap.add_argument("--sequential", action="store_true",
                    help="time one op after another (the method before interleaved replays), for comparison")
    args = ap.parse_args()

    if not args.baselines_only:
        args.kforge = kx.find_kforge(args.kforge, "compare_torch")  # before any GPU work: a clear error
    import torch
    spec, shapes = kx.spec_and_shapes(args.spec, args, parse_shape)
    torch.cuda.init()
    torch.zeros(1, device="cuda")
    drv = kx.Driver()
    dev = kx.device_identity()
    baselines, rows = [], []
    failures = 0
    for i, shape in enumerate(shapes):
        g = torch.Generator(device="cuda")
        g.manual_seed(args.seed * 1000 + i + 1)
        dt = kx.torch_dtype(shape["dtype"])
        fs = full(shape)
        dims = (fs["B"], fs["H"], fs["S"], fs["D"])
        kv_dims = (fs["B"], fs["Hkv"], fs["Skv"], fs["D"])
        t = {n: (torch.rand(dims if n == "Q" else kv_dims, device="cuda", generator=g) * 2 - 1).to(dt)
             for n in ["Q", "K", "V"]}
        t["O"] = torch.empty(dims, device="cuda", dtype=dt)
        ref = reference_fp64(t["Q"], t["K"], t["V"], shape["causal"])
        tol = spec["tolerance"].get(shape["dtype"], spec["tolerance"].get("default"))
        flops = attention_flops(shape)
        res = {}
        outs = {}
        ops = {}  # name -> launch, timed together once every op has run and been kept for the checks
        for name, be in sdpa_backends().items():
            try:
                fn, hold = sdpa_fn(be, t["Q"], t["K"], t["V"], shape["causal"])
                fn()
                torch.cuda.synchronize()
                outs[name] = hold["o"].clone()
                ops[name] = fn
                res[name] = dict(err=kx.errors(hold["o"], ref))
            except Exception as e:
                res[name] = {"error": (str(e).splitlines() or [type(e).__name__])[0][:200]}
                torch.cuda.synchronize()
        for j, config in enumerate([] if args.baselines_only else (args.config or [None])):
            name = kforge_row(j)
            try:
                with tempfile.TemporaryDirectory() as d:
                    man = kx.export(args.kforge, "sdpa_fwd", shape_arg(shape), d, db=args.db,
                                    config=config, defines=args.define)
                    launch = kx.launcher(drv, man, d, t)  # the cubin is loaded; d may go
                t["O"].fill_(float("nan"))
                launch()
                torch.cuda.synchronize()
                outs[name] = t["O"].clone()
                ops[name] = launch
                res[name] = dict(err=kx.errors(t["O"], ref), config=man.get("config"),
                                 stored_us=(man.get("timing") or {}).get("median_us"),
                                 defines=man.get("defines"))
            except Exception as e:
                res[name] = {"error": str(e)[:300]}
        try:
            timing = dict(reps=args.reps, target_us=args.target_us, max_launches=args.max_launches)
            if args.sequential:
                tms = {name: kx.time_graph(fn, **timing) for name, fn in ops.items()}
            else:
                tms = kx.time_graphs(ops, **timing)
            for name, tm in tms.items():
                res[name].update(tm)
        except Exception as e:
            for name in ops:
                res[name] = {"error": f"timing: {str(e)[:200]}"}
        torch.cuda.synchronize()
        # every output against the fp64 reference and against each other
        names = list(outs)
        cross = 0.0
        for a in range(len(names)):
            for b in range(a + 1, len(names)):
                cross = max(cross, float((outs[names[a]].double() - outs[names[b]].double()).abs().max().item()))
        for name, r in res.items():
            if "err" in r:
                e = r["err"]
                r["ok"] = e["finite"] and e["max_abs"] <= tol["max_abs"] and e["rel_l2"] <= tol["rel_l2"]
                if not r["ok"]:
                    failures += 1
                r["tflops"] = flops / r["median_us"] / 1e6
        for name in BACKENDS:
            r = res.get(name, {})
            if "median_us" in r:
                baselines.append({"family": spec["name"], "shape": shape, "backend": name,
                                  "median_us": r["median_us"], "p10_us": r["p10_us"], "p90_us": r["p90_us"],
                                  "tflops": r["tflops"], "max_abs_err": r["err"]["max_abs"],
                                  "rel_l2_err": r["err"]["rel_l2"], "method": "cuda_graph_replay",
                                  "launches_per_graph": r["launches"], "replays": r["reps"],
                                  "torch": torch.__version__,
                                  "cudnn": torch.backends.cudnn.version(), "device": dev})
                kf = res.get(kforge_row(0), {})
                if kf.get("ok") and "median_us" in kf and kf.get("config"):
                    # the first kforge config timed beside it, so `kforge best` shows this run's ratio
                    baselines[-1]["side_by_side"] = {"config": kf["config"], "kforge_us": kf["median_us"]}
        rows.append({"shape": shape, "results": res, "max_cross_diff": cross})
        print_row(shape, res, cross)
        del t, ref, outs
        torch.cuda.empty_cache()
    print("(ratios = backend time / kforge time: > 1 means kforge is faster; best = fastest torch backend)")
    kx.write_compare_outputs(args, baselines, dev, rows)
    sys.exit(1 if failures else 0)


_header_done = False


def kforge_row(j):
    """The result name of the j-th kforge config: kforge, then kforge.2, kforge.3, ..."""
    return "kforge" if j == 0 else f"kforge.{j + 1}"


def print_row(shape, res, cross):
    global _header_done
    if not _header_done:
        print(f"{'shape':44s} {'kforge':>9s} {'TF/s':>5s} {'flash':>9s} {'effic':>9s} {'cudnn':>9s} "
              f"{'x/best':>6s} {'x/flash':>7s} {'x/cudnn':>7s} {'xdiff':>8s}")
        _header_done = True

    def us(n):
        r = res.get(n, {})
        return f"{r['median_us']:9.2f}" if "median_us" in r else f"{'n/a':>9s}"
    k = res.get("kforge", {}).get("median_us")
    bt = {n: res[n]["median_us"] for n in BACKENDS if "median_us" in res.get(n, {})}
    best = min(bt.values()) if bt else None

    def ratio(x):
        return f"{x / k:7.2f}" if k and x else f"{'-':>7s}"
    tf = res.get("kforge", {}).get("tflops", 0.0)
    print(f"{shape_arg(shape):44s} {us('kforge')} {tf:5.0f} {us('torch.flash')} {us('torch.efficient')} "
          f"{us('torch.cudnn')} {ratio(best):>6s} {ratio(bt.get('torch.flash'))} {ratio(bt.get('torch.cudnn'))} "
          f"{cross:8.1e}", flush=True)
    if "error" in res.get("kforge", {}):
        print("    kforge:", res["kforge"]["error"])
    j = 1
    while kforge_row(j) in res:  # further configs, side by side with the first
        r = res[kforge_row(j)]
        if "median_us" in r:
            t_us, cd = r["median_us"], bt.get("torch.cudnn")
            vs_first = f"{t_us / k:.3f}x kforge" if k else "kforge n/a"
            vs_cudnn = f", {t_us / cd:.3f}x cudnn's time" if cd else ""
            print(f"    {kforge_row(j)}: {t_us:.2f} us ({vs_first}{vs_cudnn}) {r.get('config')}")
        else:
            print(f"    {kforge_row(j)}: {r.get('error')}")
        j += 1
    for n in BACKENDS:
        if "error" in res.get(n, {}):
            print(f"    {n}: {res[n]['error']}")


if __name__ == "__main__":
    main()
