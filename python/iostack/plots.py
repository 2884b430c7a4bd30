"""Plots of iostack's results with matplotlib (``iostack.plot`` is this module).

Every function takes what iostack returns (DataFrames of :func:`iostack.simulate`, an
:class:`iostack.Analysis`, result dicts of :func:`iostack.run`, or the JSON the commands print)
and draws on ``ax`` (or a new figure); each axis is labelled with its unit, and axes that span
decades are logarithmic. The ``write_*`` functions save PNG files and return their paths; they
back ``--plot DIR`` of ``iostack sim``, ``iostack run`` and ``iostack analyze``.

- :func:`mrc`: miss-ratio curves of several policies and traces, request and byte miss ratio,
  the footprint marked (:func:`write_sim`: ``mrc.png``).
- Analysis (:func:`write_analysis`): ``mrc.png`` (LRU, not past the footprint), ``affinity.png``
  (stack and block affinity over time; a partial last interval shown apart), ``distances.png``
  (log2 histograms on log axes), ``popularity.png`` (rank-frequency and Zipf fit),
  ``timeline.png`` (request rate and footprint over time), ``distributions.png`` (CDFs of
  request size, inter-arrival and reuse time), ``heatmap.png`` (stack distance over time),
  ``processes.png``.
- Timed runs (:func:`write_run`): ``sequences.png`` (CDFs of disk sequence and request sizes,
  as DULO's Figure 4), ``response.png`` (response-time CDF), ``affinity.png`` (stack and
  block affinity per layer boundary), ``processes.png``, with several runs ``stacks.png``
  (I/O time and hit ratio across stacks), and with ``interval`` ``series.png`` (hit ratio, I/O
  time and response time over time, :func:`series`), and with ``ada`` ``ada.png`` (ADA's
  activation timeline, :func:`ada_timeline`; ``ada-N.png`` for the N-th of several).
- Miss-ratio runs with ``interval`` add ``series.png`` (hit ratio over time) to :func:`write_sim`.

``plot_repro(report, outdir)`` draws the figures of an ``iostack repro`` report (its
``figures``: the paper's figure in the paper's form, iostack's series as solid lines or filled
bars, the paper's values, where the paper gives numbers, as hollow markers on dashed lines or
hatched bars), one ``NAME-FIGURE.png`` each.
"""

from __future__ import annotations

import math
import pathlib
from typing import Iterable, List, Optional, Sequence, Union

import matplotlib

matplotlib.use("Agg")  # files only; never needs a display
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402
import numpy as np  # noqa: E402

from iostack.analysis import Analysis, from_report  # noqa: E402

PathLike = Union[str, pathlib.Path]


def _ax(ax, size=(7, 4.5)):
    if ax is not None:
        return ax.figure, ax
    return plt.subplots(figsize=size)


def _save(fig, path: PathLike) -> pathlib.Path:
    path = pathlib.Path(path)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _spans_decades(values, factor=30.0) -> bool:
    v = np.asarray([x for x in values if x is not None and x > 0], dtype=float)
    return v.size > 1 and v.max() / v.min() >= factor


def _bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"


def _seconds(ns: float) -> str:
    for unit, f in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if ns >= f:
            return f"{ns / f:.3g} {unit}"
    return f"{ns:.0f} ns"


def _analysis(a) -> Analysis:
    return a if isinstance(a, Analysis) else from_report(a)


# --- miss-ratio curves -------------------------------------------------------------------------


def mrc(df, ax=None, ratio: str = "miss_ratio", footprint: Optional[dict] = None, title: str = ""):
    """Miss ratio against cache size, one line per (trace, policy) of ``df`` (rows of
    :func:`iostack.simulate` or ``iostack sim --json``). ``ratio``: ``miss_ratio`` (requests),
    ``byte_miss_ratio`` or ``block_miss_ratio``. ``footprint`` maps trace to its footprint in the
    cache's unit, drawn as a dotted vertical line."""
    import pandas as pd

    df = pd.DataFrame(df)
    fig, ax = _ax(ax)
    traces = list(dict.fromkeys(df["trace"])) if "trace" in df else [""]
    many = len(traces) > 1
    styles = ["-", "--", ":", "-."]
    for ti, t in enumerate(traces):
        sub = df[df["trace"] == t] if "trace" in df else df
        for pi, (pol, g) in enumerate(sub.groupby("policy", sort=False)):
            g = g.sort_values("cache_size")
            label = f"{pol} ({pathlib.Path(str(t)).name})" if many else str(pol)
            ax.plot(g["cache_size"], g[ratio], marker="o", ms=3, ls=styles[ti % len(styles)], color=f"C{pi % 10}", label=label)
        if footprint and t in footprint and footprint[t]:
            ax.axvline(footprint[t], color="0.4", ls=":", lw=1)
            ax.annotate(f"footprint {footprint[t]:,}", (footprint[t], 0.98), xycoords=("data", "axes fraction"),
                        rotation=90, va="top", ha="right", fontsize=7, color="0.3")
    if _spans_decades(df["cache_size"]):
        ax.set_xscale("log")
    unit = df["cache_unit"].iloc[0] if "cache_unit" in df and len(df) else "objects"
    if unit == "blocks" and "page_size" in df:
        unit = f"{int(df['page_size'].iloc[0])}-byte blocks"
    ax.set_xlabel(f"cache size ({unit})")
    names = {"miss_ratio": "request miss ratio", "byte_miss_ratio": "byte miss ratio", "block_miss_ratio": "block miss ratio"}
    ax.set_ylabel(names.get(ratio, ratio))
    ax.set_ylim(0, 1.02)
    ax.grid(True, alpha=0.3, which="both")
    ax.legend(fontsize=7)
    if title:
        ax.set_title(title)
    return ax


def write_sim(df, outdir: PathLike, footprint: Optional[dict] = None) -> List[pathlib.Path]:
    """``mrc.png``: request and byte miss-ratio curves side by side (and block miss ratio in
    block mode) for every policy and trace of ``df``."""
    import pandas as pd

    df = pd.DataFrame(df)
    out = pathlib.Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    ratios = ["miss_ratio", "byte_miss_ratio"] + (["block_miss_ratio"] if "block_miss_ratio" in df and df["block_miss_ratio"].notna().any() else [])
    fig, axes = plt.subplots(1, len(ratios), figsize=(5.2 * len(ratios), 4.3))
    for ax, r in zip(np.atleast_1d(axes), ratios):
        mrc(df, ax=ax, ratio=r, footprint=footprint)
    fig.suptitle("Miss-ratio curves")
    paths = [_save(fig, out / "mrc.png")]
    if "series" in df.columns and df["series"].notna().any():
        rows = [r for r in df.to_dict("records") if isinstance(r.get("series"), (dict, str))]
        paths += write_series(rows, out)
    return paths


# --- analysis ----------------------------------------------------------------------------------


def analysis_mrc(a, ax=None):
    """The one-pass LRU miss-ratio curve of an analysis, per block and per request, up to the
    footprint (beyond it only first references miss and the curve is flat), footprint marked."""
    a = _analysis(a)
    r = a.report
    fig, ax = _ax(ax)
    m = a.mrc
    fp = r["footprint_units"]
    shown = m[m["cache_size"] <= fp] if fp else m
    unit = f"{r['page_size']}-byte blocks" if r.get("page_size") else f"{r['mode']}s"
    block = "block_miss_ratio" in m
    ax.plot(shown["cache_size"], shown["miss_ratio"], marker="o", ms=3, label=f"per {'block' if block else r['mode']} (block_miss_ratio)" if block else "LRU")
    if block:
        ax.plot(shown["cache_size"], shown["request_miss_ratio"], marker="s", ms=3, label="per request (request_miss_ratio)")
    if fp:
        ax.axvline(fp, color="0.4", ls=":", lw=1)
        label = f"footprint {fp:,}" + (f" = {_bytes(fp * r['page_size'])}" if r.get("page_size") else "")
        ax.annotate(label, (fp, 0.98), xycoords=("data", "axes fraction"), rotation=90, va="top", ha="right", fontsize=7)
    if _spans_decades(shown["cache_size"]):
        ax.set_xscale("log", base=2)
    ax.set_xlabel(f"cache size ({unit})")
    ax.set_ylabel("LRU miss ratio")
    ax.set_ylim(0, 1.02)
    ax.grid(True, alpha=0.3, which="both")
    ax.legend(fontsize=8)
    ax.set_title(f"LRU miss-ratio curve: {pathlib.Path(str(r.get('trace', ''))).name}")
    return ax


def _partial_last(counts) -> bool:
    """Whether the last interval is partial: fewer than half the median interval's count."""
    c = np.asarray(counts, dtype=float)
    return c.size >= 3 and c[-1] < 0.5 * np.median(c[:-1])


def affinity(a, ax=None):
    """Stack and block affinity per interval (Fox, Lojpur and Wang, Figures 6.1 and 6.2), with
    the working set; a partial last interval (few references, so a noisy mean) is drawn as an
    open marker apart from the lines."""
    a = _analysis(a)
    s = a.series
    fig, ax = _ax(ax, (8, 4.5))
    unit = s.attrs.get("unit", "requests")
    x = (s["start"] - (s["start"].iloc[0] if len(s) else 0)) / 1e9 if unit == "ns" else s["start"]
    n = len(s) - 1 if _partial_last(s["references"]) else len(s)
    ax.plot(x[:n], s["stack_affinity"][:n], label="stack affinity (temporal)")
    ax.plot(x[:n], s["block_affinity"][:n], label="block affinity (spatial)")
    if n < len(s):
        ax.plot(x.iloc[-1:], s["stack_affinity"].iloc[-1:], "o", mfc="none", color="C0", label="partial last interval")
        ax.plot(x.iloc[-1:], s["block_affinity"].iloc[-1:], "o", mfc="none", color="C1")
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("time (s)" if unit == "ns" else "request")
    ax.set_ylabel("affinity (mean per interval)")
    ax.grid(True, alpha=0.3)
    ws = ax.twinx()
    ws.plot(x, s["working_set"], color="0.6", lw=0.8, ls="--", label="working set")
    unit_name = f"{a.report['page_size']}-byte blocks" if a.report.get("page_size") else f"{a.report['mode']}s"
    ws.set_ylabel(f"working set ({unit_name} per interval)")
    lines = ax.get_lines() + ws.get_lines()
    ax.legend(lines, [line.get_label() for line in lines], loc="lower right", fontsize=7)
    ax.set_title(f"Affinity over time: {pathlib.Path(str(a.report.get('trace', ''))).name}")
    return ax


def _log2_hist(ax, buckets, first: int = 0, xlabel: str = "", ylabel: str = "references"):
    """A log2-bucket histogram as bars on log-log axes: each bar spans [lo, hi); distance 0 is
    drawn at 0.5 (log axes have no 0) and first references as a separate bar past the end."""
    los = [b["lo"] for b in buckets]
    his = [b["hi"] for b in buckets]
    counts = [b["count"] for b in buckets]
    left = [lo if lo > 0 else 0.5 for lo in los]
    width = [hi - lo if lo > 0 else 0.5 for lo, hi in zip(los, his)]
    ax.bar(left, counts, width=width, align="edge", color="C0", edgecolor="white", lw=0.3)
    top = max(his, default=1)
    if first:
        ax.bar([top * 2], [first], width=[top * 2], align="edge", color="C3", label=f"first references ({first:,})")
        ax.legend(fontsize=7)
    ax.set_xscale("log", base=2)
    # Distance 0 sits at 1/2 on the log axis: label it 0.
    base = matplotlib.ticker.LogFormatterMathtext(base=2)
    ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, pos: "0" if v == 0.5 else base(v, pos)))
    if counts and max(counts + [first]) > 0:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3, which="major")


def distances(a, axes=None):
    """Stack, block and reuse distance histograms (log2 buckets) on log-log axes."""
    a = _analysis(a)
    loc = a.report["locality"]
    if axes is None:
        fig, axes = plt.subplots(1, 3, figsize=(13, 4))
    unit = f"{a.report['page_size']}-byte blocks" if a.report.get("page_size") else f"{a.report['mode']}s"
    xl = {"stack_distance": f"stack distance (distinct {unit})", "block_distance": f"block distance ({unit})",
          "reuse_distance": "reuse distance (references)"}
    for ax, kind in zip(axes, ["stack_distance", "block_distance", "reuse_distance"]):
        _log2_hist(ax, loc[kind]["histogram"], loc[kind]["first_references"], xl[kind])
        ax.set_title(kind.replace("_", " "))
    return axes


def popularity(a, ax=None):
    """Rank-frequency on log-log axes with the fitted Zipf line."""
    a = _analysis(a)
    p = a.popularity
    pop = a.report.get("popularity", {})
    fig, ax = _ax(ax)
    ax.loglog(p["rank"], p["count"], "o", ms=3, label="references per unit")
    alpha = pop.get("zipf_alpha")
    if alpha is not None and len(p):
        x = p["rank"].to_numpy(dtype=float)
        y = p["count"].to_numpy(dtype=float)
        c = np.mean(np.log10(y) + alpha * np.log10(x))
        ax.loglog(x, 10 ** (c - alpha * np.log10(x)), "-", color="C3", label=f"Zipf fit: alpha = {alpha:.3f} (r² {pop.get('zipf_r2', float('nan')):.3f})")
    unit = "block" if a.report.get("page_size") else a.report["mode"]
    ax.set_xlabel(f"popularity rank ({unit}s, 1 = most referenced)")
    ax.set_ylabel("references")
    ohw = pop.get("one_hit_wonder_ratio")
    ax.set_title(f"Popularity{'' if ohw is None else f' (one-hit wonders: {ohw:.1%} of units)'}")
    ax.grid(True, alpha=0.3, which="both")
    ax.legend(fontsize=8)
    return ax


def timeline(a, axes=None):
    """Request rate (reads and writes) and footprint over time; intervals by request count when
    the trace has no timestamps."""
    a = _analysis(a)
    t = a.timeline
    by_time = len(t) > 1 or (len(t) == 1 and t["span_s"].iloc[0] > 0)
    if axes is None:
        fig, axes = plt.subplots(2, 1, figsize=(8, 6), sharex=True)
    if by_time:
        x = t["start_s"] + t["span_s"] / 2
        span = t["span_s"].where(t["span_s"] > 0)
        axes[0].plot(x, t["reads"] / span, label="reads")
        axes[0].plot(x, t["writes"] / span, label="writes")
        axes[0].plot(x, t["request_rate"], color="0.3", lw=0.8, label="all")
        axes[0].set_ylabel("requests per second")
        axes[1].set_xlabel("time since the first request (s)")
    else:
        t = a.timeline_by_request
        x = t["start"] + t["span"] / 2
        axes[0].plot(x, t["reads"], label="reads")
        axes[0].plot(x, t["writes"], label="writes")
        axes[0].set_ylabel(f"requests per interval of {t.attrs.get('width')}")
        axes[1].set_xlabel("request")
    axes[0].legend(fontsize=8)
    axes[0].grid(True, alpha=0.3)
    axes[0].set_title(f"Activity over time: {pathlib.Path(str(a.report.get('trace', ''))).name}")
    ps = a.report.get("page_size")
    axes[1].plot(x, t["footprint_units"] * (ps or 1) / (2 ** 20 if ps else 1), color="C2")
    axes[1].set_ylabel("footprint (MiB)" if ps else f"footprint ({a.report['mode']}s)")
    axes[1].grid(True, alpha=0.3)
    return axes


def _cdf(ax, buckets, label, scale=1.0):
    """A CDF from log2 buckets: the fraction at or below each bucket's upper bound."""
    if not buckets:
        return
    total = sum(b["count"] for b in buckets)
    xs = [max(b["hi"] - 1, 0.5) * scale for b in buckets]
    ys = np.cumsum([b["count"] for b in buckets]) / total
    ax.step([buckets[0]["lo"] * scale or 0.5 * scale] + xs, [0.0] + list(ys), where="post", label=label)


def distributions(a, axes=None):
    """CDFs of request size, inter-arrival time and reuse time (from their log2 histograms)."""
    a = _analysis(a)
    r = a.report
    if axes is None:
        fig, axes = plt.subplots(1, 3, figsize=(13, 4))
    _cdf(axes[0], r["request_size"]["histogram"], "request size")
    axes[0].set_xlabel("request size (bytes)")
    ia, rt = r.get("inter_arrival", {}), r.get("reuse_time", {})
    _cdf(axes[1], ia.get("histogram", []), "inter-arrival", 1e-6)
    axes[1].set_xlabel("inter-arrival time (ms)")
    _cdf(axes[2], rt.get("histogram", []), "reuse time", 1e-3)
    axes[2].set_xlabel("reuse time (µs)")
    titles = [f"request size (median {_bytes(r['request_size']['median'] or 0)})",
              f"inter-arrival (median {_seconds(ia.get('median_ns') or 0)})",
              f"reuse time (median {_seconds(rt.get('median_ns') or 0)})"]
    for ax, title in zip(axes, titles):
        ax.set_xscale("log")
        ax.set_ylim(0, 1.02)
        ax.set_ylabel("fraction at or below")
        ax.set_title(title)
        ax.grid(True, alpha=0.3, which="both")
    return axes


def heatmap(a, ax=None):
    """Reuse-distance heatmap over time (as PyMimircache draws it): for each time interval
    (column), the fraction of its requests at each log2 bucket of LRU stack distance (row),
    first references in the top row."""
    a = _analysis(a)
    t = a.timeline
    hists = t.attrs.get("stack_distance_histograms", [])
    fig, ax = _ax(ax, (9, 4.8))
    top = max((b["lo"].bit_length() for h in hists for b in h), default=0)
    grid = np.zeros((top + 2, max(len(hists), 1)))
    for j, h in enumerate(hists):
        for b in h:
            grid[b["lo"].bit_length(), j] += b["count"]
        grid[top + 1, j] = t["first_references"].iloc[j]
    col = grid.sum(axis=0)
    frac = np.divide(grid, col, out=np.zeros_like(grid), where=col > 0)
    x_end = float(t["start_s"].iloc[-1] + t["span_s"].iloc[-1]) if len(t) else 1.0
    im = ax.imshow(np.ma.masked_where(frac == 0, frac), aspect="auto", origin="lower", cmap="viridis",
                   extent=(0, x_end, -0.5, top + 1.5), interpolation="nearest")
    fig.colorbar(im, ax=ax, label="fraction of the interval's requests")
    ticks = list(range(0, top + 1, max(1, (top + 1) // 8))) + [top + 1]
    ax.set_yticks(ticks)
    ax.set_yticklabels(["0" if k == 0 else f"2^{k - 1}" for k in ticks[:-1]] + ["first"])
    unit = f"{a.report['page_size']}-byte blocks" if a.report.get("page_size") else f"{a.report['mode']}s"
    ax.set_ylabel(f"stack (reuse) distance, log2 bucket ({unit})")
    ax.set_xlabel("time since the first request (s)")
    ax.set_title(f"Reuse distance over time: {pathlib.Path(str(a.report.get('trace', ''))).name}")
    return ax


def processes(a, ax=None, top: int = 20):
    """Requests of the busiest processes, reads and writes stacked (``a``: an analysis, or its
    ``processes`` DataFrame)."""
    p = _analysis(a).processes if not hasattr(a, "columns") else a
    p = p.sort_values("requests", ascending=False).head(top)
    fig, ax = _ax(ax, (max(5, 0.45 * len(p) + 2), 4))
    labels = ["others" if pid is None or (isinstance(pid, float) and math.isnan(pid)) or str(pid) == "<NA>" else str(pid) for pid in p["pid"]]
    ax.bar(labels, p["reads"], label="reads")
    ax.bar(labels, p["writes"], bottom=p["reads"], label="writes")
    ax.set_xlabel("process id")
    ax.set_ylabel("requests")
    if _spans_decades(p["requests"], 100):
        ax.set_yscale("log")
    ax.legend(fontsize=8)
    ax.set_title(f"Requests per process (top {len(p)})")
    ax.grid(True, alpha=0.3, axis="y")
    return ax


def _figure(draw, size, nrows: int = 1, ncols: int = 1, **subplots):
    """A new figure of ``nrows`` x ``ncols`` axes drawn by ``draw(ax_or_axes)``."""
    fig, axes = plt.subplots(nrows, ncols, figsize=size, **subplots)
    draw(axes)
    return fig


def _write_all(outdir: PathLike, figures) -> List[pathlib.Path]:
    """Saves each (name, draw, size, subplot options) of ``figures`` as ``outdir/name.png``."""
    out = pathlib.Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    return [_save(_figure(draw, size, **opts), out / f"{name}.png") for name, draw, size, opts in figures]


def write_analysis(a, outdir: PathLike) -> List[pathlib.Path]:
    """Writes every analysis plot into ``outdir`` (created if needed); returns the paths."""
    a = _analysis(a)

    def dist(axes):
        distances(a, axes)
        axes[0].figure.suptitle("Distance histograms (log2 buckets)")

    figures = [
        ("mrc", lambda ax: analysis_mrc(a, ax), (7, 4.5), {}),
        ("affinity", lambda ax: affinity(a, ax), (8, 4.5), {}),
        ("distances", dist, (13, 4), {"ncols": 3}),
    ]
    if "popularity" in a.report:
        figures += [
            ("popularity", lambda ax: popularity(a, ax), (7, 4.5), {}),
            ("timeline", lambda axes: timeline(a, axes), (8, 6), {"nrows": 2, "sharex": True}),
            ("distributions", lambda axes: distributions(a, axes), (13, 4), {"ncols": 3}),
            ("heatmap", lambda ax: heatmap(a, ax), (9, 4.8), {}),
            ("processes", lambda ax: processes(a, ax), (7, 4), {}),
        ]
    return _write_all(outdir, figures)


#: The name ``iostack analyze --plot`` used before; kept for callers of the old function.
plot_analysis = write_analysis


# --- timed runs --------------------------------------------------------------------------------


def _label(r: dict) -> str:
    c = r.get("config", {})
    return f"{c.get('policy')}+{c.get('prefetch')}+{c.get('sched')}"


def _labels(results: Sequence[dict]) -> List[str]:
    labels = [_label(r) for r in results]
    if len(set(labels)) < len(labels):
        labels = [f"{lab} #{i + 1}" for i, lab in enumerate(labels)]
    return labels


def sequence_cdf(results: Sequence[dict], ax=None, key: str = "sequences"):
    """CDF of disk sequence sizes (``key="sequences"``: runs of consecutive blocks the device
    served back to back) or device request sizes (``key="sizes"``), in blocks, one line per run:
    the form of DULO's Figure 4."""
    fig, ax = _ax(ax)
    for r, lab in zip(results, _labels(results)):
        h = {int(k): v for k, v in r["device"][key].items()}
        if not h:
            continue
        xs = sorted(h)
        ys = np.cumsum([h[x] for x in xs]) / sum(h.values())
        ax.step(xs, ys, where="post", label=lab)
    ax.set_xscale("log", base=2)
    ax.set_ylim(0, 1.02)
    page = results[0]["config"].get("page_size", 4096) if results else 4096
    what = "disk sequence size" if key == "sequences" else "device request size"
    ax.set_xlabel(f"{what} ({page}-byte blocks)")
    ax.set_ylabel("fraction of " + ("sequences" if key == "sequences" else "requests") + " at or below")
    ax.grid(True, alpha=0.3, which="both")
    ax.legend(fontsize=7)
    return ax


def response(results: Sequence[dict], ax=None):
    """The response-time CDF of each run (the DULO paper's Figure 4 form), on a log time axis,
    drawn from the result's ``response.histogram`` (32 buckets per power of two: each step is a
    bucket's lowest value, so the curve is within about 3% of the true CDF in time); the p99 is
    marked. Results without a histogram (older ones) show their percentiles as points."""
    fig, ax = _ax(ax)
    qs = [("p50_ns", 0.5), ("p90_ns", 0.9), ("p99_ns", 0.99), ("max_ns", 1.0)]
    for i, (r, lab) in enumerate(zip(results, _labels(results))):
        resp = r["response"]
        label = f"{lab} (mean {resp['mean_ns'] / 1e6:.2f} ms)"
        hist = resp.get("histogram")
        if hist:
            lows = np.array([max(lo, 1) for lo, _ in hist], dtype=float) / 1e6
            ys = np.cumsum([n for _, n in hist]) / resp["count"]
            # A step up at each bucket's lowest value; flat from the last to the maximum.
            xs = np.append(lows, max(resp["max_ns"], 1) / 1e6)
            ax.step(xs, np.append(ys, 1.0), where="post", color=f"C{i}", label=label)
            ax.plot([max(resp["p99_ns"], 1) / 1e6], [0.99], "v", color=f"C{i}", ms=5)
        else:
            xs = [max(resp[k], 1) / 1e6 for k, _ in qs]
            ax.plot(xs, [q for _, q in qs], "o-", color=f"C{i}", label=label)
    ax.set_xscale("log")
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("response time (ms); 0 drawn at 1 ns; ▼ p99")
    ax.set_ylabel("fraction of requests at or below")
    ax.grid(True, alpha=0.3, which="both")
    ax.legend(fontsize=7)
    return ax


response_cdf = response


def _series_frame(data):
    """A per-interval table (:func:`iostack.series`) from one, or the results that carry it."""
    import pandas as pd

    if isinstance(data, pd.DataFrame) and "start" in data.columns and "unit" in data.columns:
        return data
    from iostack.intervals import series as series_table

    if isinstance(data, dict):
        data = [data]
    return series_table(data)


def series(data, axes=None):
    """Hit ratio over time, one line per run, from a per-interval table (what ``simulate`` and
    ``run`` return with ``interval``, or :func:`iostack.series`) or results carrying a series.
    Timed runs add the I/O time (device busy time per interval, as a share of the interval) and
    the response time (p50 solid, p99 dashed, log axis) of the requests completing in each
    interval, all against virtual time. Miss-ratio runs are drawn against trace time from the
    first interval, or against the request index with request-count intervals."""
    df = _series_frame(data)
    timed = "device_busy_ns" in df.columns
    if axes is None:
        fig, axes = plt.subplots(1, 3 if timed else 1, figsize=(15, 4) if timed else (7.5, 4.3), squeeze=False)
        axes = list(axes[0])
    lead = [c for c in df.columns[: list(df.columns).index("unit")] if c not in ("run", "cache_size")]
    varying = [k for k in lead if df[k].astype(str).nunique() > 1]
    groups = list(df.groupby("run", sort=False)) if "run" in df.columns else [(0, df)]
    if timed:
        xcol, scale = "start_ns", 1e9
        span = (df["end_ns"].max()) / 1e9
    elif (df["unit"] == "ns").all():
        xcol, scale = "start", 1e9
        span = (df["start"].max() + df["width"].iloc[0] - df["start"].min()) / 1e9
    else:
        xcol, scale, span = "start", None, None
    unit_s = "s"
    if span is not None and span > 7200:
        scale, unit_s = scale * 3600, "h"
    elif span is not None and span > 300:
        scale, unit_s = scale * 60, "min"
    x0 = 0 if timed or scale is None else df[xcol].min()

    def steps(ax, g, y, **kw):
        # Each interval's value from its start to its end (the next one's start, or its own end).
        if timed:
            end = g["end_ns"].iloc[-1]
        elif scale is None:
            end = g["start"].iloc[-1] + g["requests"].iloc[-1]
        else:
            end = g["start"].iloc[-1] + g["width"].iloc[-1]
        xs = np.append(g[xcol].to_numpy(dtype=float), float(end)) - x0
        xs = xs / scale if scale else xs
        ax.step(xs, np.append(np.asarray(y, dtype=float), np.nan if len(y) == 0 else float(np.asarray(y)[-1])), where="post", **kw)

    for i, (_, g) in enumerate(groups):
        lab = ", ".join(str(g[k].iloc[0]) for k in varying) or "run"
        color = f"C{i % 10}"
        steps(axes[0], g, g["hit_ratio"], color=color, label=lab)
        if timed:
            steps(axes[1], g, g["device_busy_ns"] / 1e6, color=color, label=lab)
            for col, style in (("response.p50_ns", "-"), ("response.p99_ns", "--")):
                # No response (nothing completed), or 0 (hits), is not drawn on the log axis.
                y = g[col].where((g["response.count"] > 0) & (g[col] > 0)) / 1e6
                steps(axes[2], g, y, linestyle=style, color=color, label=f"{lab} {col.split('.')[1][:3]}")
    if scale is None:
        xlabel = "request index (start of interval)"
    elif timed:
        xlabel = f"virtual time ({unit_s})"
    else:
        xlabel = f"trace time from the first interval ({unit_s})"
    w = df["width"].iloc[0]
    every = f"{w / 1e9:g} s" if df["unit"].iloc[0] == "ns" else f"{int(w)} requests"
    axes[0].set_ylabel("hit ratio" + (" (block references)" if timed else " (requests)"))
    axes[0].set_ylim(0, 1.02)
    axes[0].set_title(f"Hit ratio per interval of {every}")
    if timed:
        axes[1].set_ylabel("device busy time (ms)")
        axes[1].set_title("I/O time (service of requests dispatched)")
        axes[2].set_yscale("log")
        axes[2].set_ylabel("response time (ms), p50 — p99 --; 0 not drawn")
        axes[2].set_title("Response time of requests completing")
    for ax in axes:
        ax.set_xlabel(xlabel)
        ax.grid(True, alpha=0.3, which="both")
        ax.legend(fontsize=7)
    return axes


def write_series(data, outdir: PathLike, name: str = "series.png") -> List[pathlib.Path]:
    """Writes :func:`series` of ``data`` to ``outdir/name``."""
    out = pathlib.Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    axes = series(data)
    return [_save(axes[0].figure, out / name)]


BOUNDARIES = ("front", "cache", "sched", "device")


def boundary_affinity(results: Sequence[dict], axes=None):
    """Mean stack (temporal) and block (spatial) affinity at each layer boundary, one bar group
    per run: how the page cache, prefetcher and scheduler change locality."""
    if axes is None:
        fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    labels = _labels(results)
    w = 0.8 / max(len(results), 1)
    for i, (r, lab) in enumerate(zip(results, labels)):
        loc = r.get("locality") or {}
        for ax, kind in zip(axes, ("stack_affinity", "block_affinity")):
            vals = [((loc.get(b) or {}).get(kind) or {}).get("mean") for b in BOUNDARIES]
            ax.bar(np.arange(4) + i * w, [np.nan if v is None else v for v in vals], width=w, label=lab)
    for ax, kind in zip(axes, ("stack affinity (temporal)", "block affinity (spatial)")):
        ax.set_xticks(np.arange(4) + w * (len(results) - 1) / 2)
        ax.set_xticklabels(["front end", "after the cache", "after the scheduler", "device"], fontsize=8)
        ax.set_ylim(0, 1.02)
        ax.set_title(f"{kind}, mean per boundary")
        ax.grid(True, alpha=0.3, axis="y")
    axes[0].set_ylabel("affinity (1 / log10(10 + distance))")
    axes[0].legend(fontsize=7)
    return axes


def stacks(results: Sequence[dict], axes=None):
    """I/O time (elapsed and device busy) and hit ratio across stacks."""
    if axes is None:
        fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    labels = _labels(results)
    x = np.arange(len(results))
    axes[0].bar(x - 0.2, [r["elapsed_ns"] / 1e9 for r in results], width=0.4, label="elapsed")
    axes[0].bar(x + 0.2, [r["device_busy_ns"] / 1e9 for r in results], width=0.4, label="device busy")
    axes[0].set_ylabel("time (s)")
    axes[0].legend(fontsize=8)
    axes[1].bar(x, [r["hit_ratio"] for r in results], color="C2")
    axes[1].set_ylabel("page-cache hit ratio")
    axes[1].set_ylim(0, 1.02)
    for ax, title in zip(axes, ("I/O time", "hit ratio")):
        ax.set_xticks(x)
        ax.set_xticklabels(labels, rotation=20, ha="right", fontsize=8)
        ax.set_title(title)
        ax.grid(True, alpha=0.3, axis="y")
    return axes


def run_processes(results: Sequence[dict], ax=None):
    """Mean and maximum response time per process of each run."""
    fig, ax = _ax(ax)
    labels = _labels(results)
    w = 0.8 / max(len(results), 1)
    for i, (r, lab) in enumerate(zip(results, labels)):
        ps = r.get("processes", [])
        x = np.arange(len(ps)) + i * w
        ax.bar(x, [p["mean_response_ns"] / 1e6 for p in ps], width=w, label=f"{lab}: mean")
        ax.plot(x, [p["max_response_ns"] / 1e6 for p in ps], "v", color="k", ms=4)
    pids = [p["pid"] for p in (results[0].get("processes", []) if results else [])]
    ax.set_xticks(np.arange(len(pids)) + w * (len(results) - 1) / 2)
    ax.set_xticklabels([str(p) for p in pids], fontsize=8)
    ax.set_xlabel("process id (▼ = maximum)")
    ax.set_ylabel("response time (ms)")
    ax.legend(fontsize=7)
    ax.grid(True, alpha=0.3, axis="y")
    ax.set_title("Response time per process")
    return ax


def _ada_state_line(ada: dict):
    """Vertices of ADA's state as a step line: x in read requests seen, y 1 (active) or 0
    (inactive), from read 0 (ADA starts active) to the last read, a vertical edge at each switch."""
    state = 1
    xs, ys = [0], [state]
    for s in ada.get("switches", []):
        new = 1 if s["state"] == "active" else 0
        xs += [s["request"], s["request"]]
        ys += [state, new]
        state = new
    xs.append(max(ada.get("reads", 0), xs[-1]))
    ys.append(state)
    return xs, ys


#: Figure size and subplot layout of :func:`ada_timeline` (state above, window sums below).
ADA_SIZE = (9, 5.5)
ADA_SUBPLOTS = {"nrows": 2, "sharex": True, "gridspec_kw": {"height_ratios": [1, 2.2]}}


def ada_timeline(result: dict, axes=None, label: str = ""):
    """ADA's activation timeline of one :func:`iostack.run` result with ``ada``: REDCAP's state
    (active or inactive) against the read requests seen (top), and at each check the two sides'
    sums of time per block over the window, with REDCAP and without (bottom, same axis); REDCAP
    stays or turns active where its sum is strictly smaller. Switches are dotted lines on both."""
    ada = result.get("ada")
    if not ada:
        raise ValueError("the result has no `ada` (run with --redcap on --ada ...)")
    if axes is None:
        fig, axes = plt.subplots(figsize=ADA_SIZE, **ADA_SUBPLOTS)
    top, bottom = axes
    xs, ys = _ada_state_line(ada)
    top.plot(xs, ys, color="C0", lw=1.8, label="REDCAP state", gid="ada-state")
    top.fill_between(xs, ys, step=None, color="C0", alpha=0.15)
    top.set_yticks([0, 1])
    top.set_yticklabels(["inactive", "active"])
    top.set_ylim(-0.15, 1.15)
    share = ada.get("activation_share")
    top.set_title((f"{label}: " if label else "") + f"ADA (window {ada.get('window')}, {ada.get('cadence')}): "
                  f"{len(ada.get('switches', []))} switches"
                  + (f", REDCAP active for {share:.1%} of the reads" if share is not None else ""), fontsize=10)
    w = ada.get("windows", [])
    x = [c["request"] for c in w]
    redcap = [c["redcap_ms"] for c in w]
    normal = [c["normal_ms"] for c in w]
    bottom.plot(x, redcap, "o-", ms=3, color="C1", label="with REDCAP (Σ T/B)")
    bottom.plot(x, normal, "s-", ms=3, color="C2", label="without REDCAP (Σ T/B)")
    positive = [v for v in redcap + normal if v and v > 0]
    if positive and _spans_decades(positive):
        bottom.set_yscale("log")
    bottom.set_ylabel("sum over the window (ms per block)")
    bottom.set_xlabel("read requests seen")
    for ax in (top, bottom):
        for s in ada.get("switches", []):
            ax.axvline(s["request"], color="0.4", ls=":", lw=1)
        ax.grid(True, alpha=0.3)
    bottom.legend(fontsize=8)
    bottom.set_xlim(0, max(xs[-1], 1))
    return axes


def write_run(results: Union[dict, Iterable[dict]], outdir: PathLike) -> List[pathlib.Path]:
    """Writes the plots of one or more :func:`iostack.run` results into ``outdir``."""
    results = [results] if isinstance(results, dict) else list(results)

    def sizes(axes):
        sequence_cdf(results, axes[0], "sequences")
        axes[0].set_title("disk sequence sizes")
        sequence_cdf(results, axes[1], "sizes")
        axes[1].set_title("device request sizes")

    def resp(ax):
        response(results, ax)
        ax.set_title("Response time")

    figures = [("sequences", sizes, (11, 4), {"ncols": 2}), ("response", resp, (7, 4.5), {})]
    if any(r.get("locality") for r in results):
        figures.append(("affinity", lambda axes: boundary_affinity(results, axes), (11, 4), {"ncols": 2, "sharey": True}))
    figures.append(("processes", lambda ax: run_processes(results, ax), (7, 4), {}))
    if len(results) > 1:
        figures.append(("stacks", lambda axes: stacks(results, axes), (11, 4), {"ncols": 2}))
    if any(r.get("series") for r in results):
        with_series = [r for r in results if r.get("series")]
        figures.append(("series", lambda axes: series(with_series, list(axes)), (15, 4), {"ncols": 3}))
    with_ada = [(r, lab) for r, lab in zip(results, _labels(results)) if r.get("ada")]
    for i, (r, lab) in enumerate(with_ada):
        figures.append(("ada" if len(with_ada) == 1 else f"ada-{i + 1}",
                        lambda axes, r=r, lab=lab: ada_timeline(r, axes, label=lab if len(with_ada) > 1 else ""),
                        ADA_SIZE, ADA_SUBPLOTS))
    return _write_all(outdir, figures)


def plot_repro(report: dict, outdir: Union[str, "os.PathLike[str]"]) -> List[pathlib.Path]:
    """Writes each figure of an ``iostack repro`` report into ``outdir``; returns the paths (none
    when the paper gives tables only)."""
    out = pathlib.Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for f in report.get("figures", []):
        path = out / f"{report['name']}-{f['name']}.png"
        _plot_figure(f, path, report.get("source", ""))
        paths.append(path)
    return paths


def _plot_figure(f: dict, path: pathlib.Path, source: str) -> None:
    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    repro_figure(f, ax)
    if source:
        fig.text(0.01, 0.01, source, fontsize=6, alpha=0.7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def repro_figure(f: dict, ax=None):
    """Draws one figure of an ``iostack repro`` report (an entry of its ``figures``) on ``ax``:
    iostack's series solid, the paper's dashed with hollow markers (hatched bars)."""
    if ax is None:
        _, ax = plt.subplots(figsize=(7.5, 4.8))
    series = f["series"]
    if f.get("kind") == "bar":
        width = 0.8 / max(1, len(series))
        for k, s in enumerate(series):
            xs = [x + (k - (len(series) - 1) / 2) * width for x in s["x"]]
            style = dict(fill=False, hatch="//", edgecolor="black") if s["paper"] else {}
            ax.bar(xs, s["y"], width=width, label=s["label"], **style)
        ax.set_xticks(range(len(f.get("x_ticks", []))))
        ax.set_xticklabels(f.get("x_ticks", []))
    else:
        for s in series:
            if s["paper"]:
                ax.plot(s["x"], s["y"], linestyle="--", marker="o", markersize=8, markerfacecolor="none", color="black", label=s["label"])
            else:
                ax.plot(s["x"], s["y"], marker=".", label=s["label"])
        if f.get("log_x"):
            ax.set_xscale("log", base=2)
    ax.set_xlabel(f.get("x_label", ""))
    ax.set_ylabel(f.get("y_label", ""))
    ax.set_title(f["title"], fontsize=10)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    return ax
