"""The timed stack from Python: ``iostack.run`` replays a trace through page cache,
prefetcher, I/O scheduler and device, like ``iostack run`` on the command line.
"""

from __future__ import annotations

import json
import warnings
import os
from typing import Any, Mapping, Optional, Union

from iostack import _core
from iostack._sim import _flag

PathLike = Union[str, "os.PathLike[str]"]

# Fields of the stack configuration (``iostack run --help``; docs/timed.md).
CONFIG_FIELDS = (
    "policy", "cache", "page_size", "prefetch", "sched", "device", "layers", "queue_depth",
    "max_request", "replay", "think", "processes", "write_policy", "dirty_expire",
    "flush_interval", "file_sizes", "seed", "locality", "redcap", "ada", "sched_select", "prefetch_select",
    "hints",
    "per_process", "device_request_locality", "preset", "interval", "preload",
    "cpus", "cpu_quantum",
)

# The keys a preset (``preset="acfs-1"`` .. ``"acfs-6"``) sets; docs/policies.md, Presets.
PRESET_KEYS = ("policy", "prefetch", "sched", "page_size", "cache", "max_request", "think")

# Options whose value is itself a list (not a grid axis): disk-side layers, and hints given as
# a list of process dicts.
_LIST_VALUED = ("layers", "hints")


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


def device_map(devices: Mapping[Any, str]) -> str:
    """The ``device`` string of a map from the trace's device ids to device specs:
    ``{0: "hdd:wd7200", 1: "ssd:x25m"}`` -> ``"0=hdd:wd7200,1=ssd:x25m"`` (each device id gets its
    own device and scheduler; see docs/timed.md, Devices)."""
    if not devices:
        raise ValueError("device: the map of device ids to specs is empty")
    parts = []
    for key, spec in devices.items():
        try:
            ident = int(key)
        except (TypeError, ValueError):
            raise ValueError(f"device: {key!r} is not a device id (a non-negative integer)") from None
        if ident < 0 or str(ident) != str(key).strip():
            raise ValueError(f"device: {key!r} is not a device id (a non-negative integer)")
        if not isinstance(spec, str) or not spec.strip():
            raise ValueError(f"device: the spec of device id {ident} must be a non-empty string such as 'hdd:wd7200'")
        parts.append((ident, spec.strip()))
    return ",".join(f"{i}={spec}" for i, spec in sorted(parts))


def hints_config(hints: Any) -> Any:
    """The config's ``hints``: a path or ``"oracle:lookahead=N"`` as text, or hints as Python
    data (a list of process dicts, or ``{"process": [...]}``, as the TOML file lays them out)
    written into the config, so that the echoed config re-runs with them."""
    from iostack._sim import _hints_args

    args = _hints_args(hints)
    if "hints" in args:
        return args["hints"]
    return json.loads(args["hints_json"])


class RunResult(dict):
    """The result of :func:`run`: a plain dict (as ``iostack run --json`` prints it) that Jupyter
    shows as tables of the results and the echoed configuration, and the run's figures."""

    def _repr_html_(self) -> str:
        from iostack.report import run_html

        return run_html(self)


def run(
    trace: Any,
    *,
    config: Union[None, PathLike, Mapping[str, Any]] = None,
    dump: Optional[Mapping[str, PathLike]] = None,
    latency_log: Optional[PathLike] = None,
    locality: Optional[bool] = None,
    format: Optional[str] = None,
    mapping: Optional[str] = None,
    skip_invalid: bool = False,
    cache_size: Any = None,
    frame: str = "pandas",
    jobs: int = 0,
    **options: Any,
):
    """Replays ``trace`` through the timed stack and returns the result as a dict
    (:class:`RunResult`, which Jupyter shows as tables and figures).

    The stack is ``config`` (a dict, or a TOML/JSON file, or an earlier result) updated with
    ``options``, which take the names of ``iostack run``'s flags with underscores (``policy``
    may also be an :class:`iostack.Policy` subclass, built once with the cache's capacity in
    blocks; its name is echoed in the config)::

        iostack.run("t.csv", policy="lru", prefetch="linux", sched="cscan",
                    device="hdd:st3400620as", cache="64MiB")

    ``preset="acfs-1"`` .. ``"acfs-6"`` (the ACFS paper's six configurations; docs/policies.md)
    sets policy, prefetch, sched, page size, cache, max request and think time over the config
    file's; the other options given override it.

    ``device`` is one spec for every device id of the trace, or a map giving each device id its
    own device and scheduler: ``{0: "hdd:wd7200", 1: "ssd:x25m"}`` or ``"0=hdd:wd7200,1=ssd:x25m"``
    (the result then has one entry per device under ``devices``).

    ``dump`` maps boundaries (``front``, ``cache``, ``sched``, ``device``) to trace files to
    write. Locality (stack and block affinity) is measured at the four boundaries unless
    ``locality=False`` (or the config's ``locality`` is false); it is under ``locality`` in the
    result, one report per boundary. The result has
    ``config`` (re-runnable), ``elapsed_ns``, ``device_busy_ns``, ``device_requests``,
    ``hit_ratio`` and the per-layer counters (see docs/timed.md).

    ``hints`` (for application-controlled policies such as ``"lrusp"``) is a path to a TOML
    hints file, ``"oracle:lookahead=N"``, or the hints as Python data (see :func:`iostack.sim`);
    ``per_process=True`` adds each process's cache hits and misses under ``processes`` (always
    there with ``"lrusp"``).

    ``latency_log`` writes every device request's queue, dispatch and completion times (blktrace's
    Q, D and C) to a CSV file (docs/timed.md, "Latency log").

    ``interval`` (``"10s"``, ``"1h"`` of virtual time, or ``"100000req"``) makes the run count
    per interval, and the call then returns that instead: a DataFrame with one row per run and
    interval (``start``, ``start_ns``, ``end_ns``, ``requests``, ``completed``, ``accesses``,
    ``hits``, ``hit_ratio``, ``miss_ratio``, ``device_requests``, ``device_busy_ns``,
    ``response.p50_ns``, ``response.p99_ns``, ...; see :func:`iostack.series`), pandas or polars
    (``frame``). With pandas the full result is in ``df.attrs["results"]``.

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
        isinstance(v, (list, tuple)) and k not in _LIST_VALUED for k, v in options.items()
    )
    if grid:
        if latency_log is not None:
            raise ValueError("latency_log: applies to a single run, not to lists of traces or options")
        df = _run_grid(trace, config, dump, locality, format, mapping, skip_invalid, cache_size, frame, jobs, options)
        if options.get("interval") is not None or "interval" in _load_config(config):
            from iostack.intervals import series

            return series(df, frame)
        return df
    if cache_size is not None:
        options["cache"] = cache_size
    if not isinstance(trace, (str, os.PathLike)):
        raise ValueError(f"trace: expected a path, got {type(trace).__name__}")
    cfg = _load_config(config)
    if options.get("preset") is not None:
        # The keyword's preset overrides the config file's keys; other keywords override it.
        for key in PRESET_KEYS:
            cfg.pop(key, None)
    policy_class = None
    if "policy" in options:
        from iostack.policy import check_policy_arg, is_policy_class, policy_name

        check_policy_arg(options["policy"])
        if is_policy_class(options["policy"]):
            policy_class = options.pop("policy")
            cfg["policy"] = policy_name(policy_class)
    for key, value in options.items():
        if key not in CONFIG_FIELDS:
            raise TypeError(f"run() got an unknown option {key!r}; valid: {', '.join(CONFIG_FIELDS)}")
        if value is not None:
            cfg[key] = str(value) if key in ("cache", "max_request") else value
    if isinstance(cfg.get("device"), Mapping):
        cfg["device"] = device_map(cfg["device"])
    if cfg.get("hints") is not None:
        cfg["hints"] = hints_config(cfg["hints"])
    if "per_process" in cfg:
        cfg["per_process"] = _flag("per_process", cfg["per_process"])
    dumps = [(str(layer), os.fspath(path)) for layer, path in (dump or {}).items()]
    if latency_log is not None:
        dumps.append(("latency", os.fspath(latency_log)))
    if locality is not None:
        cfg["locality"] = _flag("locality", locality)
    skip_invalid = _flag("skip_invalid", skip_invalid)
    for name, value in (("format", format), ("mapping", mapping)):
        if value is not None and not isinstance(value, str):
            raise ValueError(f"{name}: expected a string, got {value!r}")
    from iostack._errors import python_errors

    with python_errors():
        out = _core.run_timed(os.fspath(trace), json.dumps(cfg), dumps, None, format, mapping, skip_invalid, policy_class)
    result = RunResult(json.loads(out))
    # What the replay found questionable in the trace (also under ``warnings`` in the result).
    for message in result.get("warnings", []):
        warnings.warn(message, TraceOrderWarning, stacklevel=2)
    # Remarks on how to read the result (also under ``notes``).
    for note in result.get("notes", []):
        warnings.warn(note, stacklevel=2)
    if result.get("series") is not None:
        from iostack.intervals import series

        df = series([{**result, "trace": os.fspath(trace)}], frame)
        if frame == "pandas":
            df.attrs["results"] = [result]
        return df
    return result


class TraceOrderWarning(UserWarning):
    """The trace does not interleave its processes the way its times say (see docs/timed.md)."""


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
        if isinstance(value, (list, tuple)) and key not in _LIST_VALUED:
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
