"""iostack: simulator and measurement tool for the storage I/O stack.

The heavy lifting is done by a Rust core (``iostack._core``); this package adds DataFrames,
plots and reports on top.
"""

from iostack._core import __version__
from iostack.timed import run

__all__ = ["__version__", "run"]
