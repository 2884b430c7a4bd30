"""Miss-ratio simulation and trace reading from Python.

Thin wrappers over the Rust core (``iostack._core``): arguments are normalised here (single
values or lists, DataFrames or dicts of arrays, numpy dtypes), the work runs in Rust with the GIL
released, and results come back as a dict (one run) or a pandas DataFrame (several runs).
"""

from __future__ import annotations

import os
from typing import Any, Iterable, Mapping, Sequence, Union

from iostack import _core

# numpy (and pandas) are imported inside the functions that need them, so that the `iostack`
# console command, which imports this package, starts without loading them.

PathLike = Union[str, "os.PathLike[str]"]

#: Columns of an in-memory trace, with their dtype and default when absent.
#: ``offset`` is required; ``op`` may be 'R'/'W' strings, booleans or integers (non-zero = write).
TRACE_COLUMNS = ("time_ns", "offset", "length", "op", "pid", "device")


def _as_list(x: Any) -> tuple[list, bool]:
    import numpy as np

    if isinstance(x, (list, tuple)):
        return list(x), True
    if isinstance(x, np.ndarray):
        return x.tolist(), True
    return [x], False


def _size_text(s: Any) -> str:
    import numpy as np

    if isinstance(s, (bool, np.bool_)):
        raise ValueError(f"cache_size: {s!r} is not a size (expected e.g. 4096 or '64MiB')")
    if isinstance(s, (int, np.integer)):
        if s < 0:
            raise ValueError(f"cache_size: {s} is negative")
        return str(int(s))
    if isinstance(s, (float, np.floating)):
        # A fraction of the footprint, as libCacheSim writes it (0.01 is 1%).
        return np.format_float_positional(float(s), trim="0")
    if isinstance(s, str):
        return s
    raise ValueError(f"cache_size: {s!r} is not a size (expected e.g. 4096, '64MiB', '1%' or 0.01)")


def _column(col: str, values: Any) -> np.ndarray:
    """``values`` as a 1-D numpy array, or a ValueError naming the column."""
    import numpy as np

    try:
        a = np.asarray(values)
    except (TypeError, ValueError) as e:
        raise ValueError(f"field `{col}`: not an array of values ({e})") from None
    if a.ndim != 1:
        what = "a scalar" if a.ndim == 0 else f"a {a.ndim}-D array"
        raise ValueError(f"field `{col}`: expected one value per request (a 1-D array), got {what}")
    return a


def _op_array(op: Any, n: int) -> np.ndarray:
    import numpy as np

    a = _column("op", op)
    if a.dtype.kind in "OUS":
        s = np.char.upper(a.astype(str))
        bad = ~np.isin(s, ["R", "W", "READ", "WRITE"])
        if bad.any():
            i = int(np.argmax(bad))
            raise ValueError(f"row {i}: field `op`: `{a[i]}` is not R, W, read or write")
        return np.ascontiguousarray(np.char.startswith(s, "W"), dtype=np.uint8)
    if a.dtype.kind not in "uifb":
        raise ValueError(f"field `op`: expected R/W strings, booleans or numbers, got {a.dtype}")
    if a.dtype.kind == "f" and a.size and not np.all(np.isfinite(a)):
        i = int(np.argmax(~np.isfinite(a)))
        raise ValueError(f"row {i}: field `op`: {a[i]} is not a read or a write")
    return np.ascontiguousarray(a != 0, dtype=np.uint8)


def _uint(col: str, values: Any, dtype: Any) -> np.ndarray:
    """A column of whole numbers that fit ``dtype`` (uint32 or uint64), checked row by row."""
    import numpy as np

    a = _column(col, values)
    if a.dtype.kind == "b":
        raise ValueError(f"field `{col}`: expected numbers, got booleans")
    if a.dtype.kind not in "uif":
        raise ValueError(f"field `{col}`: expected numbers, got {a.dtype}")
    if not a.size:
        return np.ascontiguousarray(a, dtype=dtype)
    if a.dtype.kind == "f":
        bad = ~np.isfinite(a) | (a != np.floor(a))
        if bad.any():
            i = int(np.argmax(bad))
            raise ValueError(f"row {i}: field `{col}`: {a[i]} is not a whole number")
    if a.dtype.kind in "if" and a.min() < 0:
        i = int(np.argmin(a))
        raise ValueError(f"row {i}: field `{col}`: {a[i]} is negative")
    top = np.iinfo(dtype).max
    # Floats compare against 2^bits (the float nearest the integer maximum may round up to it).
    over = a >= float(top) + 1.0 if a.dtype.kind == "f" else a > top
    if over.any():
        i = int(np.argmax(over))
        raise ValueError(f"row {i}: field `{col}`: {a[i]} is above {top}, the largest {col} iostack keeps")
    return np.ascontiguousarray(a, dtype=dtype)


def _flag(name: str, value: Any) -> bool:
    """A boolean argument: True or False (numpy's too), never a string or a number."""
    import numpy as np

    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise ValueError(f"{name}: expected True or False, got {value!r}")


def _whole(name: str, value: Any, low: int, high: int) -> int:
    """An integer argument within [low, high] (booleans and fractional numbers refused)."""
    import numpy as np

    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name}: expected a whole number, got {value!r}")
    if not low <= int(value) <= high:
        raise ValueError(f"{name}: {value} is out of range ({low} to {high})")
    return int(value)


def _arrays(trace: Any) -> tuple:
    """Request arrays from a DataFrame or a mapping of column name to values."""
    import numpy as np

    cols: Mapping[str, Any]
    if hasattr(trace, "columns") and hasattr(trace, "__getitem__"):
        cols = {c: trace[c].to_numpy() for c in trace.columns}
    elif isinstance(trace, Mapping):
        cols = trace
    else:
        raise ValueError(f"trace: expected a path, a pandas DataFrame or a dict of arrays, got {type(trace).__name__}")
    if "offset" not in cols:
        raise ValueError("an in-memory trace needs an `offset` column (the object key or byte offset)")
    offset = _uint("offset", cols["offset"], np.uint64)
    n = offset.shape[0]

    def col(name: str, dtype: Any, default: Any) -> np.ndarray:
        if name in cols and cols[name] is not None:
            return _uint(name, cols[name], dtype)
        return np.full(n, default, dtype=dtype)

    length = col("length", np.uint64, 1)
    time_ns = col("time_ns", np.uint64, 0)
    op = _op_array(cols["op"], n) if "op" in cols else np.zeros(n, dtype=np.uint8)
    pid = col("pid", np.uint32, 0)
    device = col("device", np.uint32, 0)
    return (offset, length, time_ns, op, pid, device)


def simulate(
    trace: Any,
    policy: Union[str, type, Sequence[Union[str, type]]] = "lru",
    cache_size: Union[int, str, Sequence[Union[int, str]]] = 1000,
    mode: str = "object",
    unit_size: bool = False,
    page_size: int = 4096,
    format: str | None = None,
    skip_invalid: bool = False,
    threads: int = 0,
    hints: Any = None,
    per_process: bool = False,
    mapping: str | None = None,
    frame: str = "pandas",
    interval: str | None = None,
):
    """Miss-ratio simulation of one or more policies and cache sizes over one trace.

    ``trace`` is a path to a trace file (any format ``iostack formats`` lists; detected when
    ``format`` is None), or requests in memory: a DataFrame or dict of arrays with an ``offset``
    column and optional ``length`` (default 1), ``time_ns``, ``op``, ``pid``, ``device``
    (as :func:`read_trace` returns them). ``mapping`` gives the columns of a generic CSV trace
    (``"offset=2,length=3,op=1,time=0"``, see docs/formats.md).

    ``cache_size`` is a count in the cache's unit (objects with ``unit_size``, bytes in sized
    object mode, blocks of ``page_size`` in block mode) or a string with a byte unit
    (``"64MiB"``; not allowed with ``unit_size``).

    ``policy`` is a name (``iostack.policies()``, with parameters as in ``"slru:segments=4"``),
    an :class:`iostack.Policy` subclass (one instance is built per run; see
    :mod:`iostack.policy`), or a list of these.

    Returns a dict for one policy and one size; a DataFrame with one row per run (policies
    outer, sizes inner) when ``policy`` or ``cache_size`` is a list: pandas, or polars with
    ``frame="polars"``. Sizes may be relative to the trace's footprint: ``"1%"`` or ``0.01``;
    ``cache_size_spec`` echoes the size as given and ``footprint`` the footprint it was taken of. The fields are those of
    ``iostack sim --json``: trace, format, policy, cache_size, cache_unit, mode, unit_size,
    page_size, requests, hits, miss_ratio, byte_miss_ratio (block mode also blocks, block_hits,
    block_miss_ratio), skipped, cached_objects, metadata_bytes_per_object.

    ``hints`` (for application-controlled policies such as ``"lrusp"``) is a path to a TOML
    hints file, the string ``"oracle:lookahead=N"``, or the file's layout as Python data: a
    list of process dicts (or ``{"process": [...]}``), each with ``pid``, ``policy`` (``"lru"``
    or ``"mru"``) and optionally ``files`` ({file id: priority}), ``levels`` ({level:
    policy}), ``temp`` (dicts with ``at``, ``file``, ``first``, ``last``, ``prio``),
    ``file_list`` and ``block_list`` ([file, first, last] triples); see docs/policies.md. An
    in-memory trace keeps its files from ``file_id`` / ``file_offset`` columns (-1: no file).
    With ``per_process`` (always with an application-controlled policy) each result has a
    ``processes`` list of dicts ``{pid, requests, hits, misses, miss_ratio}`` (block mode also
    ``blocks``, ``block_hits``, ``block_misses``).

    ``interval`` (a duration of trace time such as ``"1h"`` or ``"10s"``, or a number of
    requests such as ``"100000req"``) makes every run count hits per interval, and the call
    then returns that instead: a DataFrame with one row per run and interval (``trace``, ``policy``,
    ``cache_size_spec``, ``cache_size``, ``unit``, ``width``, ``start``, ``requests``, ``hits``,
    ``hit_ratio``, ``miss_ratio``, ``byte_miss_ratio``, and in block mode ``blocks``,
    ``block_hits``, ``block_miss_ratio``; see :func:`iostack.series`). With pandas the runs'
    results are in ``df.attrs["results"]``.

    Raises ValueError for a bad configuration or a malformed trace (the message names the file,
    line or record and field), FileNotFoundError or OSError when the file cannot be read.
    """
    if interval is not None and not isinstance(interval, str):
        raise ValueError(f"interval: expected a duration such as '1h' or a request count such as '100000req', got {interval!r}")
    policies, many_p = _as_list(policy)
    sizes, many_s = _as_list(cache_size)
    from iostack.policy import check_policy_arg

    for p in policies:
        check_policy_arg(p)
    size_texts = [_size_text(s) for s in sizes]
    if not isinstance(mode, str):
        raise ValueError(f"mode: expected 'object' or 'block', got {mode!r}")
    if format is not None and not isinstance(format, str):
        raise ValueError(f"format: expected a format name, got {format!r}")
    unit_size = _flag("unit_size", unit_size)
    skip_invalid = _flag("skip_invalid", skip_invalid)
    page_size = _whole("page_size", page_size, 1, 2**63)
    threads = _whole("threads", threads, 0, 4096)
    extra = dict(per_process=bool(per_process), interval=interval, **_hints_args(hints))
    from iostack._errors import python_errors

    with python_errors():
        rows = _simulate_rows(trace, policies, size_texts, mode, unit_size, page_size, format, skip_invalid, threads, mapping, extra)
    _warn_cache_too_small(rows)
    if interval is not None:
        import json

        from iostack.intervals import series

        results = [{**r, "series": json.loads(r["series"])} for r in rows]
        df = series(results, frame)
        if frame == "pandas":
            df.attrs["results"] = results
        return df
    if many_p or many_s:
        from iostack.experiment import frame_of

        return frame_of(list(rows), frame)
    return rows[0]


def _hints_args(hints: Any) -> dict:
    """The core's hint arguments: a path or oracle spec as text, Python data as JSON."""
    import json

    if hints is None:
        return {}
    if isinstance(hints, (str, os.PathLike)):
        return {"hints": os.fspath(hints)}
    if isinstance(hints, Mapping) and "process" in hints:
        data = dict(hints)
    elif isinstance(hints, (list, tuple)):
        data = {"process": list(hints)}
    else:
        raise ValueError("hints: expected a path, 'oracle:lookahead=N', a list of process dicts or {'process': [...]}")

    def keys_as_text(x: Any) -> Any:
        if isinstance(x, Mapping):
            return {str(k): keys_as_text(v) for k, v in x.items()}
        if isinstance(x, (list, tuple)):
            return [keys_as_text(v) for v in x]
        if hasattr(x, "item"):  # numpy scalars
            return x.item()
        return x

    return {"hints_json": json.dumps(keys_as_text(data))}


def _file_arrays(trace: Any):
    """The ``file_id`` (int64, -1: none) and ``file_offset`` columns of an in-memory trace."""
    import numpy as np

    if hasattr(trace, "columns"):
        cols = {c: trace[c].to_numpy() for c in trace.columns}
    else:
        cols = trace
    if "file_id" not in cols or cols["file_id"] is None:
        return None
    ids = np.ascontiguousarray(np.asarray(cols["file_id"]), dtype=np.int64)
    offs = cols.get("file_offset")
    offs = np.zeros(ids.shape[0], dtype=np.uint64) if offs is None else np.asarray(offs)
    offs = np.ascontiguousarray(np.where(np.asarray(offs) < 0, 0, offs), dtype=np.uint64)
    return (ids, offs)


def _warn_cache_too_small(rows) -> None:
    import warnings

    for r in rows:
        if r["requests"] and r.get("requests_larger_than_cache") == r["requests"]:
            warnings.warn(
                f"{r['policy']} at cache_size {r['cache_size']} ({r['cache_unit']}): the cache is smaller than every object "
                "of the trace, so every request misses (sizes are in bytes in sized object mode; unit_size=True counts objects)",
                stacklevel=3,
            )


def _simulate_rows(trace, policies, size_texts, mode, unit_size, page_size, format, skip_invalid, threads, mapping, extra):
    if isinstance(trace, (str, os.PathLike)):
        rows = _core.simulate(os.fspath(trace), policies, size_texts, mode=mode, unit_size=unit_size,
                              page_size=page_size, format=format, skip_invalid=skip_invalid,
                              threads=threads, mapping=mapping, **extra)
    else:
        if format is not None or mapping is not None:
            raise ValueError(f"{'format' if format is not None else 'mapping'}: applies to trace files only")
        rows = _core.simulate(None, policies, size_texts, mode=mode, unit_size=unit_size,
                              page_size=page_size, threads=threads, arrays=_arrays(trace),
                              files=_file_arrays(trace), **extra)
    return rows


def read_trace(path: PathLike, format: str | None = None, as_frame: bool = True, skip_invalid: bool = False):
    """Reads a whole trace file into memory.

    Returns a pandas DataFrame with columns ``time_ns``, ``offset``, ``length`` (bytes),
    ``op`` ('R' or 'W'), ``pid``, ``device`` (and ``file_id``, ``file_offset`` when the trace
    names files, -1 where a request has none); with ``as_frame=False`` a dict of numpy arrays
    (``op`` as uint8, 1 = write). Times are nanoseconds from the start of the trace.
    """
    import numpy as np

    d = _core.read_trace(os.fspath(path), format=format, skip_invalid=skip_invalid)
    d.pop("skipped", None)
    if not as_frame:
        return d
    import pandas as pd

    frame = pd.DataFrame(d)
    frame["op"] = np.where(d["op"] != 0, "W", "R")
    return frame


def policies() -> list[str]:
    """Names of the registered replacement policies."""
    return list(_core.policies())
