"""The timed stack from Python: ``iostack.run`` replays a trace through page cache,
prefetcher, I/O scheduler and device, like ``iostack run`` on the command line.
"""

from __future__ import annotations

import json
import os
from typing import Any, Mapping, Optional, Union

from iostack import _core

PathLike = Union[str, "os.PathLike[str]"]

# Fields of the stack configuration (``iostack run --help``; docs/timed.md).
CONFIG_FIELDS = (
    "policy", "cache", "page_size", "prefetch", "sched", "device", "layers", "queue_depth",
    "max_request", "replay", "think", "processes", "write_policy", "dirty_expire",
    "flush_interval", "file_sizes", "seed", "locality",
)


def _load_config(config: Union[None, PathLike, Mapping[str, Any]]) -> dict:
    if config is None:
        return {}
    if isinstance(config, Mapping):
        cfg = dict(config)
    else:
        with open(config, encoding="utf-8") as f:
            text = f.read()
        if text.lstrip().startswith("{"):
            cfg = json.loads(text)
        else:
            try:
                import tomllib  # Python 3.11+
            except ModuleNotFoundError:  # pragma: no cover - older Pythons
                import tomli as tomllib  # type: ignore[no-redef]
            cfg = tomllib.loads(text)
    # An echoed result re-runs as it is.
    if isinstance(cfg.get("config"), Mapping):
        cfg = dict(cfg["config"])
    return cfg


def run(
    trace: Any,
    *,
    config: Union[None, PathLike, Mapping[str, Any]] = None,
    dump: Optional[Mapping[str, PathLike]] = None,
    locality: Optional[bool] = None,
    format: Optional[str] = None,
    mapping: Optional[str] = None,
    skip_invalid: bool = False,
    cache_size: Any = None,
    frame: str = "pandas",
    jobs: int = 0,
    **options: Any,
):
    """Replays ``trace`` through the timed stack and returns the result as a dict.

    The stack is ``config`` (a dict, or a TOML/JSON file, or an earlier result) updated with
    ``options``, which take the names of ``iostack run``'s flags with underscores::

        iostack.run("t.csv", policy="lru", prefetch="linux", sched="cscan",
                    device="hdd:st3400620as", cache="64MiB")

    ``dump`` maps boundaries (``front``, ``cache``, ``sched``, ``device``) to trace files to
    write. Locality (stack and block affinity) is measured at the four boundaries unless
    ``locality=False`` (or the config's ``locality`` is false); it is under ``locality`` in the
    result, one report per boundary. The result has
    ``config`` (re-runnable), ``elapsed_ns``, ``device_busy_ns``, ``device_requests``,
    ``hit_ratio`` and the per-layer counters (see docs/timed.md).

    ``cache_size`` is the cache (``cache``, its old name, is accepted too), absolute (``"64MiB"``,
    blocks) or relative to the trace's footprint in blocks (``"1%"``, ``0.01``).

    Lists run a grid: a list of traces and any option given as a list (``policy=["lru",
    "arc"]``, ``cache_size=["1%", "10%"]``) run every combination on all cores (as
    ``iostack.sweep`` with ``kind="run"``) and return a DataFrame with one row per run, the
    result flattened to columns (``elapsed_ns``, ``response.p99_ns``, ``device.busy_ns``, ...;
    pandas, or polars with ``frame="polars"``).
    """
    if "cache" in options:
        if cache_size is not None:
            raise TypeError("run() got both cache_size and its old name cache")
        cache_size = options.pop("cache")
    grid = isinstance(trace, (list, tuple)) or isinstance(cache_size, (list, tuple)) or any(
        isinstance(v, (list, tuple)) and k != "layers" for k, v in options.items()
    )
    if grid:
        return _run_grid(trace, config, dump, locality, format, mapping, skip_invalid, cache_size, frame, jobs, options)
    if cache_size is not None:
        options["cache"] = cache_size
    cfg = _load_config(config)
    for key, value in options.items():
        if key not in CONFIG_FIELDS:
            raise TypeError(f"run() got an unknown option {key!r}; valid: {', '.join(CONFIG_FIELDS)}")
        if value is not None:
            cfg[key] = str(value) if key in ("cache", "max_request") else value
    dumps = [(str(layer), os.fspath(path)) for layer, path in (dump or {}).items()]
    if locality is not None:
        cfg["locality"] = bool(locality)
    out = _core.run_timed(os.fspath(trace), json.dumps(cfg), dumps, None, format, mapping, skip_invalid)
    return json.loads(out)


def _run_grid(trace, config, dump, locality, format, mapping, skip_invalid, cache_size, frame, jobs, options):
    """``run`` over lists: every combination, as a ``kind="run"`` sweep."""
    from iostack.experiment import sweep

    if dump:
        raise ValueError("dump: applies to a single run, not to lists of traces or options")
    base = _load_config(config)
    if "cache" in base:
        base["cache_size"] = base.pop("cache")
    axes = {}
    for key, value in options.items():
        if key not in CONFIG_FIELDS:
            raise TypeError(f"run() got an unknown option {key!r}; valid: {', '.join(CONFIG_FIELDS)}")
        if isinstance(value, (list, tuple)) and key != "layers":
            axes[key] = list(value)
        elif value is not None:
            base[key] = value
    if locality is not None:
        base["locality"] = bool(locality)
    for key, value in (("format", format), ("mapping", mapping)):
        if value is not None:
            base[key] = value
    if skip_invalid:
        base["skip_invalid"] = True
    sizes = None
    if cache_size is not None:
        sizes = [str(s) if not isinstance(s, float) else repr(s) for s in (cache_size if isinstance(cache_size, (list, tuple)) else [cache_size])]
    traces = [os.path.abspath(os.fspath(t)) for t in (trace if isinstance(trace, (list, tuple)) else [trace])]
    return sweep(traces=traces, kind="run", base=base, axes=axes, cache_size=sizes, frame=frame, jobs=jobs)
