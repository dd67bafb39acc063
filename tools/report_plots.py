"""Plots of tools/report.py (matplotlib, imported only when it is installed).

Every chart is sized by its content (rows of shapes, panels of shapes) so labels stay readable,
times are on log scales (kernels of one search span 10-1000x), and each status has one fixed
colour (ok is green).
"""
import math

STATUS_COLOURS = {
    "ok": "#2ca02c", "invalid": "#c7c7c7", "compile_error": "#ff7f0e", "launch_error": "#9467bd",
    "wrong_result": "#d62728", "runtime_fault": "#8c564b", "timeout": "#e6c619", "interrupted": "#7f7f7f",
}
STATUS_ORDER = list(STATUS_COLOURS)


def sort_key(v):
    """Numbers in order, then strings: the one ordering of parameter values."""
    return (0, v, "") if isinstance(v, (int, float)) else (1, 0, str(v))


def short_shape(key):
    """'B=2,H=8,S=512,D=64,causal=0,dtype=f16' -> 'B2 H8 S512 D64 c0 f16': shorter tick labels."""
    parts = []
    for item in key.split(","):
        name, _, value = item.partition("=")
        if name == "dtype":
            parts.append(value)
        elif name == "causal":
            parts.append("causal" if value == "1" else "")
        else:
            parts.append(f"{name}{value}")
    return " ".join(p for p in parts if p)


def _grid(plt, n, width=3.4, height=2.6, max_cols=4):
    cols = max(1, min(max_cols, n))
    rows = (n + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(width * cols, height * rows + 0.6), squeeze=False)
    flat = [a for r in axes for a in r]
    for ax in flat[n:]:
        ax.axis("off")
    return fig, flat[:n]


def _plain_log_labels(axis):
    """Tick labels on a log axis as plain numbers (0.6, 1, 2), not 6x10^-1; minor ticks labelled only
    where the axis spans few decades (matplotlib's thresholds), so they never crowd."""
    from matplotlib.ticker import LogFormatter

    class Plain(LogFormatter):
        def __call__(self, x, pos=None):
            return f"{x:g}" if super().__call__(x, pos) else ""
    axis.set_major_formatter(Plain())
    axis.set_minor_formatter(Plain(minor_thresholds=(1, 0.4)))


def _log_if_wide(ax, values, axis="y"):
    vals = [v for v in values if v and v > 0]
    if vals and max(vals) / min(vals) > 8:
        (ax.set_yscale if axis == "y" else ax.set_xscale)("log")
        _plain_log_labels(ax.yaxis if axis == "y" else ax.xaxis)


def plot_convergence(plt, series, counts, campaign, path):
    """One small panel per shape: best median so far (log) against evaluations."""
    from matplotlib.ticker import MaxNLocator
    shapes = sorted(series)
    fig, axes = _grid(plt, len(shapes))
    for ax, shape in zip(axes, shapes):
        pts = series[shape]
        ax.step([p[0] for p in pts], [p[2] for p in pts], where="post", color="#1f77b4")
        _log_if_wide(ax, [p[2] for p in pts])
        ok, total = counts.get(shape, (0, 0))
        ax.set_title(f"{short_shape(shape)}\nbest {pts[-1][2]:.2f} us, {ok} ok / {total} evals", fontsize=8)
        ax.set_xlabel("evaluations of this shape", fontsize=7)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # counts: no 1.2, 1.4 ticks
        ax.set_ylabel("best median (us)", fontsize=7)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3, which="both")
    fig.suptitle(f"campaign {campaign['id']}: {campaign['family']}, {campaign['strategy']} "
                 f"(best time so far per shape)", fontsize=10)
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    fig.savefig(path, dpi=100)
    plt.close(fig)


def plot_status(plt, counts, labels, path):
    """Horizontal stacked bars, one per campaign, a total at the end of each."""
    campaigns = sorted(counts, key=lambda c: (c is None, c or 0))
    statuses = [s for s in STATUS_ORDER if any(counts[c].get(s) for c in campaigns)]
    statuses += sorted({s for c in campaigns for s in counts[c]} - set(statuses))
    fig, ax = plt.subplots(figsize=(9, 1.2 + 0.28 * len(campaigns)))
    names = [labels.get(c, str(c)) for c in campaigns]
    left = [0] * len(campaigns)
    for s in statuses:
        vals = [counts[c].get(s, 0) for c in campaigns]
        ax.barh(names, vals, left=left, label=s, color=STATUS_COLOURS.get(s, "#17becf"))
        left = [a + b for a, b in zip(left, vals)]
    for y, total in enumerate(left):
        ax.text(total, y, f" {total}", va="center", fontsize=7)
    ax.invert_yaxis()
    ax.set_xscale("symlog", linthresh=10)
    ax.set_xlabel("evaluations (symmetric log scale)")
    ax.tick_params(axis="y", labelsize=7)
    ax.legend(fontsize=7, ncol=min(4, len(statuses)), loc="lower right")
    ax.set_title("Outcomes per campaign", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def plot_params(plt, family, shape, effects, path):
    """One panel per parameter: median time per value (log when values differ widely), counts on bars."""
    params = sorted(effects)
    fig, axes = _grid(plt, len(params), width=3.0, height=2.5)
    for ax, p in zip(axes, params):
        vals = sorted(effects[p], key=sort_key)
        times = [effects[p][v][0] for v in vals]
        bars = ax.bar([str(v) for v in vals], times, color="#1f77b4")
        _log_if_wide(ax, times)
        for b, v in zip(bars, vals):
            ax.annotate(f"n={effects[p][v][1]}", (b.get_x() + b.get_width() / 2, b.get_height()),
                        ha="center", va="bottom", fontsize=6)
        ax.margins(y=0.15)  # room for the n= labels above the tallest bar
        ax.set_title(p, fontsize=9)
        ax.set_ylabel("median time (us)", fontsize=7)
        ax.tick_params(labelsize=7)
        if len(vals) > 4:
            ax.tick_params(axis="x", rotation=45)
    fig.suptitle(f"{family}: median time per parameter value, ok evaluations at {short_shape(shape)}", fontsize=9)
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    fig.savefig(path, dpi=100)
    plt.close(fig)


def plot_baselines(plt, family, rows, path):
    """Per shape (one row each), the ratio baseline time / kforge time per backend on a log axis:
    right of 1 kforge is faster. The ratio is `kforge best`'s speedup. Stale winners are marked."""
    backends = sorted({b for r in rows for b in r["baselines"]})
    fig, ax = plt.subplots(figsize=(9, 1.4 + 0.32 * len(rows) * max(1, len(backends)) / 2))
    height = 0.8 / max(1, len(backends))
    colours = ["#1f77b4", "#ff7f0e", "#9467bd", "#8c564b", "#17becf"]
    ratios = []
    for i, backend in enumerate(backends):
        ys, xs = [], []
        for j, r in enumerate(rows):
            if backend in r["baselines"]:
                ys.append(j + i * height)
                xs.append(r["baselines"][backend]["speedup"])
        ratios += xs
        bars = ax.barh(ys, xs, height, label=backend, color=colours[i % len(colours)])
        for b, x, j in zip(bars, xs, [y for y in range(len(rows)) if backend in rows[y]["baselines"]]):
            if rows[j]["stale"]:
                b.set_hatch("//")
                b.set_alpha(0.5)
            ax.text(x, b.get_y() + b.get_height() / 2, f" {x:.2f}x", va="center", fontsize=6)
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.set_xscale("log")
    _plain_log_labels(ax.xaxis)
    lo = min(ratios + [1.0]) / 1.3
    hi = max(ratios + [1.0]) * 1.6
    ax.set_xlim(lo, hi)
    ax.set_yticks([j + 0.4 - height / 2 for j in range(len(rows))])
    ax.set_yticklabels([short_shape(r["shape_key"]) + (" (stale)" if r["stale"] else "") for r in rows], fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("baseline time / kforge time (log; right of 1: kforge faster)  [= kforge best's speedup]")
    ax.legend(fontsize=7, loc="lower right")
    ax.set_title(f"{family}: kforge's best against the baselines, per shape"
                 + ("; hatched: stale winner" if any(r["stale"] for r in rows) else ""), fontsize=10)
    ax.grid(alpha=0.3, axis="x", which="both")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


