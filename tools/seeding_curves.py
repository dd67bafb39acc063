#!/usr/bin/env python3
"""Seeded vs cold-start campaigns on one shape: best-so-far curves and evaluations to 1.05x.

    tools/seeding_curves.py --shape B=2,H=8,S=384,D=64,causal=0,dtype=f16 \\
        store=seeded.db defaults=defaults.db none=cold.db [--csv curves.csv] [--png curves.png]

Each ARM=DB names a database that holds campaigns of one seeding mode (`kforge search
--seeding ARM`); an arm may be named several times (one database per seed). For every campaign that evaluated the
shape, the best-so-far time after each evaluation (in the order they were recorded) is taken;
the target is 1.05x the best time any campaign found for the shape (its eventual best). The
table gives, per arm, the evaluations each campaign needed to reach the target and the median.
`--from-csv FILE` reads the curves back from a CSV this tool wrote (to plot them elsewhere).
Needs no GPU; the PNG needs matplotlib (skipped with a note without it).
"""
import argparse
import csv
import json
import math
import os
import sqlite3
import statistics
import sys


def shape_key(text):
    out = {}
    for part in text.split(","):
        k, v = part.split("=", 1)
        out[k.strip()] = int(v) if v.strip().lstrip("-").isdigit() else v.strip()
    return out


def curves_of(db_path, shape):
    """{campaign_id: [best-so-far us after each evaluation]} for campaigns that evaluated the shape."""
    db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    ids = [sid for sid, js in db.execute("select id, json from shapes") if json.loads(js) == shape]
    if not ids:
        return {}
    rows = db.execute(
        "select campaign_id, status, median_us from evaluations where shape_id = ? and campaign_id is not null "
        "and status != 'interrupted' order by id", (ids[0],)).fetchall()
    curves = {}
    for camp, status, us in rows:
        c = curves.setdefault(f"{os.path.basename(db_path)}#{camp}", [])
        prev = c[-1] if c else float("inf")
        c.append(min(prev, us) if status == "ok" and us is not None else prev)
    return curves


def evals_to(curve, target):
    return next((i + 1 for i, b in enumerate(curve) if b <= target), None)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shape", required=True)
    ap.add_argument("arms", nargs="*", metavar="ARM=DB")
    ap.add_argument("--from-csv", help="curves from a CSV written by --csv instead of databases")
    ap.add_argument("--within", type=float, default=1.05)
    ap.add_argument("--csv")
    ap.add_argument("--png")
    a = ap.parse_args()
    shape = shape_key(a.shape)
    arms = {}
    if a.from_csv:
        with open(a.from_csv, newline="") as f:
            for row in csv.DictReader(f):
                arms.setdefault(row["arm"], {}).setdefault(row["campaign"], []).append(float(row["best_us"]))
    elif not a.arms:
        sys.exit("give ARM=DB arguments or --from-csv")
    for spec in a.arms:
        name, _, path = spec.partition("=")
        if not path:
            sys.exit(f"'{spec}': expected ARM=DB")
        found = curves_of(path, shape)
        if not found:
            sys.exit(f"{path}: no campaign evaluated {a.shape}")
        arms.setdefault(name, {}).update(found)
    best = min(min(c) for curves in arms.values() for c in curves.values())
    target = best * a.within
    print(f"shape {a.shape}: eventual best {best:.2f} us over all arms; target {a.within}x = {target:.2f} us")
    print(f"{'arm':<10} {'campaigns':>9} {'evals to target (each)':<28} {'median':>6} {'first eval':>10} {'best':>8}")
    for name, curves in arms.items():
        hits = [evals_to(c, target) for c in curves.values()]
        med = statistics.median(math.inf if h is None else h for h in hits)  # a miss counts as last
        first = statistics.median(c[0] for c in curves.values())
        fin = min(c[-1] for c in curves.values())
        each = ", ".join("-" if h is None else str(h) for h in hits)
        print(f"{name:<10} {len(curves):>9} {each:<28} {'%g' % med if med < math.inf else 'missed':>6} "
              f"{first:>10.2f} {fin:>8.2f}")
    if a.csv:
        with open(a.csv, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["arm", "campaign", "evaluation", "best_us", "best_over_eventual"])
            for name, curves in arms.items():
                for camp, c in curves.items():
                    for i, b in enumerate(c):
                        w.writerow([name, camp, i + 1, f"{b:.4f}", f"{b / best:.4f}"])
    if a.png:
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            print("matplotlib not installed: no PNG")
            return
        fig, ax = plt.subplots(figsize=(7, 4))
        for k, (name, curves) in enumerate(arms.items()):
            for j, c in enumerate(curves.values()):
                ys = [min(b / best, 3.0) for b in c]
                ax.step(range(1, len(c) + 1), ys, where="post", color=f"C{k}", alpha=0.8,
                        label=f"seeding={name}" if j == 0 else None)
        ax.axhline(a.within, color="grey", ls="--", lw=1)
        ax.set_xlabel("evaluations")
        ax.set_ylabel("best so far / eventual best (capped at 3)")
        ax.set_title(a.shape)
        ax.legend()
        fig.tight_layout()
        fig.savefig(a.png, dpi=120)
        print(f"wrote {a.png}")


if __name__ == "__main__":
    main()
