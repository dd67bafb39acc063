#!/usr/bin/env python3
"""Plots and one HTML page from a kforge results database.

    tools/report.py results.db --out report/ [--family gemm] [--campaign 3]

Writes into --out: convergence_<campaign>.png (best time so far against evaluations and
against wall time), status.png (outcomes per campaign), params_<family>.png (median time per
value of each parameter), baselines_<family>.png (kforge's best against the baselines, per
shape) and index.html, which shows them with the tables behind them.

Reads the database with Python's sqlite3, read-only; safe while a campaign is writing (WAL).
The schema is documented in docs/schema.md. Without matplotlib the page still has its
tables; the plots are skipped with a message.
"""
import argparse
import datetime
import html
import json
import os
import sqlite3
import statistics
import sys
from collections import defaultdict


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

def load_campaigns(db, family=None, campaign=None):
    q = ("SELECT c.id, f.name AS family, c.strategy, c.seed, c.status, c.shapes_json, c.created_at, "
         "c.updated_at FROM campaigns c JOIN families f ON f.id = c.family_id WHERE 1=1")
    args = []
    if family:
        q += " AND f.name = ?"
        args.append(family)
    if campaign is not None:
        q += " AND c.id = ?"
        args.append(campaign)
    return [dict(r) for r in db.execute(q + " ORDER BY c.id", args)]


def load_evaluations(db, family=None, campaign=None):
    q = ("SELECT e.id, e.campaign_id, f.name AS family, cf.key AS config_key, cf.json AS config_json, "
         "s.key AS shape_key, e.shape_id, e.device_id, d.name AS device, e.status, e.median_us, e.flops, "
         "e.created_at FROM evaluations e JOIN configs cf ON cf.id = e.config_id "
         "JOIN shapes s ON s.id = e.shape_id JOIN families f ON f.id = cf.family_id "
         "JOIN devices d ON d.id = e.device_id WHERE 1=1")
    args = []
    if family:
        q += " AND f.name = ?"
        args.append(family)
    if campaign is not None:
        q += " AND e.campaign_id = ?"
        args.append(campaign)
    return [dict(r) for r in db.execute(q + " ORDER BY e.id", args)]


def load_baselines(db, family=None):
    q = ("SELECT f.name AS family, s.key AS shape_key, b.shape_id, b.device_id, d.name AS device, b.backend, "
         "b.median_us, b.created_at FROM baselines b JOIN families f ON f.id = b.family_id "
         "JOIN shapes s ON s.id = b.shape_id JOIN devices d ON d.id = b.device_id WHERE 1=1")
    args = []
    if family:
        q += " AND f.name = ?"
        args.append(family)
    return [dict(r) for r in db.execute(q + " ORDER BY b.id", args)]


def convergence(evals, campaign):
    """Per shape: [(evaluation number, seconds since start, best median so far)] for one campaign."""
    rows = [e for e in evals if e["campaign_id"] == campaign["id"]]
    start = parse_time(campaign["created_at"])
    series = defaultdict(list)
    best = {}
    for n, e in enumerate(rows, 1):
        t = parse_time(e["created_at"])
        secs = (t - start).total_seconds() if t and start else float(n)
        if e["status"] == "ok" and e["median_us"] is not None:
            k = e["shape_key"]
            if k not in best or e["median_us"] < best[k]:
                best[k] = e["median_us"]
        for k, b in best.items():
            series[k].append((n, secs, b))
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


def versus_baselines(evals, baselines, family):
    """[(shape, device, kforge best, {backend: newest median})] for shapes that have baselines."""
    best = {}
    for e in evals:
        if e["family"] != family or e["status"] != "ok" or e["median_us"] is None:
            continue
        k = (e["shape_key"], e["device"])
        if k not in best or e["median_us"] < best[k]:
            best[k] = e["median_us"]
    newest = defaultdict(dict)
    for b in baselines:  # in id order: later rows overwrite earlier ones
        if b["family"] == family:
            newest[(b["shape_key"], b["device"])][b["backend"]] = b["median_us"]
    return [(s, d, best.get((s, d)), newest[(s, d)]) for (s, d) in sorted(newest)]


# ------------------------------------------------------------------------------------------
# Plots (only called when matplotlib imported).

def sort_key(v):
    return (0, v, "") if isinstance(v, (int, float)) else (1, 0, str(v))


def plot_convergence(plt, series, campaign, path):
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4))
    for shape, pts in sorted(series.items()):
        a1.step([p[0] for p in pts], [p[2] for p in pts], where="post", label=shape)
        a2.step([p[1] for p in pts], [p[2] for p in pts], where="post", label=shape)
    a1.set_xlabel("evaluations")
    a2.set_xlabel("wall time since start (s)")
    for a in (a1, a2):
        a.set_ylabel("best median (us)")
        a.grid(alpha=0.3)
    if len(series) <= 8:
        a1.legend(fontsize=7)
    fig.suptitle(f"campaign {campaign['id']}: {campaign['family']}, {campaign['strategy']}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_status(plt, counts, path):
    campaigns = sorted(counts)
    statuses = sorted({s for c in counts.values() for s in c})
    fig, ax = plt.subplots(figsize=(max(5, 1 + 0.8 * len(campaigns)), 4))
    bottom = [0] * len(campaigns)
    labels = [str(c) if c is not None else "none" for c in campaigns]
    for s in statuses:
        vals = [counts[c].get(s, 0) for c in campaigns]
        ax.bar(labels, vals, bottom=bottom, label=s)
        bottom = [b + v for b, v in zip(bottom, vals)]
    ax.set_xlabel("campaign")
    ax.set_ylabel("evaluations")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_params(plt, family, shape, effects, path):
    params = sorted(effects)
    cols = min(4, len(params))
    rows = (len(params) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(3.2 * cols, 2.8 * rows), squeeze=False)
    for ax, p in zip([a for r in axes for a in r], params):
        vals = sorted(effects[p], key=sort_key)
        ax.bar([str(v) for v in vals], [effects[p][v][0] for v in vals])
        ax.set_title(p, fontsize=9)
        ax.set_ylabel("median time (us)", fontsize=7)
        ax.tick_params(labelsize=7)
    for ax in [a for r in axes for a in r][len(params):]:
        ax.axis("off")
    fig.suptitle(f"{family}: median time per parameter value ({shape})", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_baselines(plt, family, rows, path):
    backends = sorted({b for _, _, _, bs in rows for b in bs})
    names = ["kforge"] + backends
    fig, ax = plt.subplots(figsize=(max(6, 1.6 * len(rows)), 4))
    width = 0.8 / len(names)
    for i, n in enumerate(names):
        vals = [(k if n == "kforge" else bs.get(n)) for _, _, k, bs in rows]
        xs = [j + i * width for j in range(len(rows))]
        ax.bar(xs, [v if v is not None else 0 for v in vals], width, label=n)
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(rows))])
    ax.set_xticklabels([f"{s}\n{d}" for s, d, _, _ in rows], fontsize=6)
    ax.set_ylabel("median time (us), lower is better")
    ax.legend(fontsize=7)
    fig.suptitle(f"{family}: kforge against baselines")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


# ------------------------------------------------------------------------------------------
# The page.

def table(headers, rows):
    h = "".join(f"<th>{html.escape(str(x))}</th>" for x in headers)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table><tr>{h}</tr>{body}</table>"


def main():
    ap = argparse.ArgumentParser(description="Plots and an HTML page from a kforge results database.")
    ap.add_argument("db", nargs="?", default="results.db", help="results database (default results.db)")
    ap.add_argument("--out", required=True, help="output directory (created)")
    ap.add_argument("--family", help="only this family")
    ap.add_argument("--campaign", type=int, help="only this campaign")
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
        print("report.py: matplotlib is not installed (pip install matplotlib): writing tables only, no plots",
              file=sys.stderr)

    sections = []
    images = []

    def image(name):
        images.append(name)
        return f'<img src="{html.escape(name)}">' if plt else ""

    # Campaigns and convergence.
    rows = []
    for c in campaigns:
        ce = [e for e in evals if e["campaign_id"] == c["id"]]
        ok = [e for e in ce if e["status"] == "ok" and e["median_us"] is not None]
        best = min(ok, key=lambda e: e["median_us"]) if ok else None
        rows.append([c["id"], c["family"], c["strategy"], c["status"], len(ce), len(ok),
                     fmt_us(best["median_us"]) if best else "-", best["config_key"] if best else "-"])
    sections.append("<h2>Campaigns</h2>" + table(
        ["campaign", "family", "strategy", "status", "evaluations", "ok", "best (us)", "best config"], rows))
    conv = []
    for c in campaigns:
        series = convergence(evals, c)
        if not series:
            continue
        name = f"convergence_{c['id']}.png"
        if plt:
            plot_convergence(plt, series, c, os.path.join(args.out, name))
        conv.append(f"<h3>campaign {c['id']}</h3>" + image(name))
    if conv:
        sections.append("<h2>Convergence</h2>" + "".join(conv))

    # Status breakdown.
    counts = status_counts(evals)
    if counts:
        statuses = sorted({s for c in counts.values() for s in c})
        rows = [[c if c is not None else "none"] + [counts[c].get(s, 0) for s in statuses]
                for c in sorted(counts, key=lambda x: (x is None, x or 0))]
        if plt:
            plot_status(plt, counts, os.path.join(args.out, "status.png"))
        sections.append("<h2>Outcomes</h2>" + image("status.png") + table(["campaign"] + statuses, rows))

    # Parameter effects and baselines, per family.
    for fam in sorted({e["family"] for e in evals}):
        shape, effects = param_effects(evals, fam)
        if effects:
            name = f"params_{fam}.png"
            if plt:
                plot_params(plt, fam, shape, effects, os.path.join(args.out, name))
            rows = [[p, v, fmt_us(effects[p][v][0]), effects[p][v][1]]
                    for p in sorted(effects) for v in sorted(effects[p], key=sort_key)]
            sections.append(f"<h2>{html.escape(fam)}: parameter effects</h2><p>shape {html.escape(shape)}, ok "
                            "evaluations only; median over all configs with that value</p>" + image(name) +
                            table(["param", "value", "median (us)", "evaluations"], rows))
        vs = versus_baselines(evals, baselines, fam)
        if vs:
            name = f"baselines_{fam}.png"
            if plt:
                plot_baselines(plt, fam, vs, os.path.join(args.out, name))
            rows = []
            for s, d, k, bs in vs:
                for b, t in sorted(bs.items()):
                    rows.append([s, d, b, fmt_us(t), fmt_us(k), f"{t / k:.2f}x" if k else "-"])
            sections.append(f"<h2>{html.escape(fam)}: kforge against baselines</h2>" + image(name) + table(
                ["shape", "device", "baseline", "baseline (us)", "kforge best (us)", "speedup"], rows))

    if not sections or not evals:
        sections.append("<p>No evaluations match.</p>")
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%SZ")
    note = "" if plt else "<p><b>matplotlib is not installed: plots were skipped.</b></p>"
    page = ("<!doctype html><html><head><meta charset='utf-8'><title>kforge report</title><style>"
            "body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;margin:1em 0}"
            "td,th{border:1px solid #ccc;padding:2px 8px;font-size:13px}img{max-width:100%}</style></head><body>"
            f"<h1>kforge report</h1><p>{html.escape(os.path.abspath(args.db))}, {now}</p>{note}"
            + "".join(sections) + "</body></html>\n")
    with open(os.path.join(args.out, "index.html"), "w") as f:
        f.write(page)
    written = [i for i in images if plt] + ["index.html"]
    print(f"report.py: wrote {len(written)} files to {args.out}")


if __name__ == "__main__":
    main()
