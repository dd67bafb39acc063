#!/usr/bin/env python3
"""Per shape: best kforge time per value of each A/B parameter, against flash / cuDNN (time ratios),
then each base config with its variants side by side (time relative to the plain variant)."""
import json
import sys

for path in sys.argv[1:]:
    try:
        res = json.load(open(path))["results"]
    except Exception as e:  # noqa: BLE001
        print(path, "unreadable:", e)
        continue
    shapes = []
    for r in res:
        if r["shape"] not in shapes:
            shapes.append(r["shape"])
    for s in shapes:
        rs = [r for r in res if r["shape"] == s]
        bt = {r["kind"]: r.get("median_us") for r in rs if r["kind"] != "kforge"}
        ok = [r for r in rs if r["kind"] == "kforge" and r.get("status") == "ok" and "median_us" in r]
        bad = [r for r in rs if r["kind"] == "kforge" and r.get("status") not in ("ok", "invalid")]
        tag = ",".join(f"{k}={s[k]}" for k in ["B", "H", "S", "D", "causal", "dtype"])
        print(f"{tag}  flash {bt.get('torch.flash') or 0:.1f}  cudnn {bt.get('torch.cudnn') or 0:.1f}  "
              f"ok {len(ok)} failed {len(bad)}")
        for key in ["MMA", "BLOCK_M", "BLOCK_N", "WARPS_N", "WN_KEYS", "LOAD_ORDER", "KV_WAIT", "KV_SPLITS", "KV_MERGE", "LAZY_RESCALE", "P_EARLY", "PIPE_QK", "EXP2", "FRAG_PREFETCH", "LANE_ADDR", "KV_LOAD", "KV_MCAST", "WG_PINGPONG"]:
            vals = sorted({r["config"].get(key) for r in ok})
            if len(vals) < 2:
                continue
            for v in vals:
                b = min((r for r in ok if r["config"].get(key) == v), key=lambda r: r["median_us"])
                fl = b["median_us"] / bt["torch.flash"] if bt.get("torch.flash") else 0
                cu = b["median_us"] / bt["torch.cudnn"] if bt.get("torch.cudnn") else 0
                c = b["config"]
                print(f"   {key}={v}: {b['median_us']:8.2f} us  x/flash {fl:.3f}  x/cudnn {cu:.3f}  regs {b.get('regs')}  "
                      f"BM{c['BLOCK_M']} BN{c['BLOCK_N']} W{c['WARPS']} WN{c.get('WARPS_N', 1)}{c.get('WN_KEYS', 'tile')[:2]} ST{c['STAGES']} Q{c['Q_IN']} "
                      f"KS{c['KV_SPLITS']}{c.get('KV_MERGE', '')[:2]} LZ{c['LAZY_RESCALE']} PE{c.get('P_EARLY', 0)} "
                      f"LO{c.get('LOAD_ORDER', 'first')[:2]} {c.get('KV_LOAD', 'cp_async')}x{c.get('KV_MCAST', 1)}")
        variant_keys = ["LANE_ADDR", "FRAG_PREFETCH", "EXP2", "PIPE_QK", "LOAD_ORDER", "KV_WAIT", "KV_LOAD", "KV_MCAST", "WG_PINGPONG"]
        groups = {}
        for r in ok:
            base = tuple(sorted((k, v) for k, v in r["config"].items() if k not in variant_keys))
            groups.setdefault(base, []).append(r)
        for base, rs_ in groups.items():
            if len(rs_) < 2:
                continue
            rs_.sort(key=lambda r: tuple(str(r["config"].get(k, "")) for k in variant_keys))
            plain = rs_[0]["median_us"]
            c = dict(base)
            cells = "  ".join(
                "/".join(f"{k[:2]}{r['config'][k]}" for k in variant_keys if k in r["config"])
                + f" {r['median_us']:.2f} ({r['median_us'] / plain:.3f})" for r in rs_)
            print(f"   pairs BM{c['BLOCK_M']} BN{c['BLOCK_N']} W{c['WARPS']} ST{c['STAGES']}: {cells}")
        if "name" in (ok[0] if ok else {}):
            for r in sorted(ok, key=lambda r: r["median_us"]):
                print(f"     {r['median_us']:8.2f}  {r['name']}  regs {r.get('regs')}")
