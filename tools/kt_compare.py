#!/usr/bin/env python3
"""kforge's search strategies against Kernel Tuner's, on the same recorded spaces, at equal budgets.

One declarative run: a JSON file (tools/kt_compare.json) lists the spaces, the strategies of
both tools, the seeds, the budget (a fraction of each space), the tolerances and the fractions
of the space at which the best found is read. For each space the runner

  1. writes the space once as a sorted Kernel Tuner cache file (values of each parameter in
     ascending order, entries in the order of their value indices: Kernel Tuner's differential
     evolution depends on the order), from kforge's store (`kforge results --format
     kernel-tuner-cache`) or from a public cache file (gzip or not; entries reduced to their
     time are rebuilt from their keys);
  2. replays kforge's strategies on that file (`kforge replay --import FILE --json`);
  3. runs Kernel Tuner's strategies in simulation mode on the same file, in this one process,
     with the recorded configs (failed ones included) as the space's restriction, so that a
     failed config costs an evaluation in both tools (Kernel Tuner's `tune_cache` would drop
     failed configs from the space instead);
  4. prints, per strategy, the median number of evaluations to get within each tolerance of
     the optimum and the median best (normalised to the optimum) after each fraction of the
     space, with the same statistics for both tools (linear-interpolated quantiles, +inf for
     a run that never got there).

Usage: tools/kt_compare.py [--config tools/kt_compare.json] [--kforge build/kforge]
       [--spaces NAME,...] [--seeds N] [--only kforge|kernel_tuner] [--kt-strategies S,...]
       [--kforge-strategies S,...] [--kforge-options JSON] [--out results.json] [--markdown table.md]
Kernel Tuner must be importable (requirements.txt; e.g. a venv).
"""
import argparse
import gzip
import json
import math
import os
import random
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load_json(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def sort_key(v):
    return (0, v, "") if isinstance(v, (int, float)) and not isinstance(v, bool) else (1, 0, str(v))


def sorted_cache(cache):
    """The cache with sorted domains and entries; every entry carries its parameter values."""
    names = cache["tune_params_keys"]
    domains = {n: sorted(cache["tune_params"][n], key=sort_key) for n in names}
    spelled = {n: {str(v): v for v in domains[n]} for n in names}
    entries, dropped = [], 0
    for key, entry in cache["cache"].items():
        parts = key.split(",")
        if len(parts) != len(names):
            raise SystemExit(f"kt_compare: cache key '{key}' has {len(parts)} values, expected {len(names)}")
        values = [entry[n] if n in entry else spelled[n].get(p, p) for n, p in zip(names, parts)]
        if any(v not in domains[n] for n, v in zip(names, values)):
            dropped += 1  # a value the parameter's domain no longer has (as kforge replay drops it)
            continue
        index = tuple(domains[n].index(v) for n, v in zip(names, values))
        t = entry.get("time")
        failed = not isinstance(t, (int, float)) or isinstance(t, bool) or "__error__" in entry
        out = dict(zip(names, values))
        if failed:
            out["time"] = t if isinstance(t, str) else "RuntimeFailedConfig"
        else:
            out["time"] = t
            out["times"] = [t]
        entries.append((index, key, out))
    entries.sort()
    if dropped:
        print(f"kt_compare: {dropped} recorded config(s) with values outside the domains left out", file=sys.stderr)
    head = {k: cache[k] for k in ("schema_version", "device_name", "kernel_name", "problem_size") if k in cache}
    head.setdefault("device_name", "unknown")
    head.setdefault("kernel_name", "kernel")
    head.setdefault("problem_size", [1])
    head.update({"tune_params_keys": names, "tune_params": domains, "objective": "time"})
    head["cache"] = {key: out for _, key, out in entries}
    return head


def prepare(space, kforge, workdir, db):
    path = os.path.join(workdir, "".join(c if c.isalnum() else "_" for c in space["name"]) + ".json")
    if "kforge_results" in space:
        src = path + ".export"
        r = space["kforge_results"]
        subprocess.run([kforge, "--db", db, "-q", "results", "--format", "kernel-tuner-cache", "--family", r["family"],
                        "--shape", r["shape"], "--out", src], check=True)
        cache = load_json(src)
    else:
        cache = load_json(os.path.join(REPO, space["file"]))
    cache = sorted_cache(cache)
    with open(path, "w") as f:
        json.dump(cache, f)
    return path, cache


def quantile(values, q):
    """Linear-interpolated quantile, +inf-aware: kforge's replay::quantile."""
    v = sorted(values)
    pos = q * (len(v) - 1)
    lo = int(math.floor(pos))
    frac = pos - lo
    if frac == 0 or lo + 1 >= len(v):
        return v[lo]
    if math.isinf(v[lo + 1]):
        return v[lo + 1]
    return v[lo] + frac * (v[lo + 1] - v[lo])


def needed(trace, target):
    """Evaluations a run needed to get within target (None: not within its budget)."""
    return next((k + 1 for k, b in enumerate(trace) if b <= target), None)


def summarize(traces, optimum, n_configs, cfg):
    """traces: per run, the best time after each evaluation (inf before the first success).
    Keeps each run's evaluations to each tolerance ("per_run", null where not reached), from which
    tools/kt_stats.py computes bootstrap intervals and the shares of runs at any budget."""
    out = {"tolerances": {}, "best_at": {}, "runs": len(traces), "per_run": {}}
    for tol in cfg["tolerances"]:
        target = optimum * (1 + tol) * (1 + 1e-12)
        per_run = [needed(t, target) for t in traces]
        counts = [math.inf if x is None else x for x in per_run]
        out["tolerances"][str(tol)] = {"median": quantile(counts, 0.5),
                                       "reached": sum(x is not None for x in per_run) / len(per_run)}
        out["per_run"][str(tol)] = per_run
    for frac in cfg["best_at_fractions"]:
        k = max(1, round(frac * n_configs))
        out["best_at"][str(frac)] = quantile([t[min(k, len(t)) - 1] / optimum for t in traces], 0.5)
    return out


def expand(steps, evaluations):
    """A run of `kforge replay --json`: its best-so-far steps [k, best] as one value per evaluation."""
    out, nxt, best = [], 0, math.inf
    for k in range(1, evaluations + 1):
        while nxt < len(steps) and steps[nxt][0] <= k:
            best = steps[nxt][1]
            nxt += 1
        out.append(best)
    return out


def run_kforge(kforge, path, cache, budget, cfg):
    k = cfg["kforge"]
    cmd = [kforge, "-q", "replay", "--import", path, "--strategies", ",".join(k["strategies"]), "--seeds",
           str(cfg["seeds"]), "--budget", str(budget), "--depth", str(k.get("depth", 1)), "--json"]
    if k.get("options"):
        cmd += ["--options", json.dumps(k["options"])]
    rep = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    n, optimum = rep["space"]["configs"], rep["space"]["optimum_us"]
    result = {}
    for s in rep["strategies"]:
        traces = [expand(r["best_us"], budget) for r in s["runs"]]
        result["kforge " + s["strategy"]] = summarize(traces, optimum, n, cfg)
    return result


def kt_trace(cache, strategy, seed, budget):
    """One Kernel Tuner simulation run: the best time after each distinct evaluated config."""
    import numpy as np
    from constraint import FunctionConstraint
    import kernel_tuner

    names = cache["tune_params_keys"]
    recorded = {tuple(e[n] for n in names) for e in cache["cache"].values()}
    restriction = FunctionConstraint(lambda *values: values in recorded)
    random.seed(seed)
    np.random.seed(seed)
    results, _ = kernel_tuner.tune_kernel(
        cache["kernel_name"], "", tuple(cache["problem_size"]) if isinstance(cache["problem_size"], list)
        else cache["problem_size"], [], cache["tune_params"], restrictions=[restriction], cache=cache["_path"],
        simulation_mode=True, strategy=strategy, strategy_options={"max_fevals": budget}, verbose=False, quiet=True)
    seen, trace, best = set(), [], math.inf
    for r in results:
        key = tuple(r[n] for n in names)
        if key in seen:
            continue
        seen.add(key)
        t = r.get("time")
        if "__error__" not in r and isinstance(t, (int, float)):
            best = min(best, t)
        trace.append(best)
    return trace[:budget]


def run_kernel_tuner(path, cache, budget, cfg, optimum, n_configs, log, save):
    import warnings
    warnings.filterwarnings("ignore")
    cache = dict(cache, _path=path)
    kt = cfg["kernel_tuner"]
    result = {}
    for s in kt["strategies"]:
        cap = kt.get("max_budget", {}).get(s)
        if cap is not None and budget > cap:
            result["KT " + s] = {"skipped": f"budget {budget} > {cap}: {kt.get('skip', {}).get(s, '')}"}
            continue
        start = time.time()
        traces = [kt_trace(cache, s, seed, budget) for seed in range(1, cfg["seeds"] + 1)]
        worst = max(e["time"] for e in cache["cache"].values() if isinstance(e["time"], (int, float)))
        # As in kforge's replay: before the first success the best is the space's worst time.
        traces = [[min(b, worst) for b in t] for t in traces]
        result["KT " + s] = summarize(traces, optimum, n_configs, cfg)
        log(f"  KT {s}: {time.time() - start:.0f} s")
        save(result)  # after every strategy: Kernel Tuner's runs take hours
    return result


def fmt(x, ratio=False):
    if x is None:
        return "-"
    if math.isinf(x):
        return "n/r"
    return f"{x:.3f}" if ratio else (f"{x:.0f}" if x == int(x) else f"{x:.1f}")


def table(space_name, n, budget, optimum, results, cfg):
    tols, fracs = cfg["tolerances"], cfg["best_at_fractions"]
    head = (["strategy"] + [f"evals to {t:.0%}" for t in tols] + [f"best @ {f:.0%} ({max(1, round(f * n))})" for f in fracs])
    lines = [f"### {space_name}: {n} configs, budget {budget}, optimum {optimum:.6g} ms, {cfg['seeds']} seeds", "",
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, r in results.items():
        if "skipped" in r:
            lines.append(f"| {name} | " + " | ".join(["-"] * (len(head) - 1)) + " |")
            continue
        cells = []
        for t in tols:
            s = r["tolerances"][str(t)]
            reached = "" if s["reached"] == 1 else f" ({s['reached']:.0%})"
            cells.append(fmt(s["median"]) + reached)
        cells += [fmt(r["best_at"][str(f)], ratio=True) for f in fracs]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--config", default=os.path.join(REPO, "tools", "kt_compare.json"))
    ap.add_argument("--kforge", default=os.path.join(REPO, "build", "kforge"))
    ap.add_argument("--db", default=os.path.join(REPO, "results.db"))
    ap.add_argument("--spaces", help="comma-separated names (prefixes) of the spaces to run")
    ap.add_argument("--seeds", type=int, help="override the seed count")
    ap.add_argument("--only", choices=["kforge", "kernel_tuner"], help="run one tool only")
    ap.add_argument("--kt-strategies", help="comma-separated Kernel Tuner strategies, instead of the config's")
    ap.add_argument("--kforge-strategies", help="comma-separated kforge strategies, instead of the config's")
    ap.add_argument("--kforge-options", help="JSON of kforge replay --options, instead of the config's")
    ap.add_argument("--reuse", help="take Kernel Tuner's figures from an earlier --out (same seeds and budgets)")
    ap.add_argument("--out", help="write every figure as JSON")
    ap.add_argument("--markdown", help="write the tables as Markdown")
    args = ap.parse_args()
    cfg = load_json(args.config)
    if args.seeds:
        cfg["seeds"] = args.seeds
    if args.kt_strategies:
        cfg["kernel_tuner"]["strategies"] = [s.strip() for s in args.kt_strategies.split(",")]
    if args.kforge_strategies:
        cfg["kforge"]["strategies"] = [s.strip() for s in args.kforge_strategies.split(",")]
    if args.kforge_options:
        cfg["kforge"]["options"] = json.loads(args.kforge_options)
    spaces = cfg["spaces"]
    if args.spaces:
        want = [w.strip() for w in args.spaces.split(",")]
        spaces = [s for s in spaces if any(s["name"].startswith(w) for w in want)]
    log = lambda m: print(m, file=sys.stderr, flush=True)
    everything, md = {}, []
    earlier = load_json(args.reuse) if args.reuse else {}
    with tempfile.TemporaryDirectory() as workdir:
        for space in spaces:
            path, cache = prepare(space, args.kforge, workdir, args.db)
            times = [e["time"] for e in cache["cache"].values() if isinstance(e["time"], (int, float))]
            n, optimum = len(cache["cache"]), min(times)
            budget = max(1, min(round(cfg["budget_fraction"] * n), cfg.get("budget_max", n)))
            log(f"{space['name']}: {n} configs ({n - len(times)} failed), budget {budget}")
            results = {}
            if args.only != "kernel_tuner":
                start = time.time()
                results.update(run_kforge(args.kforge, path, cache, budget, cfg))
                log(f"  kforge: {time.time() - start:.0f} s")
            old = earlier.get(space["name"], {})
            if old.get("budget") == budget and old.get("seeds") == cfg["seeds"]:
                results.update({k: v for k, v in old["results"].items() if k.startswith("KT ")})
            elif space.get("kernel_tuner_skip") and args.only != "kforge":
                results["Kernel Tuner (all)"] = {"skipped": space["kernel_tuner_skip"]}
            entry = {"configs": n, "failed": n - len(times), "budget": budget, "seeds": cfg["seeds"],
                     "optimum_ms": optimum, "results": results}
            everything[space["name"]] = entry

            def save(kt_results):
                entry["results"] = dict(results, **kt_results)
                if args.out:
                    with open(args.out, "w") as f:
                        json.dump(everything, f, indent=1)
            if args.only != "kforge" and not space.get("kernel_tuner_skip") and not any(k.startswith("KT ") for k in results):
                results.update(run_kernel_tuner(path, cache, budget, cfg, optimum, n, log, save))
            md.append(table(space["name"], n, budget, optimum, results, cfg))
            print(md[-1], flush=True)
            if args.out:  # after every space, so that an interrupted run keeps what it finished
                with open(args.out, "w") as f:
                    json.dump(everything, f, indent=1)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("\n".join(md))


if __name__ == "__main__":
    main()
