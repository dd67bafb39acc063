#!/usr/bin/env python3
"""Compare the best stored kforge gemm kernels with torch's matmul (cuBLAS), one process, one method.

For each shape of a suite (search_spaces/gemm.json), unless --baselines-only:
  <kforge> export --family gemm --shape M=..,N=..,K=..,dtype=..[,in_dtype=..][,b_layout=..] --out <dir> --db <db>
then load the exported cubin through libcuda (tools/kfexport.py), launch it on torch's current stream, and time it
and torch's product (A @ B for b_layout kn, F.linear(A, B) = A @ B.T for nk; cuBLAS or cuBLASLt underneath) by
CUDA-graph replay, the replays of both interleaved. Both outputs are checked against an fp64 product of the same
inputs with the spec's tolerance for the output type. torch's product writes the input type, so shapes whose
output type differs from it (f32 out of f16 inputs) get no torch row. Prints a table; --baselines-out writes the
torch timings (with the kforge config timed beside them) as a JSON list for `kforge baseline import`, so
`kforge best` shows each winner's ratio to cuBLAS.

  python3 tools/compare_gemm.py --suite llm --kforge build/kforge --db results.db --baselines-out base.json
  python3 tools/compare_gemm.py --shape M=4096,N=4096,K=4096,dtype=bf16,in_dtype=bf16 --config best
"""
import argparse
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import kfexport as kx  # noqa: E402

SPEC = os.path.join(HERE, "..", "search_spaces", "gemm.json")
INTS = ["M", "N", "K"]
OPTIONAL = {"in_dtype": "f16", "b_layout": "kn"}  # left out (or equal): these defaults
BACKEND = "torch.matmul"


def full(shape):
    """The shape with in_dtype and b_layout filled in (a shape of the spec leaves them out at their defaults)."""
    out = dict(shape)
    for k, default in OPTIONAL.items():
        out.setdefault(k, default)
    return out


def shape_arg(s):
    """kforge's spelling of the shape: in_dtype and b_layout only where they differ from their defaults."""
    s = full(s)
    return ",".join([f"{k}={s[k]}" for k in INTS + ["dtype"]] +
                    [f"{k}={s[k]}" for k, d in OPTIONAL.items() if s[k] != d])


def parse_shape(text):
    s = dict(kv.split("=", 1) for kv in text.split(","))
    need = set(INTS) | {"dtype"}
    if not need <= set(s) or not set(s) <= need | set(OPTIONAL):
        raise SystemExit(f"compare_gemm: a shape names M, N, K, dtype (and optionally in_dtype, b_layout): got '{text}'")
    return {k: (int(v) if k in INTS else v) for k, v in s.items()}


def inputs(shape, g):
    """A [M][K] and B ([K][N], or [N][K] for nk) uniform in [-1, 1) in the input type, and C for the kernel."""
    import torch
    s = full(shape)
    dt = kx.torch_dtype(s["in_dtype"])
    b_dims = (s["N"], s["K"]) if s["b_layout"] == "nk" else (s["K"], s["N"])
    t = {"A": (torch.rand(s["M"], s["K"], device="cuda", generator=g) * 2 - 1).to(dt),
         "B": (torch.rand(*b_dims, device="cuda", generator=g) * 2 - 1).to(dt)}
    t["C"] = torch.empty(s["M"], s["N"], device="cuda", dtype=kx.torch_dtype(s["dtype"]))
    return t


def product(t, b_layout):
    """torch's product of the inputs as fn() -> C; with fp64 inputs, the reference."""
    import torch.nn.functional as F
    if b_layout == "nk":
        return lambda a=None, b=None: F.linear(t["A"] if a is None else a, t["B"] if b is None else b)
    return lambda a=None, b=None: (t["A"] if a is None else a) @ (t["B"] if b is None else b)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--suite", default="default", help="suite name in the spec (default, square, llm, ...)")
    ap.add_argument("--shape", action="append", help="a shape instead of the suite (repeatable)")
    ap.add_argument("--config", help="export this config (kforge export --config) instead of the stored winner")
    ap.add_argument("--spec", default=SPEC)
    kx.add_compare_args(ap)
    args = ap.parse_args()

    if not args.baselines_only:
        args.kforge = kx.find_kforge(args.kforge, "compare_gemm")  # before any GPU work: a clear error
    import torch
    spec, shapes = kx.spec_and_shapes(args.spec, args, parse_shape)
    torch.zeros(1, device="cuda")
    drv = kx.Driver()
    dev = kx.device_identity()
    baselines, rows, failures = [], [], 0
    print(f"{'shape':58s} {'kforge us':>10s} {'TF/s':>5s} {'torch us':>10s} {'TF/s':>5s} {'torch/kforge':>12s}")
    for i, shape in enumerate(shapes):
        s = full(shape)
        g = torch.Generator(device="cuda")
        g.manual_seed(args.seed * 1000 + i + 1)
        t = inputs(shape, g)
        ref = product(t, s["b_layout"])(t["A"].double(), t["B"].double())
        tol = spec["tolerance"].get(s["dtype"], spec["tolerance"].get("default"))
        flops = 2.0 * s["M"] * s["N"] * s["K"]
        res, ops = {}, {}
        if s["dtype"] == s["in_dtype"]:
            fn = product(t, s["b_layout"])
            out = fn()
            torch.cuda.synchronize()
            res[BACKEND] = {"err": kx.errors(out, ref)}
            ops[BACKEND] = fn
        if not args.baselines_only:
            try:
                with tempfile.TemporaryDirectory() as d:
                    man = kx.export(args.kforge, "gemm", shape_arg(shape), d, db=args.db, config=args.config)
                    launch = kx.launcher(drv, man, d, t)  # the cubin is loaded; d may go
                t["C"].fill_(float("nan"))
                launch()
                torch.cuda.synchronize()
                res["kforge"] = {"err": kx.errors(t["C"], ref), "config": man.get("config"),
                                 "stored_us": (man.get("timing") or {}).get("median_us")}
                ops["kforge"] = launch
            except Exception as e:
                res["kforge"] = {"error": str(e)[:300]}
        if ops:
            for name, tm in kx.time_graphs(ops, reps=args.reps, target_us=args.target_us).items():
                res[name].update(tm)
        for name, r in res.items():
            if "err" in r:
                e = r["err"]
                r["ok"] = e["finite"] and e["max_abs"] <= tol["max_abs"] and e["rel_l2"] <= tol["rel_l2"]
                failures += not r["ok"]
                r["tflops"] = flops / r["median_us"] / 1e6
        b, k = res.get(BACKEND, {}), res.get("kforge", {})
        if "median_us" in b:
            baselines.append({"family": spec["name"], "shape": shape, "backend": BACKEND, "median_us": b["median_us"],
                              "p10_us": b["p10_us"], "p90_us": b["p90_us"], "tflops": b["tflops"],
                              "max_abs_err": b["err"]["max_abs"], "rel_l2_err": b["err"]["rel_l2"],
                              "method": "cuda_graph_replay", "launches_per_graph": b["launches"],
                              "replays": b["reps"], "torch": torch.__version__, "device": dev})
            if k.get("ok") and "median_us" in k and k.get("config"):
                baselines[-1]["side_by_side"] = {"config": k["config"], "kforge_us": k["median_us"]}
        rows.append({"shape": shape, "results": res})

        def col(r):
            return (f"{r['median_us']:10.2f} {r['tflops']:5.0f}" if "median_us" in r else f"{'n/a':>10s} {'':5s}")
        ratio = f"{b['median_us'] / k['median_us']:12.3f}" if "median_us" in b and "median_us" in k else f"{'-':>12s}"
        print(f"{shape_arg(shape):58s} {col(k)} {col(b)} {ratio}", flush=True)
        for name, r in res.items():
            if "error" in r or not r.get("ok", True):
                print(f"    {name}: {r.get('error') or r['err']}")
        del t, ref
        torch.cuda.empty_cache()
    print("(torch/kforge > 1: kforge is faster; CUDA-graph replay, interleaved, one process)")
    kx.write_compare_outputs(args, baselines, dev, rows)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
