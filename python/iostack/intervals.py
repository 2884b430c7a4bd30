"""Results over time: the per-interval table of runs made with ``interval``.

``iostack.simulate(..., interval="1h")`` and ``iostack.run(..., interval="100000req")`` return
it directly; :func:`series` builds it from results that carry a series (a run's dict, a
``simulate`` result, or a sweep's DataFrame whose runs had ``interval`` set). One row per run
and interval: ``run`` (the run's position among the results), the columns naming the run
(trace, policy, the axes of a sweep, cache size; for timed runs also prefetch, sched, device), then
``unit`` and ``width`` of the intervals, then the interval's fields as in the JSON result, nested
ones joined with dots (``response.p99_ns``): the same columns as the ``FILE.series.EXT`` table
``--output`` writes beside a run's table (docs/experiments.md, "Over time").
"""

from __future__ import annotations

import json
from typing import Any, Iterable, Mapping

#: The cell of a sweep's row that holds the run's intervals as JSON text.
SERIES_CELL = "series.points"


def _flat(d: Mapping[str, Any], prefix: str = "") -> dict:
    out: dict = {}
    for k, v in d.items():
        name = f"{prefix}{k}"
        if isinstance(v, Mapping):
            out.update(_flat(v, name + "."))
        else:
            out[name] = v
    return out


def _run_lead(r: Mapping[str, Any]) -> dict:
    """The columns naming a run, from a result dict of ``simulate`` or ``run``."""
    if "config" in r:  # a timed run
        lead = {"trace": r["trace"]} if "trace" in r else {}
        for k in ("policy", "prefetch", "sched", "device"):
            lead[k] = r["config"].get(k)
        lead["cache_size_spec"] = r["config"].get("cache")
        blocks = (r.get("resolved") or {}).get("cache_blocks")
        if blocks is not None:
            lead["cache_size"] = blocks
        return lead
    return {k: r[k] for k in ("trace", "policy", "cache_size_spec", "cache_size") if k in r}


def _frame_lead(columns: list, row: Mapping[str, Any]) -> dict:
    """The columns naming a sweep's run: its label (trace, axes, ``cache_size_spec``), then
    ``policy`` and ``cache_size`` when the result has them."""
    lead = {}
    for c in columns:
        lead[c] = row[c]
        if c == "cache_size_spec":
            break
    for c in ("policy", "cache_size"):
        if c in row and c not in lead:
            lead[c] = row[c]
    return lead


def _rows(results: Any) -> Iterable[dict]:
    if hasattr(results, "columns") and hasattr(results, "to_dict"):
        if hasattr(results, "to_pandas") and not hasattr(results, "iterrows"):  # polars
            results = results.to_pandas()
        columns = list(results.columns)
        if SERIES_CELL not in columns:
            raise ValueError(f"the table has no `{SERIES_CELL}` column: its runs were made without `interval`")
        for run, row in enumerate(results.to_dict("records")):
            text = row.get(SERIES_CELL)
            if not isinstance(text, str):
                continue  # a failed run
            lead = {"run": run, **_frame_lead(columns, row)}
            for p in json.loads(text):
                yield {**lead, "unit": row.get("series.unit"), "width": row.get("series.width"), **_flat(p)}
        return
    if isinstance(results, Mapping):
        results = [results]
    for run, r in enumerate(results):
        s = r.get("series")
        if s is None:
            raise ValueError("a result has no series: run it with `interval` (e.g. interval='1h' or '100000req')")
        if isinstance(s, str):
            s = json.loads(s)
        lead = {"run": run, **_run_lead(r)}
        for p in s["points"]:
            yield {**lead, "unit": s["unit"], "width": s["width"], **_flat(p)}


def series(results: Any, frame: str = "pandas"):
    """The per-interval table of ``results`` (see the module's description): a DataFrame, pandas
    or polars (``frame="polars"``)."""
    from iostack.experiment import frame_of

    return frame_of(list(_rows(results)), frame)
