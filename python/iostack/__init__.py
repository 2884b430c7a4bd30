"""iostack: simulator and measurement tool for the storage I/O stack.

The heavy lifting is done by a Rust core (``iostack._core``); this package adds DataFrames,
plots and reports on top.

>>> import iostack
>>> iostack.simulate("trace.vscsi", policy=["lru", "arc"], cache_size=[489, 2448], unit_size=True)
"""

from iostack._core import __version__

__all__ = ["__version__", "policies", "read_trace", "simulate", "analyze", "Analysis", "run", "sweep", "series", "Policy", "Access", "kdsim_train", "kdsim_accuracy"]

# The public functions live in submodules that are imported on first use (PEP 562), so that the
# `iostack` console command, which imports this package, starts without loading them (nor
# typing, dataclasses, json, numpy or pandas).
_LAZY = {
    "policies": "iostack._sim",
    "read_trace": "iostack._sim",
    "simulate": "iostack._sim",
    "analyze": "iostack.analysis",
    "Analysis": "iostack.analysis",
    "run": "iostack.timed",
    "Policy": "iostack.policy",
    "Access": "iostack.policy",
    "sweep": "iostack.experiment",
    "kdsim_train": "iostack.kdsim",
    "kdsim_accuracy": "iostack.kdsim",
    "series": "iostack.intervals",
}
_SUBMODULES = ("_sim", "analysis", "timed", "plots", "cli", "policy", "experiment", "kdsim", "intervals")


def __getattr__(name):
    import importlib

    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    if name == "plot":  # iostack.plot: the plotting functions
        return importlib.import_module("iostack.plots")
    if name in _SUBMODULES:
        return importlib.import_module(f"iostack.{name}")
    raise AttributeError(f"module 'iostack' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY) | set(_SUBMODULES) | {"plot"})
