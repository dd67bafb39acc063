#!/usr/bin/env python3
"""Stand-in for `kforge export` (testing tools/compare_torch.py before the real one exists):
  fake_export.py export --family sdpa_fwd --shape B=..,.. --out DIR [--db CONFIGS.json]
CONFIGS.json: {"<shape string>": config, ..., "default": config}; without it the spec's first default.
Writes DIR/manifest.json + DIR/sdpa_fwd.cubin in the manifest format compare_torch.py reads."""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kfbench as kb  # noqa: E402
from bench import SPEC, parse_shape, shape_str  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("verb")
ap.add_argument("--family")
ap.add_argument("--shape")
ap.add_argument("--out")
ap.add_argument("--db")
a = ap.parse_args()
fam = kb.Family(SPEC)
shape = parse_shape(a.shape)
cfg = fam.spec["defaults"][0]
if a.db:
    m = json.load(open(a.db))
    cfg = m.get(shape_str(shape), m.get("default", cfg))
import torch  # noqa: E402
torch.zeros(1, device="cuda")
dev = kb.Driver().device_info()
if fam.violations(cfg, shape, dev):
    sys.exit("config invalid for shape")
cubin, log = kb.Nvrtc().compile(fam.render(cfg, shape), "sdpa_fwd.cu", f"sm_{dev['cc']}", fam.options)
if cubin is None:
    sys.exit(log)
os.makedirs(a.out, exist_ok=True)
open(os.path.join(a.out, "sdpa_fwd.cubin"), "wb").write(cubin)
grid, block, smem = fam.launch(cfg, shape, dev)
sc = fam.scope(cfg, shape, dev)
args = []
for x in fam.spec["args"]:
    if "buffer" in x:
        b = [b for b in fam.spec["buffers"] if b["name"] == x["buffer"]][0]
        args.append({"kind": "buffer", "name": b["name"], "dtype": kb.ev(b["dtype"], sc), "role": b["role"],
                     "count": int(kb.ev(b["count"], sc))})
    elif "i32" in x:
        args.append({"kind": "i32", "value": int(kb.ev(x["i32"], sc))})
    elif "tensor_map" in x:
        b = [b for b in fam.spec["buffers"] if b["name"] == x["tensor_map"]][0]
        args.append({"kind": "tensor_map", "name": b["name"], "dtype": kb.ev(b["dtype"], sc),
                     "dims": [int(kb.ev(d, sc)) for d in x["dims"]], "box": [int(kb.ev(v, sc)) for v in x["box"]],
                     "swizzle": int(x.get("swizzle", 0))})
    else:
        args.append({"kind": "f32", "value": float(kb.ev(x["f32"], sc))})
json.dump({"entry": fam.entry, "cubin": "sdpa_fwd.cubin", "launch": {"grid": grid, "block": block, "smem": smem},
           "args": args, "config": cfg, "measured": {"median_us": None}},
          open(os.path.join(a.out, "manifest.json"), "w"), indent=1)
