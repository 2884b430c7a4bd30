"""KDSim from Python: ``iostack.kdsim_train`` trains a table disk model against a device model,
``iostack.kdsim_accuracy`` replays a trace with KDSim's virtual disk beside the real (modelled)
device, like ``iostack kdsim train`` and ``iostack kdsim accuracy --json`` (docs/devices.md).
"""

from __future__ import annotations

import json
import os
from typing import Any, Optional, Union

from iostack import _core

PathLike = Union[str, "os.PathLike[str]"]


def kdsim_train(
    device: str,
    output: PathLike,
    *,
    samples: int = 64,
    seed: int = 0,
    values_per_cell: int = 64,
    capacity: Any = None,
    gap: str = "0ns",
    mixed: bool = False,
) -> dict:
    """Trains a table model off line against ``device`` (e.g. ``"hdd:st3400620as"``) and writes
    it to ``output`` (JSON; it loads with ``device="table:PATH"`` and as ``kdsim_accuracy``'s
    ``table``). Every reachable cell gets ``samples`` requests in a seeded random order, the read
    table first (``mixed=True``: one order over both tables); ``gap`` is idle time before each
    request; ``capacity`` gives one (``"400GB"``) to a model that has none.

    Returns a dict: ``device``, ``output``, ``requests``, ``cells`` (trained), ``unreachable``,
    ``moves`` (unrecorded head moves), ``columns``, ``capacity_bytes``, ``values_per_cell`` and
    ``device_ns`` (simulated device time). A bad device spec or parameter raises ``ValueError``.
    """
    for name, value in (("samples", samples), ("seed", seed), ("values_per_cell", values_per_cell)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"{name}: expected a non-negative integer, got {value!r}")
    return json.loads(
        _core.kdsim_train(
            str(device),
            os.fspath(output),
            samples,
            seed,
            values_per_cell,
            None if capacity is None else str(capacity),
            str(gap),
            bool(mixed),
        )
    )


def kdsim_accuracy(
    trace: PathLike,
    device: str,
    *,
    table: Optional[PathLike] = None,
    window: int = 1000,
    sched: str = "noop",
    cache_size: Any = "64MiB",
    policy: str = "lru",
    prefetch: str = "linux",
    max_request: Any = "128KiB",
    size_blind: bool = False,
    values_per_cell: int = 64,
    save_table: Optional[PathLike] = None,
    redcap: Optional[str] = None,
    format: Optional[str] = None,
    frame: str = "pandas",
) -> dict:
    """Replays ``trace`` through the timed stack with KDSim's virtual disk beside ``device`` and
    compares their I/O times per window of ``window`` requests (those entering the scheduler).

    The virtual disk's table starts from ``table`` (a file from :func:`kdsim_train`, for the
    device's capacity) or empty, and learns on line from the real device's service times;
    ``size_blind=True`` answers every look-up with its distance column's mean over all sizes (the
    paper's "VD 64 average"); ``save_table`` writes the table as learned by the end;
    ``redcap="on"`` (or ``"size=64MiB,segment=128KiB,hit=5us"``) puts REDCAP, always on, in
    front of both disks, which then serve its segment reads and the writes (the paper's Table 1).

    Returns the dict ``iostack kdsim accuracy --json`` prints (``trace``, ``device``, ``sched``,
    ``table``, ``size_blind``, ``redcap`` (REDCAP's counts, or None), ``window``, ``requests``, ``trained_cells``,
    ``mean_abs_diff_pct``), with ``windows`` as a DataFrame (pandas, or polars with
    ``frame="polars"``): one row per window with ``start``, ``requests``, ``vd_ms``, ``rd_ms``
    and ``diff_pct`` ((vd - rd) / rd x 100, negative when the virtual disk is faster).

    A missing trace or table raises ``FileNotFoundError``; a malformed table, a table for another
    capacity, a bad option or a malformed trace raises ``ValueError`` naming the file and field.
    """
    from iostack.experiment import frame_of

    if frame not in ("pandas", "polars"):
        raise ValueError(f"frame: `{frame}` is not pandas or polars")
    for name, value in (("window", window), ("values_per_cell", values_per_cell)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"{name}: expected a non-negative integer, got {value!r}")
    stack = {
        "device": str(device),
        "sched": str(sched),
        "cache": str(cache_size),
        "policy": str(policy),
        "prefetch": str(prefetch),
        "max_request": str(max_request),
        "locality": False,
    }
    if redcap is not None:
        stack["redcap"] = str(redcap)
    out = json.loads(
        _core.kdsim_accuracy(
            os.fspath(trace),
            json.dumps(stack),
            None if table is None else os.fspath(table),
            window,
            bool(size_blind),
            values_per_cell,
            None if save_table is None else os.fspath(save_table),
            format,
        )
    )
    columns = ["start", "requests", "vd_ms", "rd_ms", "diff_pct"]
    if out["windows"]:
        windows = frame_of([{c: w[c] for c in columns} for w in out["windows"]], frame)
    else:
        windows = frame_of([{c: None for c in columns}], frame).head(0)
    out["windows"] = windows
    return out
