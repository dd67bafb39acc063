#!/usr/bin/env python3
"""The torch op of `kforge export --torch`, checked and timed on the GPU (ctest: TorchOp.SdpaFwdAgainstTorch).

Exports the stored sdpa_fwd winner of a shape with --torch (from a copy of the database: export may
re-gate a stale winner), builds and loads the op with the generated torch/load.py, then
  1. compares kforge::sdpa_fwd with F.scaled_dot_product_attention (fp64 math on the same inputs; K/V
     heads repeated for grouped-query shapes, causal aligned bottom-right where S != Skv, as
     tools/compare_torch.py does) within the family spec's tolerance for the dtype;
  2. checks its refusals (wrong dtype, a non-contiguous input, a CPU tensor, mismatched shapes);
  3. captures it in a torch.cuda.CUDAGraph, changes the inputs in place, replays, and checks again;
  4. runs it inside torch.compile(fullgraph=True) and compares with the eager result;
  5. times it (CUDA-graph replay, tools/kfexport.py) next to the same kernel launched raw from its
     cubin and torch's flash and cuDNN backends (torch.nn.attention.sdpa_kernel), as a table;
  6. for prefill shapes (S == Skv), puts it in a small model block, q/k/v projections, attention, output
     projection, checked against the block in fp64 eager and under torch.compile, and timed compiled next to
     the same block on F.scaled_dot_product_attention (tools/torch_op_block.py).
Exit 0: every check passed; 1: one failed; 77: skipped (no torch, no CUDA device), with the reason.

  python3 tools/torch_op_check.py --kforge build/kforge --db results.db \\
      --shape B=4,H=16,S=1024,D=64,causal=0,dtype=f16 [--out DIR] [--json-out timing.json]
  (grouped-query and KV-cache shapes too: --shape B=1,H=32,Hkv=8,S=512,Skv=4096,D=128,causal=1,dtype=bf16)
"""
import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import compare_torch as ct  # noqa: E402
import kfexport as kx  # noqa: E402
import torch_op_block  # noqa: E402

SKIP = 77
SPEC = os.path.join(HERE, "..", "search_spaces", "sdpa_fwd.json")


def skip(reason):
    print(f"SKIPPED: {reason}")
    sys.exit(SKIP)


def export_with_torch(kforge, db, shape_text, out):
    """kforge export --torch of the stored winner, from a copy of db; returns the manifest."""
    work_db = os.path.join(out, "results.db")
    shutil.copyfile(db, work_db)
    cmd = [kforge, "--db", work_db, "export", "--family", "sdpa_fwd", "--shape", shape_text, "--name", "sdpa_fwd",
           "--torch", "--out", os.path.join(out, "export")]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"torch_op_check: {' '.join(cmd)} failed: {(r.stderr or r.stdout).strip()}")
    with open(os.path.join(out, "export", "manifest.json")) as f:
        return json.load(f)


def load_op(export_dir):
    spec = importlib.util.spec_from_file_location("kforge_sdpa_fwd_load", os.path.join(export_dir, "torch", "load.py"))
    loader = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loader)
    return loader.load(verbose=True)


class Checks:
    def __init__(self):
        self.failed = []

    def expect(self, ok, what):
        print(f"  {'ok  ' if ok else 'FAIL'} {what}", flush=True)
        if not ok:
            self.failed.append(what)

    def within(self, name, out, ref, tol):
        e = kx.errors(out, ref)
        ok = e["finite"] and e["max_abs"] <= tol["max_abs"] and e["rel_l2"] <= tol["rel_l2"]
        self.expect(ok, f"{name}: max_abs {e['max_abs']:.2e} (<= {tol['max_abs']}), rel_l2 {e['rel_l2']:.2e} "
                        f"(<= {tol['rel_l2']})")

    def refuses(self, name, fn, words):
        try:
            fn()
        except RuntimeError as e:
            first = str(e).strip().splitlines()[0] if str(e).strip() else ""
            self.expect(words in str(e), f"refuses {name}: {first[:150]}")
            return
        self.expect(False, f"refuses {name}: it ran")


def check_graph_and_compile(c, op, q, k, v, causal, tol):
    import torch
    # A CUDA graph: warm up on a side stream, capture, then new inputs in place and replay.
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(2):
            op(q, k, v, causal)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out_graph = op(q, k, v, causal)
    for x in (q, k, v):
        x.copy_(torch.rand_like(x) * 2 - 1)
    g.replay()
    torch.cuda.synchronize()
    c.within("CUDA graph replay on new inputs", out_graph, ct.reference_fp64(q, k, v, causal), tol)
    # torch.compile: the Meta impl gives the shapes, the graph keeps the op (fullgraph: no break).
    eager = op(q, k, v, causal)

    def f(q, k, v):
        return op(q, k, v, causal) * 2.0

    try:
        compiled = torch.compile(f, fullgraph=True)(q, k, v)
        note = "inductor"
    except Exception as e:  # no triton for inductor: the op's part (fake tensors, graph) is what is checked
        print(f"  note: inductor failed ({str(e).splitlines()[0][:120]}); compiling with aot_eager")
        compiled = torch.compile(f, fullgraph=True, backend="aot_eager")(q, k, v)
        note = "aot_eager"
    torch.cuda.synchronize()
    diff = float((compiled.float() - eager.float() * 2.0).abs().max().item())
    c.expect(diff <= 1e-3, f"torch.compile(fullgraph=True, {note}) matches eager (max diff {diff:.1e})")


def timing_table(op, man, export_dir, q, k, v, causal, flops):
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    raw = {"Q": q, "K": k, "V": v, "O": torch.empty_like(q)}
    fns = {"kforge op": lambda: op(q, k, v, causal),
           "kforge raw": kx.launcher(kx.Driver(), man, export_dir, raw)}
    kw = ct.sdpa_args(q, k, causal)  # grouped-query heads, causal aligned bottom-right
    for name, be in (("torch.flash", SDPBackend.FLASH_ATTENTION), ("torch.cudnn", SDPBackend.CUDNN_ATTENTION)):
        def run(be=be):
            with sdpa_kernel([be]):
                F.scaled_dot_product_attention(q, k, v, **kw)
        try:
            run()
            fns[name] = run
        except RuntimeError as e:
            print(f"  {name}: not available here ({str(e).splitlines()[0][:100]})")
    res = kx.time_graphs(fns)
    base = res["kforge op"]["median_us"]
    print(f"\n{'op':12s} {'median us':>10s} {'p10':>8s} {'p90':>8s} {'TFLOP/s':>8s} {'vs op':>6s}")
    for name, r in res.items():
        print(f"{name:12s} {r['median_us']:10.2f} {r['p10_us']:8.2f} {r['p90_us']:8.2f} "
              f"{flops / r['median_us'] / 1e6:8.1f} {r['median_us'] / base:6.2f}")
    print("(CUDA-graph replay, interleaved; 'kforge raw': the same kernel from its cubin, no op around it;"
          " vs op > 1: slower than the op)")
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kforge", help="kforge executable (default: $KFORGE, build*/kforge here, PATH)")
    ap.add_argument("--db", default=os.path.join(HERE, "..", "results.db"), help="database with the winner")
    ap.add_argument("--shape", default="B=4,H=16,S=1024,D=64,causal=0,dtype=f16")
    ap.add_argument("--out", help="keep the export and the build here (default: a temporary folder)")
    ap.add_argument("--json-out", help="write the timing table as JSON")
    args = ap.parse_args()
    try:
        import torch
    except ImportError as e:
        skip(f"no torch for {sys.executable} ({e})")
    if not torch.cuda.is_available():
        skip("torch sees no CUDA device")
    kforge = kx.find_kforge(args.kforge, "torch_op_check")
    shape = ct.full(ct.parse_shape(args.shape))
    with open(SPEC) as f:
        tol = json.load(f)["tolerance"]
    tol = tol.get(shape["dtype"], tol["default"])
    out = args.out or tempfile.mkdtemp(prefix="kforge_torch_op_")
    os.makedirs(out, exist_ok=True)
    man = export_with_torch(kforge, args.db, args.shape, out)
    export_dir = os.path.join(out, "export")
    print(f"exported {man['name']} config {man['config_key']} ({man['arch']}); op {man['torch']['schema']}")
    op = load_op(export_dir)

    c = Checks()
    causal = bool(shape["causal"])
    dims = (shape["B"], shape["H"], shape["S"], shape["D"])
    kv_dims = (shape["B"], shape["Hkv"], shape["Skv"], shape["D"])
    g = torch.Generator(device="cuda").manual_seed(1)
    q, k, v = ((torch.rand(d, device="cuda", generator=g) * 2 - 1).to(kx.torch_dtype(shape["dtype"]))
               for d in (dims, kv_dims, kv_dims))
    out_op = op(q, k, v, causal)
    torch.cuda.synchronize()
    c.within("kforge::sdpa_fwd vs F.scaled_dot_product_attention (fp64)", out_op,
             ct.reference_fp64(q, k, v, causal), tol)
    c.expect(out_op.shape == q.shape and out_op.dtype == q.dtype, f"output {tuple(out_op.shape)} {out_op.dtype}")
    c.refuses("a float32 input", lambda: op(q.float(), k.float(), v.float(), causal), "the kernel takes")
    c.refuses("a non-contiguous input", lambda: op(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), causal),
              "contiguous")
    c.refuses("a CPU tensor", lambda: op(q, k.cpu(), v, causal), "CUDA")
    c.refuses("mismatched shapes", lambda: op(q, k[:, :, : kv_dims[2] // 2].contiguous(), v, causal), "size(2)")
    check_graph_and_compile(c, op, q, k, v, causal, tol)
    res = timing_table(op, man, export_dir, q, k, v, causal, man["flops"])
    del q, k, v, out_op
    torch_op_block.check_model_block(c, op, shape, tol)
    if args.json_out:
        with open(args.json_out, "w") as f:
            json.dump({"shape": shape, "device": kx.device_identity(), "torch": torch.__version__,
                       "config": man["config_key"], "timing": res}, f, indent=1)
    if not args.out:
        shutil.rmtree(out, ignore_errors=True)
    print(f"\n{len(c.failed)} failed" + (": " + "; ".join(c.failed) if c.failed else ""))
    sys.exit(1 if c.failed else 0)


if __name__ == "__main__":
    main()
