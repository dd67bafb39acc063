#!/usr/bin/env python3
"""Statistics of tools/kt_compare.py results, with bootstrap intervals, and the issue-34 bar.

Reads one or more `kt_compare.py --out` files (later files add strategies to earlier ones, so a
kforge-only run and a Kernel Tuner-only run combine) and prints per space, per strategy:
  - the median evaluations to get within 1% of the optimum, with a 95% percentile-bootstrap
    interval (runs resampled with replacement; a run that never got there counts as +inf, so an
    interval end may be `n/r`);
  - the share of runs within 1% after 2%, 5% and 10% of the space, with 95% Wilson intervals;
  - the share of runs still outside 5% of the optimum at the end of the budget.
Then, per space, the bar: evo against the Kernel Tuner strategy with the lowest median to 1%.
Medians come from per-run counts ("per_run"), so files written before those were kept are skipped.

Usage: tools/kt_stats.py FILE.json [FILE.json ...] [--strategy "kforge evo"] [--resamples 2000]
"""
import argparse
import json
import math
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kt_compare import quantile  # noqa: E402  (the runner's quantile: the figures of both tools agree)


def median_interval(counts, resamples, rng):
    """95% percentile-bootstrap interval of the median; fixed seed, so reruns print the same."""
    meds = sorted(quantile([rng.choice(counts) for _ in counts], 0.5) for _ in range(resamples))
    return meds[int(0.025 * (resamples - 1))], meds[int(math.ceil(0.975 * (resamples - 1)))]


def wilson(k, n, z=1.96):
    if n == 0:
        return 0.0, 1.0
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return max(0.0, c - h), min(1.0, c + h)


def fmt(x):
    if math.isinf(x):
        return "n/r"
    return f"{x:.0f}" if x == int(x) else f"{x:.1f}"


def pct(x):
    return f"{100 * x:.0f}%"


def stats(r, n_configs, resamples, rng):
    one = [math.inf if x is None else x for x in r["per_run"]["0.01"]]
    five = r["per_run"].get("0.05")
    lo, hi = median_interval(one, resamples, rng)
    out = {"median": quantile(one, 0.5), "lo": lo, "hi": hi, "runs": len(one), "shares": {}}
    for frac in (0.02, 0.05, 0.10):
        k = max(1, round(frac * n_configs))
        hits = sum(c <= k for c in one)
        out["shares"][frac] = (hits / len(one),) + wilson(hits, len(one))
    out["outside5"] = sum(x is None for x in five) / len(five) if five else float("nan")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--strategy", default="kforge evo", help="the strategy held to the bar")
    ap.add_argument("--resamples", type=int, default=2000)
    args = ap.parse_args()
    spaces = {}
    for path in args.files:
        with open(path) as f:
            for name, entry in json.load(f).items():
                s = spaces.setdefault(name, dict(entry, results={}))
                s["results"].update({k: v for k, v in entry["results"].items() if "per_run" in v})
    verdicts = []
    for name, e in spaces.items():
        n = e["configs"]
        rng = random.Random(34)
        rows = {k: stats(v, n, args.resamples, rng) for k, v in e["results"].items()}
        if not rows:
            continue
        seeds = sorted({r["runs"] for r in rows.values()})
        print(f"#### {name}: {n} configs, budget {e['budget']}, runs {'/'.join(map(str, seeds))}\n")
        print("| strategy | median evals to 1% [95% CI] | within 1% @ 2% ({}) | @ 5% ({}) | @ 10% ({}) | outside 5% at end |".format(
            *(max(1, round(f * n)) for f in (0.02, 0.05, 0.10))))
        print("|---|---|---|---|---|---|")
        for k, s in rows.items():
            shares = [f"{pct(v)} [{pct(a)}, {pct(b)}]" for v, a, b in s["shares"].values()]
            print(f"| {k} ({s['runs']}) | {fmt(s['median'])} [{fmt(s['lo'])}, {fmt(s['hi'])}] | " + " | ".join(shares)
                  + f" | {pct(s['outside5'])} |")
        print()
        kt = {k: s for k, s in rows.items() if k.startswith("KT ")}
        if args.strategy in rows and kt:
            best = min(kt, key=lambda k: (kt[k]["median"], -kt[k]["shares"][0.05][0]))
            ev, b = rows[args.strategy], kt[best]
            verdicts.append((name, best, ev["median"] <= b["median"], ev["shares"][0.05][0] >= b["shares"][0.05][0],
                             not (ev["outside5"] > 0.20 and b["outside5"] <= 0.05), ev, b))
    if verdicts:
        print(f"#### The bar: {args.strategy} against the Kernel Tuner strategy with the lowest median to 1%\n")
        print("| space | best KT | median to 1%: evo / KT | <= ? | within 1% @ 5%: evo / KT | >= ? | outside 5% at end: evo / KT | ok? |")
        print("|---|---|---|---|---|---|---|---|")
        yes = lambda b: "yes" if b else "**no**"
        for name, best, m, s, o, ev, b in verdicts:
            print(f"| {name} | {best[3:]} | {fmt(ev['median'])} / {fmt(b['median'])} | {yes(m)} | "
                  f"{pct(ev['shares'][0.05][0])} / {pct(b['shares'][0.05][0])} | {yes(s)} | "
                  f"{pct(ev['outside5'])} / {pct(b['outside5'])} | {yes(o)} |")


if __name__ == "__main__":
    main()
