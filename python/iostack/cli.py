"""The ``iostack`` console command: runs the Rust command line in-process.

Everything is the Rust command line (``iostack._core.main``), except ``iostack analyze ...
--plot DIR`` and ``iostack repro NAME --plot DIR``: plots are drawn with matplotlib here, so
those commands run through ``_core.analyze_cli`` / ``_core.repro_cli`` (which print the usual
output and hand back the report) and then write the PNG files with ``iostack.plots``.
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
        sys.exit(_with_plots(argv, _core.analyze_cli, "plot_analysis"))
    if len(argv) > 1 and argv[1] == "repro" and _plot_dir(argv[2:]) is not None:
        sys.exit(_with_plots(argv, _core.repro_cli, "plot_repro"))
    sys.exit(_core.main(argv))


def _with_plots(argv, run, plotter) -> int:
    """Runs the command through ``run`` and plots its report with ``iostack.plots.<plotter>``;
    the exit code is the command's (a reproduction whose checks differ is still plotted)."""
    code, report = run(argv)
    if report is None:
        return code
    import json

    from iostack import plots

    try:
        paths = getattr(plots, plotter)(json.loads(report), _plot_dir(argv[2:]))
    except OSError as e:
        print(f"iostack: error: --plot: {e}", file=sys.stderr)
        return 1
    for p in paths:
        print(f"wrote {p}", file=sys.stderr)
    return code


if __name__ == "__main__":
    main()
