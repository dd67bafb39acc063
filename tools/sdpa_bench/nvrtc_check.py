#!/usr/bin/env python3
"""NVRTC compile check (no GPU): every spec default plus the split-KV, key-group and TMA variants, for sm_90 and sm_89,
on every specialization of the mission + sweep suites; configs the constraints reject for an arch are skipped.
  python3 tools/sdpa_bench/nvrtc_check.py [--jobs N] [--quick]"""
import argparse
import concurrent.futures as cf
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kfbench as kb  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--jobs", type=int, default=os.cpu_count())
ap.add_argument("--quick", action="store_true", help="one specialization per D")
a = ap.parse_args()
fam = kb.Family(os.path.join(os.path.dirname(__file__), "..", "..", "search_spaces", "sdpa_fwd.json"))
cfgs = [dict(c) for c in fam.spec["defaults"]]
for ks in (2, 4):
    for merge in ("gmem", "cluster", "push"):
        c = dict(cfgs[1]); c.update(KV_SPLITS=ks, KV_MERGE=merge); cfgs.append(c)
for keys in ("range", "pingpong"):  # two key groups over the first default's query rows
    c = dict(cfgs[0]); c.update(WARPS=2 * c["WARPS"], WARPS_N=2, WN_KEYS=keys, STAGES=2); cfgs.append(c)
c = dict(cfgs[0]); c.update(LOAD_ORDER="after_qk"); cfgs.append(c)
tma = dict(cfgs[0]); tma.update(KV_LOAD="tma", KV_WAIT="joint")  # the TMA ring and its structural options
for extra in ({}, {"KV_MCAST": 2}, {"KV_MCAST": 4}, {"KV_WAIT": "split"}, {"KV_SPLITS": 2, "KV_MERGE": "push"},
              {"STAGES": 3, "PIPE_QK": 1, "LOAD_ORDER": "first"},
              {"BLOCK_M": 128, "WARPS": 8, "STAGES": 3, "WG_PINGPONG": 1}):
    c = dict(tma); c.update(extra); cfgs.append(c)
specs = {}
for s in fam.suite("mission") + fam.suite("sweep"):
    specs[(s["D"], s["causal"], s["dtype"])] = s
if a.quick:
    specs = {k: v for k, v in specs.items() if k[1] == 1 and k[2] == "bf16"} or specs
nv = kb.Nvrtc()
devs = {"sm_90": {"cc": 90}, "sm_89": {"cc": 89}}
jobs = []
for arch, d in devs.items():
    dev = {"cc": d["cc"], "sm_count": 132, "smem_optin": 232448 if d["cc"] == 90 else 101376, "smem_per_block": 49152,
           "max_threads": 1024, "regs_per_block": 65536, "l2_bytes": 50 << 20}
    for s in specs.values():
        for c in cfgs:
            if not fam.violations(c, s, dev):
                jobs.append((arch + fam.arch_suffix(c, s, dev), c, s))


def work(j):
    arch, c, s = j
    cubin, log = nv.compile(fam.render(c, s), "sdpa_fwd.cu", arch, fam.options)
    return arch, c, s, cubin is not None, log


bad = 0
with cf.ThreadPoolExecutor(max_workers=a.jobs) as ex:
    for arch, c, s, ok, log in ex.map(work, jobs):
        if not ok:
            bad += 1
            print("FAIL", arch, {k: s[k] for k in fam.specialize}, c, log[-800:])
print(f"nvrtc: {len(jobs)} compiles (sm_90 + sm_89), {bad} failed")
sys.exit(1 if bad else 0)
