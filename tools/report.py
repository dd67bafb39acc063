#!/usr/bin/env python3
"""One self-contained HTML page (plots inline) and its PNGs from a kforge results database.

    tools/report.py results.db --out report/ [--family gemm] [--campaign 3] [--kforge build/kforge]

Writes into --out: convergence_<campaign>.png (best time so far per shape, one panel each),
status.png (outcomes per campaign, fixed status colours), params_<family>.png (median time per
value of each parameter), baselines_<family>.png (kforge's best against each baseline, per
shape) and index.html, which embeds them (base64) with the tables behind them, so the page can
be mailed or archived alone.

kforge's best per shape and its ratios to the baselines come from `kforge best --json`, so the
report and `best` agree (same winner, stale marking, baseline medians and speedup definition:
baseline median / kforge median). Without a kforge binary (--kforge, PATH, build/kforge) the
same ratio is computed here, but stale winners cannot be told.

Reads the database with Python's sqlite3, read-only; safe while a campaign is writing (WAL).
The schema is documented in docs/schema.md. Without matplotlib the page still has its
tables; the plots are skipped with a message.
"""
import argparse
import base64
import datetime
import html
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import report_plots as rp  # noqa: E402  (imports matplotlib only inside its functions)


def fail(msg):
    print(f"report.py: {msg}", file=sys.stderr)
    sys.exit(1)


def open_db(path):
    if not os.path.exists(path):
        fail(f"{path}: no such file")
    try:
        # Read-only: a report must never change the results (or switch a foreign file to WAL).
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    except sqlite3.DatabaseError as e:
        fail(f"{path}: {e}")
    if "kforge_meta" not in tables:
        fail(f"{path}: not a kforge database (no kforge_meta table)")
    db.row_factory = sqlite3.Row
    return db


def parse_time(text):
    if not text:
        return None
    try:
        return datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


def fmt_us(v):
    return "-" if v is None else f"{v:.2f}"


# ------------------------------------------------------------------------------------------
# Queries: plain data, no plotting.

def select_rows(db, query, filters, order_by):
    """Rows of `query` (which ends in a WHERE clause) as dicts, narrowed by each (column, value)
    of `filters` whose value is given, in `order_by` order."""
    args = []
    for column, value in filters:
        if value is not None:
            query += f" AND {column} = ?"
            args.append(value)
    return [dict(r) for r in db.execute(f"{query} ORDER BY {order_by}", args)]


def load_campaigns(db, family=None, campaign=None):
    q = ("SELECT c.id, f.name AS family, c.strategy, c.seed, c.status, c.shapes_json, c.created_at, "
         "c.updated_at FROM campaigns c JOIN families f ON f.id = c.family_id WHERE 1=1")
    return select_rows(db, q, [("f.name", family or None), ("c.id", campaign)], "c.id")


def load_evaluations(db, family=None, campaign=None):
    q = ("SELECT e.id, e.campaign_id, f.name AS family, cf.key AS config_key, cf.json AS config_json, "
         "s.key AS shape_key, e.shape_id, e.device_id, d.name AS device, e.status, e.median_us, e.flops, "
         "e.created_at FROM evaluations e JOIN configs cf ON cf.id = e.config_id "
         "JOIN shapes s ON s.id = e.shape_id JOIN families f ON f.id = cf.family_id "
         "JOIN devices d ON d.id = e.device_id WHERE 1=1")
    return select_rows(db, q, [("f.name", family or None), ("e.campaign_id", campaign)], "e.id")


def load_baselines(db, family=None):
    q = ("SELECT f.name AS family, s.key AS shape_key, b.shape_id, b.device_id, d.name AS device, b.backend, "
         "b.median_us, b.created_at FROM baselines b JOIN families f ON f.id = b.family_id "
         "JOIN shapes s ON s.id = b.shape_id JOIN devices d ON d.id = b.device_id WHERE 1=1")
    return select_rows(db, q, [("f.name", family or None)], "b.id")


def convergence(evals, campaign):
    """Per shape: [(the shape's evaluation number, seconds since start, best median so far)]."""
    start = parse_time(campaign["created_at"])
    series = defaultdict(list)
    best, seen = {}, defaultdict(int)
    for e in (e for e in evals if e["campaign_id"] == campaign["id"]):
        k = e["shape_key"]
        seen[k] += 1
        t = parse_time(e["created_at"])
        secs = (t - start).total_seconds() if t and start else float(seen[k])
        if e["status"] == "ok" and e["median_us"] is not None and (k not in best or e["median_us"] < best[k]):
            best[k] = e["median_us"]
        if k in best:
            series[k].append((seen[k], secs, best[k]))
    return series


def status_counts(evals):
    counts = defaultdict(lambda: defaultdict(int))
    for e in evals:
        counts[e["campaign_id"]][e["status"]] += 1
    return counts


def param_effects(evals, family):
    """For the family's most-evaluated shape: {param: {value: median of ok medians}}, and the shape."""
    ok = [e for e in evals if e["family"] == family and e["status"] == "ok" and e["median_us"] is not None]
    if not ok:
        return None, {}
    per_shape = defaultdict(int)
    for e in ok:
        per_shape[e["shape_key"]] += 1
    # Times of different shapes are not comparable: one shape, the one with the most data.
    shape = max(per_shape, key=lambda k: (per_shape[k], k))
    by_param = defaultdict(lambda: defaultdict(list))
    for e in ok:
        if e["shape_key"] != shape:
            continue
        for p, v in json.loads(e["config_json"]).items():
            by_param[p][v].append(e["median_us"])
    effects = {}
    for p, vals in by_param.items():
        effects[p] = {v: (statistics.median(ts), len(ts)) for v, ts in vals.items()}
    return shape, effects


def find_kforge(explicit):
    if explicit:
        return explicit
    here = os.path.dirname(os.path.abspath(__file__))
    for candidate in (shutil.which("kforge"), os.path.join(here, "..", "build", "kforge")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


def best_from_kforge(kforge, db_path, family):
    """`kforge best --family F --json`: per stored shape, the winner, stale flag and baseline ratios."""
    try:
        out = subprocess.run([kforge, "--db", db_path, "-q", "best", "--family", family, "--json"],
                             capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as e:
        print(f"report.py: {kforge} best failed ({e}); ratios computed here", file=sys.stderr)
        return None
    if out.returncode != 0:
        print(f"report.py: kforge best --family {family}: {out.stderr.strip()}; ratios computed here", file=sys.stderr)
        return None
    rows = []
    for r in json.loads(out.stdout):
        if "median_us" not in r:
            continue
        shape_key = ",".join(f"{k}={v}" for k, v in sorted(r["shape"].items()))
        rows.append({"shape_key": shape_key, "device": r.get("device", ""), "median_us": r["median_us"],
                     "stale": bool(r.get("stale")), "config": r.get("config", {}),
                     "baselines": r.get("baselines", {})})
    return rows


def best_computed_here(evals, baselines, family):
    """The same definition as `kforge best` (fastest ok result; per backend the median of its
    stored measurements on that device; speedup = baseline / kforge), without the stale check."""
    best = {}
    for e in evals:
        if e["family"] != family or e["status"] != "ok" or e["median_us"] is None:
            continue
        if e["shape_key"] not in best or e["median_us"] < best[e["shape_key"]]["median_us"]:
            best[e["shape_key"]] = e
    measured = defaultdict(list)
    for b in baselines:
        if b["family"] == family:
            measured[(b["shape_key"], b["device"], b["backend"])].append(b["median_us"])
    rows = []
    for shape_key, e in sorted(best.items()):
        base = {backend: {"median_us": statistics.median(ts), "speedup": statistics.median(ts) / e["median_us"]}
                for (s, d, backend), ts in sorted(measured.items()) if s == shape_key and d == e["device"]}
        rows.append({"shape_key": shape_key, "device": e["device"], "median_us": e["median_us"], "stale": False,
                     "config": json.loads(e["config_json"]), "baselines": base})
    return rows


# ------------------------------------------------------------------------------------------
# The page.

def table(headers, rows):
    h = "".join(f"<th>{html.escape(str(x))}</th>" for x in headers)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table><tr>{h}</tr>{body}</table>"


def inline_png(path):
    with open(path, "rb") as f:
        return "data:image/png;base64," + base64.b64encode(f.read()).decode("ascii")


def campaign_sections(plt, out, campaigns, evals, image):
    rows = []
    for c in campaigns:
        ce = [e for e in evals if e["campaign_id"] == c["id"]]
        ok = [e for e in ce if e["status"] == "ok" and e["median_us"] is not None]
        best = min(ok, key=lambda e: e["median_us"]) if ok else None
        rows.append([c["id"], c["family"], c["strategy"], c["status"], len(ce), len(ok),
                     fmt_us(best["median_us"]) if best else "-", best["config_key"] if best else "-"])
    sections = ["<h2>Campaigns</h2>" + table(
        ["campaign", "family", "strategy", "status", "evaluations", "ok", "best (us)", "best config"], rows)]
    conv = []
    for c in campaigns:
        series = convergence(evals, c)
        if not series:
            continue
        counts = defaultdict(lambda: [0, 0])
        for e in evals:
            if e["campaign_id"] == c["id"]:
                counts[e["shape_key"]][1] += 1
                counts[e["shape_key"]][0] += e["status"] == "ok"
        name = f"convergence_{c['id']}.png"
        if plt:
            rp.plot_convergence(plt, series, {k: tuple(v) for k, v in counts.items()}, c, os.path.join(out, name))
        conv.append(f"<h3>campaign {c['id']}</h3>" + image(name))
    if conv:
        sections.append("<h2>Convergence</h2>" + "".join(conv))
    counts = status_counts(evals)
    if counts:
        statuses = [s for s in rp.STATUS_ORDER if any(counts[c].get(s) for c in counts)]
        statuses += sorted({s for c in counts.values() for s in c} - set(statuses))
        order = sorted(counts, key=lambda x: (x is None, x or 0))
        rows = [[c if c is not None else "none"] + [counts[c].get(s, 0) for s in statuses] + [sum(counts[c].values())]
                for c in order]
        labels = {c["id"]: f"{c['id']} {c['family']} {c['strategy']}" for c in campaigns}
        if plt:
            rp.plot_status(plt, counts, labels, os.path.join(out, "status.png"))
        sections.append("<h2>Outcomes</h2>" + image("status.png") + table(["campaign"] + statuses + ["total"], rows))
    return sections


def family_sections(plt, out, fam, evals, best_rows, ratio_source, image):
    sections = []
    shape, effects = param_effects(evals, fam)
    if effects:
        name = f"params_{fam}.png"
        if plt:
            rp.plot_params(plt, fam, shape, effects, os.path.join(out, name))
        rows = [[p, v, fmt_us(effects[p][v][0]), effects[p][v][1]]
                for p in sorted(effects) for v in sorted(effects[p], key=rp.sort_key)]
        sections.append(f"<h2>{html.escape(fam)}: parameter effects</h2><p>shape {html.escape(shape)}, ok "
                        "evaluations only; median over all configs with that value</p>" + image(name) +
                        table(["param", "value", "median (us)", "evaluations"], rows))
    if best_rows:
        rows = [[r["shape_key"], r["device"], fmt_us(r["median_us"]), "stale" if r["stale"] else "",
                 " ".join(f"{b.split('.')[-1]} {v['speedup']:.2f}x" for b, v in sorted(r["baselines"].items())) or "-",
                 ",".join(f"{k}={v}" for k, v in sorted(r["config"].items()))] for r in best_rows]
        with_base = [r for r in best_rows if r["baselines"]]
        name = f"baselines_{fam}.png"
        if plt and with_base:
            rp.plot_baselines(plt, fam, with_base, os.path.join(out, name))
        sections.append(
            f"<h2>{html.escape(fam)}: best per shape and against the baselines</h2><p>{html.escape(ratio_source)}. "
            "Speedup = baseline median / kforge median (above 1: kforge faster). <i>stale</i>: the winner was "
            "timed with an older kernel source and no result of the current one exists yet.</p>"
            + (image(name) if with_base else "") +
            table(["shape", "device", "kforge best (us)", "stale", "speedup vs baselines", "config"], rows))
    return sections


def main():
    ap = argparse.ArgumentParser(description="One self-contained HTML report (and PNGs) from a kforge results database.")
    ap.add_argument("db", nargs="?", default="results.db", help="results database (default results.db)")
    ap.add_argument("--out", required=True, help="output directory (created)")
    ap.add_argument("--family", help="only this family")
    ap.add_argument("--campaign", type=int, help="only this campaign")
    ap.add_argument("--kforge", help="kforge binary for `best --json` (default: PATH, then build/kforge)")
    args = ap.parse_args()

    db = open_db(args.db)
    campaigns = load_campaigns(db, args.family, args.campaign)
    evals = load_evaluations(db, args.family, args.campaign)
    baselines = load_baselines(db, args.family)
    os.makedirs(args.out, exist_ok=True)

    try:
        import matplotlib
        matplotlib.use("Agg")  # no display on a GPU node
        import matplotlib.pyplot as plt
    except ImportError:
        plt = None
        print("report.py: matplotlib is not installed (pip install -r requirements.txt): writing tables only, no plots",
              file=sys.stderr)

    images = []

    def image(name):
        images.append(name)
        return f'<img alt="{html.escape(name)}" src="@@{html.escape(name)}@@">' if plt else ""

    sections = campaign_sections(plt, args.out, campaigns, evals, image)
    kforge = find_kforge(args.kforge)
    for fam in sorted({e["family"] for e in evals}):
        best_rows = best_from_kforge(kforge, args.db, fam) if kforge else None
        source = f"From `{os.path.basename(kforge)} best --json`" if best_rows is not None else \
            "Computed here like `kforge best` (no kforge binary found: stale winners are not detected)"
        if best_rows is None:
            best_rows = best_computed_here(evals, baselines, fam)
        sections += family_sections(plt, args.out, fam, evals, best_rows, source, image)

    if not evals:
        sections.append("<p>No evaluations match.</p>")
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%SZ")
    note = "" if plt else "<p><b>matplotlib is not installed: plots were skipped.</b></p>"
    page = ("<!doctype html><html><head><meta charset='utf-8'><title>kforge report</title><style>"
            "body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;margin:1em 0}"
            "td,th{border:1px solid #ccc;padding:2px 8px;font-size:13px}img{max-width:100%}</style></head><body>"
            f"<h1>kforge report</h1><p>{html.escape(os.path.abspath(args.db))}, {now}</p>{note}"
            + "".join(sections) + "</body></html>\n")
    for name in images:  # inline every plot: the page is one file
        path = os.path.join(args.out, name)
        if plt and os.path.exists(path):
            page = page.replace(f"@@{html.escape(name)}@@", inline_png(path))
    with open(os.path.join(args.out, "index.html"), "w") as f:
        f.write(page)
    written = sorted({i for i in images if plt and os.path.exists(os.path.join(args.out, i))}) + ["index.html"]
    print(f"report.py: wrote {len(written)} files to {args.out} (index.html is self-contained)")


if __name__ == "__main__":
    main()
