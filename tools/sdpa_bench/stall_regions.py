#!/usr/bin/env python3
"""Reads the per-instruction CSV of run_ncu_source.sh (ncu --page source --print-source sass --csv) and prints
where the warps' sampled time goes: totals per stall reason, then the kernel cut into regions at each wgmma
wait, barrier and mbarrier wait (samples and main reasons per region), then the top instructions.
  python3 tools/sdpa_bench/stall_regions.py src_1.csv [--top 25]"""
import argparse
import csv
import re

ap = argparse.ArgumentParser()
ap.add_argument("csv")
ap.add_argument("--top", type=int, default=25)
a = ap.parse_args()
rows = list(csv.reader(open(a.csv)))
hdr = rows[1]
col = {h: i for i, h in enumerate(hdr)}
reasons = [h for h in hdr if h.startswith("stall_") and "(Not Issued)" not in h]
ins = []
for r in rows[2:]:
    if len(r) < len(hdr) or not r[0].startswith("0x"):
        continue
    num = lambda h: float(r[col[h]] or 0)
    ins.append({"addr": int(r[0], 16), "src": r[1].strip(), "samples": num("Warp Stall Sampling (All Samples)"),
                "execs": num("Instructions Executed"), "why": {k[6:]: num(k) for k in reasons}})
total = sum(i["samples"] for i in ins) or 1.0
print(f"{len(ins)} instructions, {total:.0f} samples")
agg = {}
for i in ins:
    for k, v in i["why"].items():
        agg[k] = agg.get(k, 0) + v
print("by reason: " + "  ".join(f"{k} {100 * v / total:.1f}%" for k, v in sorted(agg.items(), key=lambda kv: -kv[1]) if v))


def main_reasons(why, n=3):
    s = sum(why.values()) or 1.0
    return " ".join(f"{k} {100 * v / s:.0f}%" for k, v in sorted(why.items(), key=lambda kv: -kv[1])[:n] if v)


cut = re.compile(r"WARPGROUP\.DEPBAR|BAR\.SYNC|SYNCS\.PHASECHK|EXIT|HGMMA.*gsb0")
print("\nregions (each ends at a wait, barrier or the last MMA of a group):")
reg, start = [], 0
for k, i in enumerate(ins):
    if cut.search(i["src"]) or k == len(ins) - 1:
        reg.append((start, k))
        start = k + 1
for s, e in reg:
    smp = sum(ins[k]["samples"] for k in range(s, e + 1))
    if smp / total < 0.01:
        continue
    why = {}
    for k in range(s, e + 1):
        for r, v in ins[k]["why"].items():
            why[r] = why.get(r, 0) + v
    ex = max(ins[k]["execs"] for k in range(s, e + 1))
    print(f"  [{s:5d}-{e:5d}] {100 * smp / total:5.1f}%  execs<={ex:7.0f}  ends '{ins[e]['src'][:60]}'  {main_reasons(why)}")
print("\ntop instructions:")
for k, i in sorted(enumerate(ins), key=lambda kv: -kv[1]["samples"])[: a.top]:
    print(f"  {k:5d} {100 * i['samples'] / total:5.1f}%  {i['src'][:64]:64s} {main_reasons(i['why'], 2)}")
