"""Experiments from Python: ``iostack.sweep`` runs a grid of traces x stacks x cache sizes, like
``iostack sweep EXPERIMENT.toml``, and returns one row per run as a DataFrame.

The grid, the runs, resuming, the output file and the progress bar are the Rust code of the
command line (``iostack._core.sweep``); this module builds the experiment from keywords, and
provides the Ray backend: the same tasks handed to Ray workers, each running
``iostack._core.sweep_task`` (docs/experiments.md).
"""

from __future__ import annotations

import json
import os
import warnings
from typing import Any, Iterable, Mapping, Optional, Sequence, Union

from iostack import _core

PathLike = Union[str, "os.PathLike[str]"]


def frame_of(rows: list, frame: str = "pandas"):
    """Rows (dicts) as a pandas DataFrame, or a polars one with ``frame="polars"``."""
    if frame == "pandas":
        import pandas as pd

        return pd.DataFrame(rows)
    if frame == "polars":
        import polars as pl

        return pl.DataFrame(rows, infer_schema_length=None)
    raise ValueError(f"frame: `{frame}` is not pandas or polars")


def _run_task(task: str) -> str:
    # Runs on a Ray worker: one task, its runs single-threaded, rows back as JSON.
    from iostack import _core as core

    return core.sweep_task(task, 1)


def _run_shipped_task(task: str, data: bytes, name: str) -> str:
    # Runs on a Ray worker: the trace came through the object store; it is written to a
    # temporary folder under its own file name (the format is detected from it) and read there.
    import json
    import shutil
    import tempfile

    from iostack import _core as core

    folder = tempfile.mkdtemp(prefix="iostack-trace-")
    try:
        path = os.path.join(folder, name)
        with open(path, "wb") as f:
            f.write(data)
        t = json.loads(task)
        t["trace"]["path"] = path
        return core.sweep_task(json.dumps(t), 1)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


#: How the Ray backend gets trace files to the workers.
SHIP = ("path", "store")


def ray_runner(address: Optional[str] = None, num_cpus: Optional[int] = None, ship: str = "path"):
    """A backend for ``_core.sweep`` that runs each task as a Ray task (one CPU each).

    ``address`` names an existing cluster (``"auto"``, ``"ray://head:10001"``); without it a
    local Ray instance is started (with ``num_cpus`` CPUs, all by default) and stopped at the
    end. ``ship`` says how trace files reach the workers: ``"path"`` (they read the file at the
    driver's path, so on a cluster it must be there on every node: a shared file system), or
    ``"store"`` (the driver reads each trace file once, puts its bytes in Ray's object store, and
    every task over that trace gets them from there: no shared file system needed). Generated
    traces need neither.
    """
    if ship not in SHIP:
        raise ValueError(f"ship: `{ship}` is not path or store")
    try:
        import ray
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("the Ray backend needs the `ray` package: pip install 'iostack[ray]'") from e

    def run(tasks: Sequence[str]) -> Iterable[str]:
        started = False
        if not ray.is_initialized():
            kwargs = {"address": address, "include_dashboard": False, "log_to_driver": False}
            if address is None and num_cpus is not None:
                kwargs["num_cpus"] = num_cpus
            ray.init(**kwargs)
            started = True
        try:
            remote = ray.remote(num_cpus=1)(_run_task)
            shipped = ray.remote(num_cpus=1)(_run_shipped_task)
            stored = {}
            pending = []
            for t in tasks:
                trace = json.loads(t)["trace"] if ship == "store" else {}
                if trace.get("source") == "file":
                    path = trace["path"]
                    if path not in stored:
                        # Read on the driver, once per trace, shared by its tasks.
                        with open(path, "rb") as f:
                            stored[path] = ray.put(f.read())
                    pending.append(shipped.remote(t, stored[path], os.path.basename(path)))
                else:
                    pending.append(remote.remote(t))
            while pending:
                ready, pending = ray.wait(pending, num_returns=1)
                yield ray.get(ready[0])
        finally:
            if started:
                ray.shutdown()

    return run


def _experiment_text(experiment, traces, kind, base, axes, cache_size, points) -> tuple[str, str, str]:
    """(text, origin, folder) of the experiment, from a file or from keywords."""
    if experiment is not None and not isinstance(experiment, Mapping):
        path = os.fspath(experiment)
        with open(path, encoding="utf-8") as f:
            text = f.read()
        return text, path, os.path.dirname(os.path.abspath(path))
    spec: dict = dict(experiment or {})
    head = dict(spec.get("experiment", {}))
    if traces is not None:
        head["traces"] = [os.fspath(t) for t in ([traces] if isinstance(traces, (str, os.PathLike)) else traces)]
    if kind is not None:
        head["kind"] = kind
    head.setdefault("kind", "sim")
    if cache_size is not None:
        head["cache_size"] = list(cache_size) if isinstance(cache_size, (list, tuple)) else [cache_size]
    spec["experiment"] = head
    if base is not None:
        spec["base"] = dict(base)
    if axes is not None:
        spec["axes"] = {k: (list(v) if isinstance(v, (list, tuple)) else [v]) for k, v in axes.items()}
    if points is not None:
        spec["points"] = [dict(p) for p in points]
    return json.dumps(spec), "experiment", os.getcwd()


def sweep(
    experiment: Union[None, PathLike, Mapping[str, Any]] = None,
    *,
    traces: Union[None, PathLike, Sequence[PathLike]] = None,
    kind: Optional[str] = None,
    base: Optional[Mapping[str, Any]] = None,
    axes: Optional[Mapping[str, Any]] = None,
    cache_size: Any = None,
    points: Optional[Sequence[Mapping[str, Any]]] = None,
    output: Optional[PathLike] = None,
    resume: bool = False,
    backend: str = "local",
    address: Optional[str] = None,
    ship: str = "path",
    jobs: int = 0,
    quiet: bool = True,
    frame: str = "pandas",
):
    """Runs an experiment's grid and returns one row per run (pandas, or polars with
    ``frame="polars"``).

    ``experiment`` is an experiment file (TOML or JSON, docs/experiments.md) or a dict of the
    same shape; or give its parts as keywords::

        iostack.sweep(traces=["a.csv", "b.csv"], kind="sim", base={"mode": "block"},
                      axes={"policy": ["lru", "arc"]}, cache_size=["1%", "10%"])

    Each row holds the trace, each axis's value, ``cache_size_spec`` (the size as given),
    ``cache_size`` (absolute, in ``cache_unit``) and the result's fields (``iostack sim``'s, or
    ``iostack run``'s flattened: ``elapsed_ns``, ``response.p99_ns``, ...); a failed run has its
    message in ``error`` (and a warning lists the failures). With ``output`` the rows are also
    appended to that file (.parquet, .csv, .jsonl) as runs finish, and ``resume=True`` skips the
    points already there. ``backend="ray"`` runs the tasks on Ray (``address`` of a cluster, or a
    local instance), trace files shipped by path (``ship="path"``, a shared file system) or
    through Ray's object store (``ship="store"``); the rows are the same as with the local
    backend. The resolved experiment is
    in ``df.attrs["experiment"]`` (pandas).
    """
    text, origin, folder = _experiment_text(experiment, traces, kind, base, axes, cache_size, points)
    if backend == "local":
        runner = None
    elif backend == "ray":
        runner = ray_runner(address, ship=ship)
    else:
        raise ValueError(f"backend: `{backend}` is not local or ray")
    rows, failures, total, skipped, echo = _core.sweep(
        text, origin, folder, None if output is None else os.fspath(output), bool(resume), int(jobs), bool(quiet), runner
    )
    if failures:
        listed = "; ".join(f"{p}: {e}" for p, e in failures[:5])
        warnings.warn(f"{len(failures)} of {total} runs failed (their rows hold the error): {listed}", RuntimeWarning, stacklevel=2)
    df = frame_of(json.loads(rows), frame)
    if frame == "pandas":
        df.attrs["experiment"] = json.loads(echo)
    return df
