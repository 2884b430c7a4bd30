"""The ``iostack`` console command: runs the Rust command line in-process.

Everything is the Rust command line (``iostack._core.main``), except ``iostack analyze ...
--plot DIR``: plots are drawn with matplotlib here, so that command runs the analysis through
``_core.analyze_cli`` (which prints the usual table or JSON and hands back the report) and then
writes the PNG files with ``iostack.plots``.
"""

import sys

from iostack import _core


def _plot_dir(argv):
    """The DIR of ``--plot DIR`` / ``--plot=DIR`` in ``argv``, or None."""
    for i, a in enumerate(argv):
        if a == "--plot" and i + 1 < len(argv):
            return argv[i + 1]
        if a.startswith("--plot="):
            return a.split("=", 1)[1]
    return None


def main() -> None:
    argv = ["iostack", *sys.argv[1:]]
    if len(argv) > 1 and argv[1] == "analyze" and _plot_dir(argv[2:]) is not None:
        sys.exit(_analyze_with_plots(argv))
    sys.exit(_core.main(argv))


def _analyze_with_plots(argv) -> int:
    code, report = _core.analyze_cli(argv)
    if code != 0 or report is None:
        return code
    import json

    from iostack.plots import plot_analysis

    try:
        paths = plot_analysis(json.loads(report), _plot_dir(argv[2:]))
    except OSError as e:
        print(f"iostack: error: --plot: {e}", file=sys.stderr)
        return 1
    for p in paths:
        print(f"wrote {p}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    main()
