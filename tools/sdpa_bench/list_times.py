#!/usr/bin/env python3
"""One line per timed row of bench.py JSON results (diagnostic runs included): the shape, the backend
or the config parameters that differ between the rows, the status and the median time.
  python3 tools/sdpa_bench/list_times.py $OUT/run_a.json [$OUT/run_b.json ...]"""
import json
import sys

rows = []
for path in sys.argv[1:]:
    rows += [r for r in json.load(open(path))["results"] if "median_us" in r]
configs = [r["config"] for r in rows if r.get("kind") == "kforge"]
keys = sorted({k for c in configs for k in c if len({str(x.get(k)) for x in configs}) > 1})
for r in rows:
    s = r["shape"]
    shape = f"B{s['B']} H{s['H']} S{s['S']} D{s['D']} causal{s['causal']} {s['dtype']}"
    what = r["kind"] if r.get("kind") != "kforge" else " ".join(f"{k}={r['config'].get(k)}" for k in keys)
    print(f"{shape}  {what}  {r.get('status', 'ok')}  {r['median_us']:.2f} us")
