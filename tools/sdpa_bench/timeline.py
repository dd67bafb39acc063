#!/usr/bin/env python3
"""Per-warpgroup timeline of one sdpa_fwd config (DIAG=3 stamps, clock64 cycles): for each CTA and
warpgroup, the prologue, each key tile and the merge, relative to the CTA's first stamp; then the
median over CTAs. Shows whether the key groups of WN_KEYS=range / pingpong run their tiles at the
same time and what one tile costs.

  python3 tools/sdpa_bench/timeline.py --shape B=2,H=8,S=512,D=64,causal=0,dtype=f16 \\
      --config "BLOCK_M=64 BLOCK_N=128 WARPS=8 WARPS_N=2 WN_KEYS=range ..."
"""
import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402
import kfbench as kb  # noqa: E402


NSTAMPS = 23  # the template's KF_NSTAMPS


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--spec", default=bench.SPEC)
    ap.add_argument("--shape", required=True)
    ap.add_argument("--config", action="append", required=True, help="'NAME=v ...' (repeatable)")
    ap.add_argument("--launches", type=int, default=20, help="warm-up launches before the recorded one")
    a = ap.parse_args()
    fam = kb.Family(a.spec)
    shape = bench.parse_shape(a.shape)
    args = argparse.Namespace(skip_gate=True, check_only=False, time_anyway=True, target_us=1000, reps=1, jobs=4)
    b = bench.Bench(fam, args)
    for text in a.config:
        cfg = bench.grid_configs(text + " DIAG=3", fam)[0]
        b.compile_all([(cfg, shape)])
        st, k = b.kernel(cfg, shape)
        if st != "ok":
            print(text, "->", st)
            continue
        t = b.make_inputs(shape, 1)
        fn = b.launcher(k, cfg, shape, t)
        for _ in range(a.launches):
            fn()
        b.torch.cuda.synchronize()
        o = t["O"].view(b.torch.int64).reshape(-1).cpu()
        B, H, S, D = shape["B"], shape["H"], shape["S"], shape["D"]
        bm, wgs = cfg["BLOCK_M"], cfg["WARPS"] // 4
        rows = []
        for bh in range(B * H):
            for m0 in range(0, S, bm):
                base = (bh * S * D + m0 * D) // 4
                for g in range(wgs):
                    st_ = [int(x) for x in o[base + NSTAMPS * g: base + NSTAMPS * g + NSTAMPS]]
                    t0 = st_[0] if g == 0 else rows[-g][0][0]
                    rows.append((st_, t0))
        print(f"== {text}  ({len(rows)} warpgroup records)")
        names = ["prologue", "setup", "init", "q_req", "issue", "q_wait"] + [f"tile{i}" for i in range(6)] + ["merge", "total"]

        def spans(st_, t0):
            out = {"prologue": (st_[0] - t0, st_[1] - t0)}
            if st_[22]:  # within the prologue: indices computed and parameters read
                out["setup"] = (st_[0] - t0, st_[22] - t0)
            if st_[20] and st_[21]:  # within the prologue: the ring's barriers initialised, then Q requested
                out["init"] = (st_[0] - t0, st_[20] - t0)
                out["q_req"] = (st_[20] - t0, st_[21] - t0)
            if st_[18] and st_[19]:  # within the prologue: loads requested, then Q resident
                out["issue"] = (st_[0] - t0, st_[18] - t0)
                out["q_wait"] = (st_[18] - t0, st_[19] - t0)
            for i in range(6):
                if st_[2 + 2 * i] and st_[3 + 2 * i]:
                    out[f"tile{i}"] = (st_[2 + 2 * i] - t0, st_[3 + 2 * i] - t0)
            out["merge"] = (st_[14] - t0, st_[15] - t0)
            out["total"] = (0, st_[15] - t0)
            return out
        for g in range(wgs):
            recs = [spans(r[0], r[1]) for i, r in enumerate(rows) if i % wgs == g]
            cells = []
            for n in names:
                v = [r[n] for r in recs if n in r]
                if v:
                    s0 = statistics.median(x[0] for x in v)
                    s1 = statistics.median(x[1] for x in v)
                    cells.append(f"{n} {s0:.0f}-{s1:.0f}")
            print(f"  wg{g} (median cycles from the CTA's entry): " + "  ".join(cells))
        gt = [r[0][17] - r[0][16] for r in rows]
        print(f"  CTA wall (globaltimer) median {statistics.median(gt):.0f} ns, max {max(gt)} ns")
        # the launch as a whole: when CTAs entered and left, from the first entry (globaltimer, ns)
        first = min(r[0][16] for r in rows)
        starts = sorted(r[0][16] - first for r in rows)
        ends = sorted(r[0][17] - first for r in rows)
        print(f"  CTA entries: median {statistics.median(starts):.0f} ns, last {starts[-1]} ns after the first; "
              f"exits: first {ends[0]} ns, median {statistics.median(ends):.0f} ns, last {ends[-1]} ns")


if __name__ == "__main__":
    main()
