"""Trace characterisation and locality metrics as DataFrames: ``iostack.analyze``.

The analysis itself runs in the Rust core (the same code as ``iostack analyze``); this module
turns its report into pandas DataFrames:

- ``summary``: one row of scalar figures (requests, footprint_units, footprint_bytes, read fraction, affinities, ...);
- ``mrc``: the LRU miss-ratio curve, one row per cache size (``cache_size``, ``miss_ratio`` and
  ``misses`` per unit of the analysis, ``request_miss_ratio`` per request as ``iostack sim``'s
  ``miss_ratio``, and in block mode ``block_miss_ratio``, the same as ``miss_ratio``);
- ``histograms``: log2-bucket histograms, one row per (``distance``, bucket) for the stack,
  block and reuse distances, request sizes and sequential-run lengths;
- ``series``: affinities and working set per interval;
- ``popularity``: the rank-frequency curve (``rank``, ``count``; ranks sampled 20 per decade),
  whose Zipf fit is ``summary.zipf_alpha``;
- ``timeline``: activity per time interval (``start_s``, ``span_s``, ``requests``, reads,
  writes, bytes, ``request_rate``, ``byte_rate``, ``new_units``, ``footprint_units``), and
  ``timeline_by_request`` the same per request-count interval (for traces without timestamps);
- ``processes``: one row per process (``pid``; ``<NA>`` sums the processes after the first 4096).

Stack and block affinity follow Fox, Lojpur and Wang, "Quantifying temporal and spatial
localities in storage workloads" (Section 3): ``1 / log10(10 + distance)``; an affinity that
cannot be measured (empty stream or interval) is ``NaN`` in DataFrames and ``None`` in
``report``.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable, Optional, Union

from iostack import _core

if TYPE_CHECKING:
    import pandas as pd
# pandas (and numpy under it) is imported by the functions that build DataFrames, not here:
# `import iostack` runs this module, and the `iostack` console command must not pay pandas'
# import time (about half a second of CPU) before it starts simulating.

PathLike = Union[str, "os.PathLike[str]"]


@dataclass
class Analysis:
    """The result of :func:`analyze`."""

    summary: pd.DataFrame
    mrc: pd.DataFrame
    histograms: pd.DataFrame
    series: pd.DataFrame
    popularity: pd.DataFrame
    timeline: pd.DataFrame
    timeline_by_request: pd.DataFrame
    processes: pd.DataFrame
    #: The full report, as ``iostack analyze --json`` prints it.
    report: dict

    def __repr__(self) -> str:
        return f"Analysis({self.report.get('trace')!r}, {self.report.get('requests')} requests)"

    def _repr_html_(self) -> str:
        """Jupyter: the trace summary, its processes and the main figures."""
        from iostack.report import analysis_html

        if "locality" not in self.report:  # the curve alone (mrc_only)
            return self.summary.to_html(index=False) + self.mrc.to_html(index=False)
        return analysis_html(self.report)


def analyze_argv(
    trace: PathLike,
    *,
    mode: str = "block",
    page_size: Union[int, str] = 4096,
    format: Optional[str] = None,
    mapping: Optional[str] = None,
    skip_invalid: bool = False,
    first_reference: Union[str, int] = "distinct",
    interval: str = "auto",
    mrc_sizes: Optional[Iterable[Union[int, str]]] = None,
    mrc_sampling: Union[None, float, str] = None,
    mrc_only: bool = False,
) -> list:
    """The ``iostack analyze`` command line for these options."""
    from iostack._sim import _flag

    if not isinstance(trace, (str, os.PathLike)):
        raise ValueError(f"trace: expected a path, got {type(trace).__name__}")
    for name, value in (("mode", mode), ("format", format), ("mapping", mapping), ("interval", interval)):
        if value is not None and not isinstance(value, str):
            raise ValueError(f"{name}: expected a string, got {value!r}")
    for name, value in (("page_size", page_size), ("first_reference", first_reference)):
        if isinstance(value, bool) or not isinstance(value, (str, int)):
            raise ValueError(f"{name}: expected a number or a string, got {value!r}")
    skip_invalid = _flag("skip_invalid", skip_invalid)
    mrc_only = _flag("mrc_only", mrc_only)
    if mrc_sampling is not None and (isinstance(mrc_sampling, bool) or not isinstance(mrc_sampling, (str, int, float))):
        raise ValueError(f"mrc_sampling: expected a rate (0.01) or a string such as 'size=8192', got {mrc_sampling!r}")
    argv = ["iostack", "analyze", os.fspath(trace), "--mode", mode, "--page-size", str(page_size)]
    if format is not None:
        argv += ["--format", format]
    if mapping is not None:
        argv += ["--mapping", mapping]
    if skip_invalid:
        argv.append("--skip-invalid")
    argv += ["--first-reference", str(first_reference), "--interval", str(interval)]
    if mrc_sizes is not None:
        sizes = [str(s) for s in mrc_sizes]
        if not sizes:
            raise ValueError("mrc_sizes: give at least one cache size")
        argv += ["--mrc-sizes", ",".join(sizes)]
    if mrc_sampling is not None:
        argv += ["--mrc-sampling", repr(mrc_sampling) if isinstance(mrc_sampling, float) else str(mrc_sampling)]
    if mrc_only:
        argv.append("--mrc-only")
    return argv


def analyze(trace: PathLike, **options) -> Analysis:
    """Characterises ``trace`` without simulating anything.

    Options (the same as ``iostack analyze``): ``mode`` (``"block"``, ``"object"`` or
    ``"file"``), ``page_size`` (block granularity: ``4096``, ``"64KiB"``, ``"sector"``),
    ``format``, ``mapping`` (generic CSV columns), ``skip_invalid``, ``first_reference``
    (``"distinct"``, ``"exclude"`` or a fixed Max), ``interval`` (``"auto"``, ``"10s"``,
    ``"100000req"``), ``mrc_sizes`` (cache sizes in units, or byte sizes such as ``"64MiB"``),
    ``mrc_sampling`` (estimate the curve from a hashed sample of the keys, SHARDS: a rate such as
    ``0.01``, or ``"size=8192"`` for at most 8,192 keys, optionally with ``",seed=N"``; the
    ``summary`` then has ``mrc_sampling`` and ``mrc_sampling_rate``, and ``report["mrc_sampling"]``
    the details), ``mrc_only`` (the curve alone, without the other metrics: ``summary`` and ``mrc``
    are filled, the other DataFrames are empty).

    Raises ``ValueError`` with the command's message on a bad trace or option.
    """
    from iostack._errors import python_errors

    with python_errors():
        report = json.loads(_core.analyze_json(analyze_argv(trace, **options)))
    return from_report(report)


def from_report(report: dict) -> Analysis:
    """DataFrames of a report (as printed by ``iostack analyze --json``)."""
    if "locality" not in report:
        return _from_curve_report(report)
    return Analysis(
        summary=_summary(report),
        mrc=_mrc(report),
        histograms=_histograms(report),
        series=_series(report),
        popularity=_popularity(report),
        timeline=_timeline(report.get("over_time"), seconds=True),
        timeline_by_request=_timeline(report.get("over_requests"), seconds=False),
        processes=_processes(report),
        report=report,
    )


def _sampling_columns(r: dict) -> dict:
    s = r.get("mrc_sampling")
    if s is None:
        return {"mrc_sampling": "exact", "mrc_sampling_rate": 1.0}
    how = f"rate={s['requested_rate']!r}" if s["kind"] == "rate" else f"size={s['max_keys']}"
    return {"mrc_sampling": f"{how},seed={s['seed']}", "mrc_sampling_rate": s["rate"]}


def _from_curve_report(r: dict) -> Analysis:
    """The report of ``--mrc-only``: the summary and the curve."""
    import pandas as pd

    row = {k: r[k] for k in ("trace", "mode", "page_size", "requests", "skipped_invalid", "references")}
    row.update(_sampling_columns(r))
    empty = pd.DataFrame()
    return Analysis(
        summary=pd.DataFrame([row]),
        mrc=_mrc(r),
        histograms=empty,
        series=empty,
        popularity=empty,
        timeline=empty,
        timeline_by_request=empty,
        processes=empty,
        report=r,
    )


def _nan(x):
    return float("nan") if x is None else x


def _summary(r: dict) -> pd.DataFrame:
    import pandas as pd

    loc = r["locality"]
    row = {
        "trace": r["trace"],
        "mode": r["mode"],
        "page_size": r["page_size"],
        "requests": r["requests"],
        "skipped_invalid": r["skipped_invalid"],
        "devices": r["devices"],
        "reads": r["ops"]["reads"],
        "writes": r["ops"]["writes"],
        "read_bytes": r["ops"]["read_bytes"],
        "write_bytes": r["ops"]["write_bytes"],
        "read_fraction": _nan(r["ops"]["read_fraction"]),
        "read_byte_fraction": _nan(r["ops"].get("read_byte_fraction")),
        "footprint_units": r["footprint_units"],
        "footprint_bytes": r["footprint_bytes"],
        "references": loc["references"],
        "request_size_mean": _nan(r["request_size"]["mean"]),
        "request_size_median": _nan(r["request_size"]["median"]),
        "sequential_fraction": _nan(r["sequential"]["sequential_fraction"]),
        "sequential_runs": r["sequential"]["runs"],
        "mean_run_requests": _nan(r["sequential"]["mean_run_requests"]),
        "stack_affinity_mean": _nan(r["stack_affinity"]["mean"]),
        "stack_affinity_median": _nan(r["stack_affinity"]["median"]),
        "block_affinity_mean": _nan(r["block_affinity"]["mean"]),
        "block_affinity_median": _nan(r["block_affinity"]["median"]),
        "stack_distance_mean": _nan(loc["stack_distance"]["mean"]),
        "stack_distance_median": _nan(loc["stack_distance"]["median"]),
        "block_distance_mean": _nan(loc["block_distance"]["mean"]),
        "block_distance_median": _nan(loc["block_distance"]["median"]),
        "reuse_distance_mean": _nan(loc["reuse_distance"]["mean"]),
        "reuse_distance_median": _nan(loc["reuse_distance"]["median"]),
        "first_references": loc["stack_distance"]["first_references"],
        "first_reference_max": loc["stack_distance"]["first_reference_max"],
        **_sampling_columns(r),
    }
    if "popularity" in r:
        pop, ia, rt = r["popularity"], r["inter_arrival"], r["reuse_time"]
        first, last = r.get("first_time_ns"), r.get("last_time_ns")
        row.update({
            "duration_s": (last - first) / 1e9 if first is not None and last is not None else float("nan"),
            "zipf_alpha": _nan(pop["zipf_alpha"]),
            "zipf_r2": _nan(pop["zipf_r2"]),
            "one_hit_wonders": pop["one_hit_wonders"],
            "one_hit_wonder_ratio": _nan(pop["one_hit_wonder_ratio"]),
            "max_count": pop["max_count"],
            "inter_arrival_mean_ns": _nan(ia["mean_ns"]),
            "inter_arrival_median_ns": _nan(ia["median_ns"]),
            "reuse_time_mean_ns": _nan(rt["mean_ns"]),
            "reuse_time_median_ns": _nan(rt["median_ns"]),
            "processes": len(r["processes"]),
        })
    return pd.DataFrame([row])


def _mrc(r: dict) -> pd.DataFrame:
    import pandas as pd

    # `miss_ratio` is per unit of the analysis; the explicit names say which: per block in block
    # mode (sim's block_miss_ratio), per request otherwise (sim's miss_ratio).
    df = pd.DataFrame(r["mrc"], columns=["cache_size", "miss_ratio", "misses"])
    if r.get("mrc_requests") is not None:
        df["block_miss_ratio"] = df["miss_ratio"]
        df["request_miss_ratio"] = [p["miss_ratio"] for p in r["mrc_requests"]]
    else:
        df["request_miss_ratio"] = df["miss_ratio"]
    return df


def _histograms(r: dict) -> pd.DataFrame:
    import pandas as pd

    loc = r["locality"]
    parts = {
        "stack_distance": loc["stack_distance"]["histogram"],
        "block_distance": loc["block_distance"]["histogram"],
        "reuse_distance": loc["reuse_distance"]["histogram"],
        "request_size": r["request_size"]["histogram"],
        "run_length": r["sequential"]["run_length_histogram"],
    }
    if "inter_arrival" in r:
        parts["inter_arrival_ns"] = r["inter_arrival"]["histogram"]
        parts["reuse_time_ns"] = r["reuse_time"]["histogram"]
    rows = [
        {"distance": name, "lo": b["lo"], "hi": b["hi"], "count": b["count"]}
        for name, buckets in parts.items()
        for b in buckets
    ]
    return pd.DataFrame(rows, columns=["distance", "lo", "hi", "count"])


def _series(r: dict) -> pd.DataFrame:
    import pandas as pd

    s = r["locality"]["series"]
    df = pd.DataFrame(
        s["points"],
        columns=["start", "requests", "references", "first_references", "working_set", "stack_affinity", "block_affinity"],
    )
    df = df.astype({"stack_affinity": float, "block_affinity": float})
    df.attrs["unit"] = s["unit"]
    df.attrs["width"] = s["width"]
    return df


def _popularity(r: dict) -> pd.DataFrame:
    import pandas as pd

    pts = r.get("popularity", {}).get("rank_frequency", [])
    return pd.DataFrame(pts, columns=["rank", "count"])


_TIMELINE_COLUMNS = ["requests", "reads", "writes", "read_bytes", "write_bytes", "request_rate", "byte_rate", "new_units",
                     "footprint_units", "first_references"]


def _timeline(t: Optional[dict], seconds: bool) -> pd.DataFrame:
    """One row per interval; times in seconds from the first request (``seconds``) or request
    indexes. ``attrs`` keep the unit and width; ``stack_distance_histograms`` (in ``attrs``)
    holds each interval's log2 histogram of request stack distances."""
    import pandas as pd

    pts = (t or {}).get("points", [])
    if seconds:
        cols = {"start_s": [p["start"] / 1e9 for p in pts], "span_s": [p["span"] / 1e9 for p in pts]}
    else:
        cols = {"start": [p["start"] for p in pts], "span": [p["span"] for p in pts]}
    for c in _TIMELINE_COLUMNS:
        cols[c] = [p[c] for p in pts]
    df = pd.DataFrame(cols).astype({"request_rate": float, "byte_rate": float})
    df.attrs["unit"] = (t or {}).get("unit", "ns" if seconds else "requests")
    df.attrs["width"] = (t or {}).get("width")
    df.attrs["stack_distance_histograms"] = [p["stack_distance_histogram"] for p in pts]
    return df


def _processes(r: dict) -> pd.DataFrame:
    import pandas as pd

    cols = ["pid", "requests", "reads", "writes", "read_bytes", "write_bytes", "sequential_fraction", "first_time_ns",
            "last_time_ns"]
    df = pd.DataFrame(r.get("processes", []), columns=cols)
    df["pid"] = df["pid"].astype("Int64")
    df["sequential_fraction"] = df["sequential_fraction"].astype(float)
    return df
