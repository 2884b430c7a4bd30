"""Error messages of the Rust core in the words of the Python API.

The core names options as the command line spells them (``--page-size: ...``) and its argument
parser adds command-line advice ("For more information, try '--help'"). From Python the same
error names the keyword argument (``page_size: ...``) and gives no command-line advice.
"""

from __future__ import annotations

import contextlib
import re

_CLAP_INVALID = re.compile(r"^error: invalid value '(?P<value>[^']*)' for '--(?P<opt>[a-z0-9-]+)(?: <[A-Z_]+>)?'\s*(?P<rest>.*)$", re.S)


def _arg(opt: str) -> str:
    return opt.replace("-", "_")


def python_message(msg: str) -> str:
    """``msg`` with command-line option names turned into keyword names and CLI advice removed."""
    msg = re.sub(r"\s*For more information, try '--help'\.?\s*$", "", msg.strip())
    msg = re.sub(r"\n\s*Usage:.*$", "", msg, flags=re.S)
    m = _CLAP_INVALID.match(msg)
    if m:
        rest = " ".join(m["rest"].split()).strip()
        rest = re.sub(r"^\[possible values: (.*)\]$", r"(possible values: \1)", rest)
        msg = f"{_arg(m['opt'])}: invalid value '{m['value']}'" + (f" {rest}" if rest else "")
    msg = re.sub(r"^error: ", "", msg)
    # "--cache-size: ..." at the start, "--mapping offset=..." or "`--unit-size`" inside.
    msg = re.sub(r"(?<![\w-])--([a-z][a-z0-9-]*)", lambda m: _arg(m[1]), msg)
    return msg


@contextlib.contextmanager
def python_errors():
    """Re-raises a ValueError from the core with :func:`python_message`'s text."""
    try:
        yield
    except ValueError as e:
        text = python_message(str(e))
        if text == str(e):
            raise
        raise type(e)(text) from None
