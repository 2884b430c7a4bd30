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
    if len(argv) > 1 and argv[1] == "sweep" and _ray_requested(argv[2:]):
        sys.exit(_sweep_on_ray(argv[2:]))
    sys.exit(_core.main(argv))


def _ray_requested(args) -> bool:
    return "--backend=ray" in args or any(a == "--backend" and b == "ray" for a, b in zip(args, args[1:]))


def _sweep_on_ray(args) -> int:
    """``iostack sweep ... --backend ray``: the Rust sweep with Ray as the backend. The options
    are those of ``iostack sweep --help``."""
    import argparse
    import os

    p = argparse.ArgumentParser(prog="iostack sweep")
    p.add_argument("experiment")
    p.add_argument("-o", "--output")
    p.add_argument("--resume", action="store_true")
    p.add_argument("--backend", choices=["local", "ray"], default="ray")
    p.add_argument("--address")
    p.add_argument("-j", "--jobs", type=int, default=0)
    p.add_argument("--dry-run", action="store_true")
    p.add_argument("-q", "--quiet", action="store_true")
    a = p.parse_args(args)
    if a.resume and not a.output:
        p.error("--resume needs --output")
    from iostack.experiment import ray_runner

    try:
        with open(a.experiment, encoding="utf-8") as f:
            text = f.read()
        folder = os.path.dirname(os.path.abspath(a.experiment))
        rows, failures, total, skipped, echo = _core.sweep(
            text, a.experiment, folder, a.output, a.resume, a.jobs, a.quiet, ray_runner(a.address), a.dry_run
        )
    except (OSError, ValueError, ImportError) as e:
        print(f"iostack: error: {e}", file=sys.stderr)
        return 1
    if a.dry_run:
        print(echo)
        return 0
    if not a.output:
        import csv
        import json

        table = json.loads(rows)
        columns = list(dict.fromkeys(k for r in table for k in r))
        w = csv.DictWriter(sys.stdout, fieldnames=columns, lineterminator="\n")
        w.writeheader()
        w.writerows(table)
    if not a.quiet:
        where = f"; results in {a.output}" if a.output else ""
        print(f"sweep: {total} runs ({total - skipped} run now, {skipped} already in the output), {len(failures)} failed{where}", file=sys.stderr)
    for point, error in failures:
        print(f"failed: {point}: {error}", file=sys.stderr)
    if failures:
        print(f"iostack: error: {len(failures)} of {total} runs failed (their rows hold the error)", file=sys.stderr)
        return 1
    return 0


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
