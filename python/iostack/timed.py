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


class RunResult(dict):
    """The result of :func:`run`: a plain dict (as ``iostack run --json`` prints it) that Jupyter
    shows as tables of the results and the echoed configuration, and the run's figures."""

    def _repr_html_(self) -> str:
        from iostack.report import run_html

        return run_html(self)


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
) -> RunResult:
    """Replays ``trace`` through the timed stack and returns the result as a dict
    (:class:`RunResult`, which Jupyter shows as tables and figures).

    The stack is ``config`` (a dict, or a TOML/JSON file, or an earlier result) updated with
    ``options``, which take the names of ``iostack run``'s flags with underscores (``policy``
    may also be an :class:`iostack.Policy` subclass, built once with the cache's capacity in
    blocks; its name is echoed in the config)::

        iostack.run("t.csv", policy="lru", prefetch="linux", sched="cscan",
                    device="hdd:st3400620as", cache="64MiB")

    ``dump`` maps boundaries (``front``, ``cache``, ``sched``, ``device``) to trace files to
    write. Locality (stack and block affinity) is measured at the four boundaries unless
    ``locality=False`` (or the config's ``locality`` is false); it is under ``locality`` in the
    result, one report per boundary. The result has
    ``config`` (re-runnable), ``elapsed_ns``, ``device_busy_ns``, ``device_requests``,
    ``hit_ratio`` and the per-layer counters (see docs/timed.md).
    """
    cfg = _load_config(config)
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
    dumps = [(str(layer), os.fspath(path)) for layer, path in (dump or {}).items()]
    if locality is not None:
        cfg["locality"] = bool(locality)
    from iostack._errors import python_errors

    with python_errors():
        out = _core.run_timed(os.fspath(trace), json.dumps(cfg), dumps, None, format, mapping, skip_invalid, policy_class)
    result = RunResult(json.loads(out))
    if result.get("notes"):
        import warnings

        for note in result["notes"]:
            warnings.warn(note, stacklevel=2)
    return result
