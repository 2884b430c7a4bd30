"""PNG plots of an ``iostack analyze`` report (matplotlib, no display needed).

``plot_analysis(report, outdir)`` writes:

- ``mrc.png``: the LRU miss-ratio curve against cache size (log x axis);
- ``affinity.png``: stack and block affinity per interval over the trace, in the manner of Fox,
  Lojpur and Wang's Figures 6.1 and 6.2, with the working set on a second axis;
- ``distances.png``: log2-bucket histograms of stack, block and reuse distances.

``plot_repro(report, outdir)`` draws the figures of an ``iostack repro`` report (its
``figures``: the paper's figure in the paper's form, iostack's series as solid lines or filled
bars, the paper's values, where the paper gives numbers, as hollow markers on dashed lines or
hatched bars), one ``NAME-FIGURE.png`` each.
"""

from __future__ import annotations

import os
import pathlib
from typing import List, Union

import matplotlib

matplotlib.use("Agg")  # files only; never needs a display
import matplotlib.pyplot as plt  # noqa: E402

from iostack.analysis import Analysis, from_report  # noqa: E402


def _frames(report: Union[dict, Analysis]) -> Analysis:
    return report if isinstance(report, Analysis) else from_report(report)


def plot_analysis(report: Union[dict, Analysis], outdir: Union[str, "os.PathLike[str]"]) -> List[pathlib.Path]:
    """Writes the plots of ``report`` into ``outdir`` (created if needed); returns their paths."""
    a = _frames(report)
    out = pathlib.Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    title = pathlib.Path(str(a.report.get("trace", ""))).name
    paths = [plot_mrc(a, out / "mrc.png", title), plot_affinity(a, out / "affinity.png", title), plot_distances(a, out / "distances.png", title)]
    return paths


def plot_mrc(a: Analysis, path: pathlib.Path, title: str = "") -> pathlib.Path:
    r = a.report
    unit = f"{r['page_size']}-byte blocks" if r.get("page_size") else f"{r['mode']}s"
    fig, ax = plt.subplots(figsize=(7, 4.5))
    m = a.mrc
    ax.plot(m["cache_size"], m["miss_ratio"], marker="o", ms=3, label="per block" if "request_miss_ratio" in m else "LRU")
    if "request_miss_ratio" in m:
        ax.plot(m["cache_size"], m["request_miss_ratio"], marker="s", ms=3, label="per request")
        ax.legend()
    if len(m) and m["cache_size"].max() > 10 * max(1, m["cache_size"].min()):
        ax.set_xscale("log", base=2)
    ax.set_xlabel(f"cache size ({unit})")
    ax.set_ylabel("LRU miss ratio")
    ax.set_ylim(0, 1.02)
    ax.grid(True, alpha=0.3)
    ax.set_title(f"LRU miss-ratio curve {title}".strip())
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def plot_affinity(a: Analysis, path: pathlib.Path, title: str = "") -> pathlib.Path:
    s = a.series
    unit = s.attrs.get("unit", "requests")
    x = s["start"] / 1e9 if unit == "ns" else s["start"]
    if unit == "ns" and len(x):
        x = x - x.iloc[0]
    fig, ax = plt.subplots(figsize=(8, 4.5))
    ax.plot(x, s["stack_affinity"], label="stack affinity (temporal)")
    ax.plot(x, s["block_affinity"], label="block affinity (spatial)")
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("time (s)" if unit == "ns" else "request")
    ax.set_ylabel("affinity (mean per interval)")
    ax.grid(True, alpha=0.3)
    ws = ax.twinx()
    ws.plot(x, s["working_set"], color="0.6", lw=0.8, ls="--", label="working set")
    ws.set_ylabel("working set (distinct units per interval)")
    lines = ax.get_lines() + ws.get_lines()
    ax.legend(lines, [l.get_label() for l in lines], loc="lower right", fontsize=8)
    ax.set_title(f"Affinities over time {title}".strip())
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def plot_distances(a: Analysis, path: pathlib.Path, title: str = "") -> pathlib.Path:
    h = a.histograms
    kinds = ["stack_distance", "block_distance", "reuse_distance"]
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.8), sharey=False)
    loc = a.report["locality"]
    for ax, kind in zip(axes, kinds):
        d = h[h["distance"] == kind]
        by_lo = dict(zip(d["lo"], d["count"]))
        # Every log2 bucket from 0 to the largest one, empty ones included, so that the x axis
        # is a true log scale: bucket 0 holds distance 0, bucket k >= 1 holds [2^(k-1), 2^k).
        top = max((int(lo).bit_length() for lo in by_lo), default=0)
        los = [0] + [1 << (k - 1) for k in range(1, top + 1)]
        labels = [str(lo) for lo in los]
        counts = [by_lo.get(lo, 0) for lo in los]
        first = loc[kind]["first_references"]
        if first:
            labels.append("first")
            counts.append(first)
        ax.bar(range(len(counts)), counts, color="C0")
        if first:
            ax.patches[-1].set_color("C3")
        step = max(1, len(labels) // 8)
        ticks = list(range(0, len(labels), step))
        if first and ticks[-1] != len(labels) - 1:
            ticks.append(len(labels) - 1)
        ax.set_xticks(ticks)
        ax.set_xticklabels([labels[i] for i in ticks], rotation=45, ha="right", fontsize=7)
        ax.set_title(kind.replace("_", " "))
        ax.set_xlabel("log2 bucket (lower bound)")
    axes[0].set_ylabel("references")
    fig.suptitle(f"Distance histograms {title}".strip())
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


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
    if source:
        fig.text(0.01, 0.01, source, fontsize=6, alpha=0.7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
