#!/usr/bin/env python3
"""Plot best-so-far curves from `kforge replay` (the CSV of replay/report.hpp: curves_csv).

    tools/plot_replay.py curves.csv [-o curves.png] [--title TEXT] [--log] [--max-fraction F]

One line per strategy: the mean of best/optimum against evaluations (as a fraction of the
space), with the p25-p75 band shaded. Needs matplotlib; without it, says so and exits 0, so
scripts that plot when they can do not fail on a machine without it.
"""
import argparse
import csv
import sys
from collections import OrderedDict


def read_curves(path):
    curves = OrderedDict()
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        need = {"strategy", "evaluations", "fraction_of_space", "mean", "p25", "p75"}
        missing = need - set(reader.fieldnames or [])
        if missing:
            sys.exit(f"{path}: not a replay curves CSV (missing {', '.join(sorted(missing))})")
        for row in reader:
            c = curves.setdefault(row["strategy"], {k: [] for k in ("x", "n", "mean", "p25", "p75")})
            c["x"].append(float(row["fraction_of_space"]))
            c["n"].append(int(row["evaluations"]))
            for k in ("mean", "p25", "p75"):
                c[k].append(float(row[k]))
    if not curves:
        sys.exit(f"{path}: no rows")
    return curves


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv")
    ap.add_argument("-o", "--output", help="PNG to write (default: the CSV's name with .png)")
    ap.add_argument("--title", default="")
    ap.add_argument("--log", action="store_true", help="log scale for best/optimum - 1")
    ap.add_argument("--max-fraction", type=float, default=None,
                    help="clip the x axis at this fraction of the space")
    args = ap.parse_args()
    curves = read_curves(args.csv)
    out = args.output or (args.csv[:-4] if args.csv.endswith(".csv") else args.csv) + ".png"

    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot_replay.py: matplotlib is not installed (pip install matplotlib); no plot written")
        return 0

    fig, ax = plt.subplots(figsize=(8, 5))
    for name, c in curves.items():
        x = c["x"]
        if args.max_fraction is not None:
            keep = [i for i, v in enumerate(x) if v <= args.max_fraction]
            c = {k: [v[i] for i in keep] for k, v in c.items()}
            x = c["x"]
        if args.log:
            # distance to the optimum: 1.0 would vanish on a log axis
            ys = {k: [max(v - 1.0, 1e-4) for v in c[k]] for k in ("mean", "p25", "p75")}
        else:
            ys = c
        (line,) = ax.plot(x, ys["mean"], label=name)
        ax.fill_between(x, ys["p25"], ys["p75"], alpha=0.15, color=line.get_color(), linewidth=0)
    for level in (1.01, 1.05, 1.10):
        y = level - 1.0 if args.log else level
        ax.axhline(y, color="grey", linewidth=0.6, linestyle=":")
    ax.set_xlabel("evaluations (fraction of the space)")
    ax.set_ylabel("best / optimum - 1" if args.log else "best so far / optimum")
    if args.log:
        ax.set_yscale("log")
    ax.set_title(args.title or "replay: mean best-so-far (band: p25-p75)")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
