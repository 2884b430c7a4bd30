"""The timed stack from Python: ``iostack.run`` replays a trace through page cache,
prefetcher, I/O scheduler and device, like ``iostack run`` on the command line.
"""

from __future__ import annotations

import json
import os
from typing import Any, Mapping, Optional, Union

from iostack import _core
from iostack._sim import _flag

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
    trace: PathLike,
    *,
    config: Union[None, PathLike, Mapping[str, Any]] = None,
    dump: Optional[Mapping[str, PathLike]] = None,
    locality: Optional[bool] = None,
    format: Optional[str] = None,
    mapping: Optional[str] = None,
    skip_invalid: bool = False,
    **options: Any,
) -> dict:
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
    """
    if not isinstance(trace, (str, os.PathLike)):
        raise ValueError(f"trace: expected a path, got {type(trace).__name__}")
    cfg = _load_config(config)
    for key, value in options.items():
        if key not in CONFIG_FIELDS:
            raise TypeError(f"run() got an unknown option {key!r}; valid: {', '.join(CONFIG_FIELDS)}")
        if value is not None:
            cfg[key] = str(value) if key in ("cache", "max_request") else value
    dumps = [(str(layer), os.fspath(path)) for layer, path in (dump or {}).items()]
    if locality is not None:
        cfg["locality"] = _flag("locality", locality)
    skip_invalid = _flag("skip_invalid", skip_invalid)
    for name, value in (("format", format), ("mapping", mapping)):
        if value is not None and not isinstance(value, str):
            raise ValueError(f"{name}: expected a string, got {value!r}")
    out = _core.run_timed(os.fspath(trace), json.dumps(cfg), dumps, None, format, mapping, skip_invalid)
    return json.loads(out)
