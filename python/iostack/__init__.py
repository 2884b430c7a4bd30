"""iostack: simulator and measurement tool for the storage I/O stack.

The heavy lifting is done by a Rust core (``iostack._core``); this package adds DataFrames,
plots and reports on top.

>>> import iostack
>>> iostack.simulate("trace.vscsi", policy=["lru", "arc"], cache_size=[489, 2448], unit_size=True)
"""

from iostack._core import __version__
from iostack._sim import policies, read_trace, simulate
from iostack.analysis import Analysis, analyze
from iostack.timed import run

__all__ = ["__version__", "policies", "read_trace", "run", "simulate", "analyze", "Analysis"]
