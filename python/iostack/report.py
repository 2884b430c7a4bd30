"""``iostack report RESULTS... --out report.html``: one self-contained HTML file from results.

Inputs, each a file or a directory (whose files are taken in name order):

- tables of simulation results, as ``iostack sweep`` or ``iostack sim --json`` write them:
  CSV, JSON Lines (``.jsonl``), Parquet, or a JSON array of rows. Any table with columns
  ``policy``, ``cache_size`` and ``miss_ratio`` (and ``trace`` when there are several traces)
  gets miss-ratio curves; every table is shown (the first 200 rows);
- results of ``iostack run --json`` / ``iostack.run`` (one object, or an array of them): the
  echoed configuration, the results, and the run figures;
- reports of ``iostack analyze --json``: the trace summary and the analysis figures;
- reports of ``iostack repro NAME --json`` (as ``docs/repro/NAME.json`` stores them): the verdict,
  every check with the paper's value, iostack's and the tolerance, the tables, and the figures
  drawn as ``--plot`` draws them;
- PNG images (such as those ``iostack repro NAME --plot DIR`` writes): embedded as they are.

Figures are PNGs embedded as base64 data, so the file opens offline and can be mailed; the
stylesheet lays it out for screens and for printing (figures and tables are not split across
pages). The report names iostack's version and every input; it carries no date, so the same
inputs give the same file. The output is written to a temporary file and renamed into place: on
an error (a file that cannot be read or is not a result) nothing is written and the message
names the file.
"""

from __future__ import annotations

import argparse
import base64
import html
import io
import json
import os
import pathlib
import sys
import tempfile
from typing import Any, List, Optional, Sequence

TABLE_EXTENSIONS = (".csv", ".jsonl", ".ndjson", ".parquet", ".pq")
MAX_ROWS = 200


class ReportError(ValueError):
    """An input that cannot be reported (the message names it)."""


# --- reading inputs ----------------------------------------------------------------------------


def _read_json(path: pathlib.Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise ReportError(f"{path}: line {e.lineno}: not JSON ({e.msg})") from None


def _read_table(path: pathlib.Path):
    import pandas as pd

    suffix = path.suffix.lower()
    try:
        if suffix == ".csv":
            return pd.read_csv(path)
        if suffix in (".jsonl", ".ndjson"):
            return pd.read_json(path, lines=True)
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise ReportError(f"{path}: reading Parquet needs pyarrow (pip install pyarrow)") from None
        return pd.read_parquet(path)
    except ReportError:
        raise
    except Exception as e:  # pandas raises many kinds for a malformed file
        raise ReportError(f"{path}: cannot read the table: {e}") from None


def _kind(obj: Any) -> str:
    """What a JSON document is: ``analysis``, ``run``, ``runs``, ``repro``, ``rows`` or ``unknown``."""
    if isinstance(obj, dict):
        if "locality" in obj and "mrc" in obj and "requests" in obj:
            return "analysis"
        if "config" in obj and "elapsed_ns" in obj:
            return "run"
        if {"name", "source", "checks", "tables", "figures"} <= set(obj):
            return "repro"
    if isinstance(obj, list) and obj and all(isinstance(o, dict) for o in obj):
        if all("config" in o and "elapsed_ns" in o for o in obj):
            return "runs"
        return "rows"
    return "unknown"


class Inputs:
    """Everything gathered from the inputs, in the order given."""

    def __init__(self):
        self.sections: List[tuple] = []  # (kind, name, payload)

    def add_path(self, path: pathlib.Path) -> None:
        if path.is_dir():
            files = sorted(p for p in path.rglob("*") if p.is_file())
            used = [p for p in files if p.suffix.lower() in (".png", ".json") + TABLE_EXTENSIONS]
            if not used:
                raise ReportError(f"{path}: the directory holds no results (JSON, CSV, JSON Lines, Parquet) or PNG figures")
            images = [p for p in used if p.suffix.lower() == ".png"]
            for p in used:
                if p.suffix.lower() != ".png":
                    self.add_path(p)
            if images:
                self.sections.append(("images", str(path), images))
            return
        if not path.exists():
            raise ReportError(f"{path}: no such file or directory")
        suffix = path.suffix.lower()
        if suffix == ".png":
            self.sections.append(("images", str(path), [path]))
        elif suffix in TABLE_EXTENSIONS:
            self.sections.append(("table", str(path), _read_table(path)))
        elif suffix == ".json":
            obj = _read_json(path)
            kind = _kind(obj)
            if kind == "unknown":
                raise ReportError(f"{path}: not an iostack result (expected the JSON of iostack sim, run, analyze, sweep or repro)")
            if kind == "rows":
                import pandas as pd

                self.sections.append(("table", str(path), pd.DataFrame(obj)))
            elif kind == "run":
                self.sections.append(("runs", str(path), [obj]))
            else:
                self.sections.append((kind, str(path), obj))
        else:
            raise ReportError(f"{path}: unknown kind of file (give .json, .csv, .jsonl, .parquet, .png or a directory)")


# --- HTML pieces -------------------------------------------------------------------------------

CSS = """
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 2em auto; max-width: 1100px;
       color: #222; line-height: 1.4; padding: 0 1em; }
h1 { font-size: 1.6em; border-bottom: 2px solid #444; padding-bottom: .2em; }
h2 { font-size: 1.3em; margin-top: 2em; border-bottom: 1px solid #bbb; }
h3 { font-size: 1.05em; margin-top: 1.4em; }
table { border-collapse: collapse; margin: .6em 0 1.2em; font-size: .85em; }
th, td { border: 1px solid #ccc; padding: .25em .6em; text-align: right; }
th { background: #f0f0f0; }
td.text, th.text { text-align: left; }
.scroll { overflow-x: auto; }
figure { margin: 1em 0; }
figure img { max-width: 100%; border: 1px solid #ddd; }
figcaption { font-size: .85em; color: #555; }
.meta { color: #555; font-size: .9em; }
pre { background: #f6f6f6; padding: .6em; font-size: .8em; overflow-x: auto; }
nav ul { columns: 2; font-size: .9em; }
@media print {
  body { max-width: none; margin: 0; font-size: 10pt; }
  nav { display: none; }
  h2 { page-break-before: auto; page-break-after: avoid; }
  figure, table, pre { page-break-inside: avoid; break-inside: avoid; }
  figure img { max-height: 9cm; }
  .scroll { overflow: visible; }
  table { font-size: 7pt; }
  a { color: inherit; text-decoration: none; }
}
"""


def _esc(x: Any) -> str:
    return html.escape(str(x))


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        if v != v:
            return "–"
        return f"{v:.6g}" if abs(v) < 1e6 else f"{v:,.0f}"
    if isinstance(v, int) and not isinstance(v, bool):
        return f"{v:,}"
    return str(v)


def table_html(df, max_rows: int = MAX_ROWS, index: bool = False) -> str:
    """An HTML table of a DataFrame (numbers right-aligned, text left-aligned)."""
    import pandas as pd

    shown = df.head(max_rows)
    cols = list(shown.columns)
    text_cols = {c for c in cols if not pd.api.types.is_numeric_dtype(shown[c]) or pd.api.types.is_bool_dtype(shown[c])}
    head = ([f'<th class="text">{_esc(shown.index.name or "")}</th>'] if index else []) + [
        f'<th class="{"text" if c in text_cols else ""}">{_esc(c)}</th>' for c in cols]
    rows = []
    for idx, row in zip(shown.index, shown.itertuples(index=False)):
        cells = ([f'<td class="text">{_esc(idx)}</td>'] if index else []) + [
            f'<td class="{"text" if c in text_cols else ""}">{_esc(_fmt(v))}</td>' for c, v in zip(cols, row)]
        rows.append("<tr>" + "".join(cells) + "</tr>")
    more = f'<p class="meta">{len(df) - max_rows:,} more rows not shown.</p>' if len(df) > max_rows else ""
    return f"<div class=\"scroll\"><table><thead><tr>{''.join(head)}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>{more}"


def _kv_table(d: dict) -> str:
    rows = "".join(f'<tr><th class="text">{_esc(k)}</th><td class="text">{_esc(_fmt(v))}</td></tr>' for k, v in d.items())
    return f"<table><tbody>{rows}</tbody></table>"


def _png_data(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def figure_html(png: bytes, caption: str) -> str:
    return f'<figure><img src="{_png_data(png)}" alt="{_esc(caption)}"><figcaption>{_esc(caption)}</figcaption></figure>'


def _fig_png(fig) -> bytes:
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buf, format="png", dpi=100)
    plt.close(fig)
    return buf.getvalue()


def _draw(draw, size, caption: str, ncols: int = 1, nrows: int = 1, **subplots) -> str:
    from iostack.plots import _figure

    return figure_html(_fig_png(_figure(draw, size, nrows=nrows, ncols=ncols, **subplots)), caption)


# --- sections ----------------------------------------------------------------------------------


def _table_section(name: str, df) -> str:
    from iostack import plots

    parts = [f"<p class=\"meta\">{len(df):,} rows, columns: {_esc(', '.join(map(str, df.columns)))}</p>"]
    if {"policy", "cache_size", "miss_ratio"} <= set(df.columns):
        ratios = [r for r in ("miss_ratio", "byte_miss_ratio", "block_miss_ratio") if r in df.columns and df[r].notna().any()]
        parts.append(_draw(lambda axes: [plots.mrc(df, ax=ax, ratio=r) for ax, r in zip(getattr(axes, "flat", [axes]), ratios)],
                           (5.2 * len(ratios), 4.2), "Miss-ratio curves: " + ", ".join(r.replace("_", " ") for r in ratios), ncols=len(ratios)))
        traces = list(dict.fromkeys(df["trace"])) if "trace" in df.columns else [None]
        for t in traces:
            sub = df if t is None else df[df["trace"] == t]
            grid = sub.pivot_table(index="policy", columns="cache_size", values="miss_ratio", aggfunc="first", sort=False)
            title = "Request miss ratio by policy and cache size" + ("" if t is None else f": {t}")
            parts.append(f"<h3>{_esc(title)}</h3>" + table_html(grid, index=True))
    with_series = _series_of_table(df)
    if with_series is not None:
        parts.append(_series_figure(with_series))
    shown = df.drop(columns=[c for c in ("series", "series.points") if c in df.columns])
    parts.append("<h3>Rows</h3>" + table_html(shown))
    return "".join(parts)


def _series_of_table(df):
    """The per-interval table of a results table whose runs carry a series, else None."""
    from iostack.intervals import SERIES_CELL, series

    if SERIES_CELL in df.columns and df[SERIES_CELL].notna().any():
        return series(df)
    if "series" in df.columns and df["series"].notna().any():
        return series([r for r in df.to_dict("records") if isinstance(r.get("series"), (dict, str))])
    return None


def _series_figure(table) -> str:
    from iostack import plots

    timed = "device_busy_ns" in table.columns
    caption = "Hit ratio, I/O time and response time over time" if timed else "Hit ratio over time"
    return _draw(lambda axes: plots.series(table, list(getattr(axes, "flat", [axes]))), (15, 4) if timed else (7.5, 4.2), caption, ncols=3 if timed else 1)


def _run_section(name: str, runs: Sequence[dict]) -> str:
    from iostack import plots

    parts = []
    rows = []
    for r, label in zip(runs, plots._labels(runs)):
        resp = r.get("response", {})
        rows.append({"stack": label, "elapsed (s)": r["elapsed_ns"] / 1e9, "device busy (s)": r["device_busy_ns"] / 1e9,
                     "device requests": r["device_requests"], "hit ratio": r["hit_ratio"],
                     "response mean (ms)": resp.get("mean_ns", float("nan")) / 1e6,
                     "response p99 (ms)": resp.get("p99_ns", float("nan")) / 1e6})
    import pandas as pd

    parts.append("<h3>Results</h3>" + table_html(pd.DataFrame(rows)))
    for r, label in zip(runs, plots._labels(runs)):
        parts.append(f"<h3>Configuration: {_esc(label)}</h3>" + _kv_table(r.get("config", {})))
        if r.get("resolved"):
            flat = {k: v for k, v in r["resolved"].items() if not isinstance(v, (dict, list))}
            parts.append("<p class=\"meta\">As resolved:</p>" + _kv_table(flat))
    parts.append(_draw(lambda axes: (plots.sequence_cdf(runs, axes[0], "sequences"), plots.sequence_cdf(runs, axes[1], "sizes")),
                       (11, 4), "Disk sequence sizes and device request sizes (CDF)", ncols=2))
    parts.append(_draw(lambda ax: plots.response(runs, ax), (7, 4.2), "Response-time CDF"))
    if any(r.get("series") for r in runs):
        from iostack.intervals import series

        parts.append(_series_figure(series([r for r in runs if r.get("series")])))
    if any(r.get("locality") for r in runs):
        parts.append(_draw(lambda axes: plots.boundary_affinity(runs, axes), (11, 4), "Stack and block affinity at each layer boundary", ncols=2))
    if len(runs) > 1:
        parts.append(_draw(lambda axes: plots.stacks(runs, axes), (11, 4), "I/O time and hit ratio across stacks", ncols=2))
    for r, label in zip(runs, plots._labels(runs)):
        if r.get("ada"):
            parts.append(_draw(lambda axes, r=r: plots.ada_timeline(r, axes), plots.ADA_SIZE, f"ADA's activation timeline: {label}",
                               **plots.ADA_SUBPLOTS))
    return "".join(parts)


SUMMARY_FIELDS = ["trace", "mode", "page_size", "requests", "duration_s", "devices", "footprint_units", "footprint_bytes",
                  "reads", "writes", "read_fraction", "read_byte_fraction", "request_size_mean", "request_size_median",
                  "sequential_fraction", "zipf_alpha", "zipf_r2", "one_hit_wonder_ratio", "inter_arrival_median_ns",
                  "reuse_time_median_ns", "stack_affinity_mean", "block_affinity_mean", "processes"]


def _analysis_section(name: str, report: dict) -> str:
    from iostack import plots
    from iostack.analysis import from_report

    a = from_report(report)
    s = a.summary.iloc[0].to_dict()
    parts = ["<h3>Trace summary</h3>" + _kv_table({k: s[k] for k in SUMMARY_FIELDS if k in s})]
    parts.append(_draw(lambda ax: plots.analysis_mrc(a, ax), (7, 4.2), "LRU miss-ratio curve (one pass), up to the footprint"))
    if "popularity" in report:
        parts.append(_draw(lambda ax: plots.popularity(a, ax), (7, 4.2), "Popularity and its Zipf fit"))
        parts.append(_draw(lambda axes: plots.timeline(a, axes), (8, 5.5), "Request rate and footprint over time", nrows=2))
        parts.append(_draw(lambda ax: plots.heatmap(a, ax), (9, 4.5), "Reuse distance over time"))
    parts.append(_draw(lambda axes: plots.distances(a, axes), (13, 3.8), "Distance histograms (log2 buckets)", ncols=3))
    if len(a.processes):
        parts.append("<h3>Processes</h3>" + table_html(a.processes, max_rows=50))
    return "".join(parts)


def _repro_section(name: str, report: dict) -> str:
    """A reproduction (`iostack repro NAME --json`): its verdict, every check with the paper's
    value, iostack's and the tolerance, its tables, notes and figures."""
    import pandas as pd
    from iostack import plots

    checks = report["checks"]
    agree = sum(1 for c in checks if c["ok"])
    verdict = "holds" if agree == len(checks) else "differs"
    parts = [f"<p><b>{_esc(report['title'])}</b></p><p class=\"meta\">{_esc(report['source'])}</p>",
             f"<p>Verdict: <b>{verdict}</b> ({agree} of {len(checks)} checks agree)</p>"]
    df = pd.DataFrame([{"check": c["what"], "paper": c["paper"], "iostack": c["iostack"], "tolerance": c.get("tolerance", ""),
                        "agrees": "yes" if c["ok"] else "no"} for c in checks])
    parts.append("<h3>Checks</h3>" + table_html(df, max_rows=200))
    for t in report["tables"]:
        rows = [dict(zip(t["header"], r)) for r in t["rows"]]
        parts.append(f"<h3>{_esc(t['title'])}</h3>" + table_html(pd.DataFrame(rows, columns=t["header"]), max_rows=200))
    if report.get("notes"):
        parts.append("<ul>" + "".join(f"<li>{_esc(n)}</li>" for n in report["notes"]) + "</ul>")
    for f in report["figures"]:
        parts.append(_draw(lambda ax, f=f: plots.repro_figure(f, ax), (7.5, 4.8), f["title"]))
    return "".join(parts)


def _images_section(name: str, images: Sequence[pathlib.Path]) -> str:
    return "".join(figure_html(p.read_bytes(), p.name) for p in images)


def build_html(paths: Sequence[os.PathLike], title: str = "iostack report") -> str:
    """The report of ``paths`` as one HTML document (see the module's documentation)."""
    import matplotlib

    matplotlib.use("Agg")
    from iostack import __version__

    inputs = Inputs()
    for p in paths:
        inputs.add_path(pathlib.Path(p))
    render = {"table": _table_section, "runs": _run_section, "analysis": _analysis_section, "repro": _repro_section,
              "images": _images_section}
    headings = {"table": "Results table", "runs": "Timed runs", "analysis": "Trace analysis", "repro": "Reproduction",
                "images": "Figures"}
    body, nav = [], []
    for i, (kind, name, payload) in enumerate(inputs.sections):
        anchor = f"s{i + 1}"
        heading = f"{headings[kind]}: {name}"
        nav.append(f'<li><a href="#{anchor}">{_esc(heading)}</a></li>')
        try:
            content = render[kind](name, payload)
        except (KeyError, TypeError) as e:
            raise ReportError(f"{name}: not a complete iostack result (missing {e})") from None
        body.append(f'<section id="{anchor}"><h2>{_esc(heading)}</h2>{content}</section>')
    sources = "".join(f"<li><code>{_esc(p)}</code></li>" for p in paths)
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<meta name=\"generator\" content=\"iostack {_esc(__version__)}\"><title>{_esc(title)}</title>"
        f"<style>{CSS}</style></head><body>"
        f"<h1>{_esc(title)}</h1><p class=\"meta\">Made by iostack {_esc(__version__)} from:</p><ul class=\"meta\">{sources}</ul>"
        f"<nav><h2>Contents</h2><ul>{''.join(nav)}</ul></nav>{''.join(body)}</body></html>\n"
    )


def write(paths: Sequence[os.PathLike], out: os.PathLike, title: str = "iostack report") -> pathlib.Path:
    """Writes the report of ``paths`` to ``out`` (whole, or not at all); returns its path."""
    out = pathlib.Path(out)
    if any(pathlib.Path(p).resolve() == out.resolve() for p in paths):
        raise ReportError(f"{out}: is one of the inputs")
    doc = build_html(paths, title)
    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", dir=str(out.parent if str(out.parent) else "."))
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(doc)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # as an ordinary new file, not mkstemp's 0600
        os.replace(tmp, out)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return out


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="iostack report", description="One self-contained HTML report (figures embedded, tables, "
                                 "configurations, trace summaries) from iostack results: sweep or sim tables (CSV, JSON "
                                 "Lines, Parquet, JSON), run and analyze JSON, PNG figures, or directories of them.")
    ap.add_argument("results", nargs="+", help="result files or directories")
    ap.add_argument("--out", "-o", required=True, help="the HTML file to write")
    ap.add_argument("--title", default="iostack report")
    args = ap.parse_args(argv)
    try:
        path = write(args.results, args.out, args.title)
    except (ReportError, OSError) as e:
        print(f"iostack: error: {e}", file=sys.stderr)
        return 1
    print(f"wrote {path}", file=sys.stderr)
    return 0


# --- notebooks ---------------------------------------------------------------------------------


def analysis_html(report: dict) -> str:
    """HTML of one analysis (the report's section), for Jupyter's ``_repr_html_``."""
    import matplotlib

    matplotlib.use("Agg")
    name = pathlib.Path(str(report.get("trace", ""))).name
    return f"<div><h3>iostack analysis: {_esc(name)}</h3>{_analysis_section(name, report)}</div>"


def run_html(result: dict) -> str:
    """HTML of one timed-run result, for Jupyter's ``_repr_html_``."""
    import matplotlib

    matplotlib.use("Agg")
    return f"<div><h3>iostack run</h3>{_run_section('', [result])}</div>"
