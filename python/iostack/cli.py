"""The ``iostack`` console command: runs the Rust command line in-process.

Everything is the Rust command line (``iostack._core.main``), except ``--plot DIR`` of ``iostack
analyze``, ``iostack sim`` and ``iostack run``, ``iostack repro NAME --plot DIR``, and ``iostack report``: plots are drawn with
matplotlib here. ``analyze`` runs through ``_core.analyze_cli`` (which prints the usual table or
JSON and hands back the report); ``sim`` and ``run`` run with ``--json`` into a buffer, the
output the user asked for (JSON, or a table of the results) is printed, then the PNG files are
written with ``iostack.plots``.
"""

import os
import sys
import tempfile

from iostack import _core


def _plot_dir(argv):
    """The DIR of ``--plot DIR`` / ``--plot=DIR`` in ``argv``, or None."""
    for i, a in enumerate(argv):
        if a == "--plot" and i + 1 < len(argv):
            return argv[i + 1]
        if a.startswith("--plot="):
            return a.split("=", 1)[1]
    return None


def _without_plot(argv):
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
        elif a == "--plot":
            skip = True
        elif not a.startswith("--plot="):
            out.append(a)
    return out


def main() -> None:
    argv = ["iostack", *sys.argv[1:]]
    command = argv[1] if len(argv) > 1 else None
    if command == "report":
        from iostack.report import main as report_main

        sys.exit(report_main(argv[2:]))
    if command in ("analyze", "sim", "run") and _plot_dir(argv[2:]) is not None:
        sys.exit({"analyze": _analyze_with_plots, "sim": _sim_with_plots, "run": _run_with_plots}[command](argv))
    if command == "repro" and _plot_dir(argv[2:]) is not None:
        sys.exit(_with_plots(argv, _core.repro_cli, "plot_repro"))
    if command == "sweep" and _ray_requested(argv[2:]):
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
    p.add_argument("--ship", choices=["path", "store"], default="path")
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
            text, a.experiment, folder, a.output, a.resume, a.jobs, a.quiet, ray_runner(a.address, ship=a.ship), a.dry_run
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


def _write_plots(draw, outdir) -> int:
    try:
        paths = draw(outdir)
    except OSError as e:
        print(f"iostack: error: --plot {outdir}: {e}", file=sys.stderr)
        return 1
    for p in paths:
        print(f"wrote {p}", file=sys.stderr)
    return 0


def _analyze_with_plots(argv) -> int:
    code, report = _core.analyze_cli(argv)
    if code != 0 or report is None:
        return code
    import json

    from iostack.plots import write_analysis

    return _write_plots(lambda d: write_analysis(json.loads(report), d), _plot_dir(argv[2:]))


def _json_run(argv):
    """Runs the Rust command ``argv`` with ``--json`` and its standard output captured;
    returns (exit code, output). Errors still go to standard error."""
    args = _without_plot(argv)
    wants_json = "--json" in args
    if not wants_json:
        args.append("--json")
    sys.stdout.flush()
    with tempfile.TemporaryFile() as f:
        saved = os.dup(1)
        os.dup2(f.fileno(), 1)
        try:
            code = _core.main(args)
        finally:
            os.dup2(saved, 1)
            os.close(saved)
        f.seek(0)
        return code, f.read().decode(), wants_json


def _sim_with_plots(argv) -> int:
    code, out, wants_json = _json_run(argv)
    if code != 0:
        sys.stdout.write(out)
        return code
    import json

    import pandas as pd

    rows = json.loads(out)
    df = pd.DataFrame(rows)
    if wants_json:
        sys.stdout.write(out)
    else:
        grid = df.pivot_table(index="policy", columns="cache_size", values="miss_ratio", sort=False)
        print(f"request miss ratio ({df['cache_unit'].iloc[0]}); --json for every field")
        print(grid.to_string(float_format=lambda v: f"{v:.4f}"))
    from iostack.plots import write_sim

    return _write_plots(lambda d: write_sim(df, d, footprint=_footprints(df)), _plot_dir(argv[2:]))


def _footprints(df):
    """Distinct objects or blocks of each trace, in the cache's unit (unit-size objects or
    blocks); None for sized object mode, whose unit is bytes."""
    from iostack.analysis import analyze

    if df["cache_unit"].iloc[0] == "bytes":
        return None
    mode = "block" if df["mode"].iloc[0] == "block" else "object"
    out = {}
    for t in dict.fromkeys(df["trace"]):
        fmt = df[df["trace"] == t]["format"].iloc[0]
        try:
            a = analyze(t, mode=mode, page_size=int(df["page_size"].iloc[0]), mrc_sizes=[1], format=fmt)
            out[t] = int(a.report["footprint_units"])
        except (ValueError, OSError):
            pass
    return out


def _run_with_plots(argv) -> int:
    code, out, wants_json = _json_run(argv)
    if code != 0 or wants_json:
        sys.stdout.write(out)
    if code != 0:
        return code
    import json

    from iostack.plots import write_run

    r = json.loads(out)
    if not wants_json:
        resp = r["response"]
        print(f"elapsed {r['elapsed_ns'] / 1e9:.6f} s, device busy {r['device_busy_ns'] / 1e9:.6f} s, "
              f"{r['device_requests']} device requests, hit ratio {r['hit_ratio']:.4f}, "
              f"response mean {resp['mean_ns'] / 1e6:.3f} ms, p99 {resp['p99_ns'] / 1e6:.3f} ms (--json for every field)")
    return _write_plots(lambda d: write_run(r, d), _plot_dir(argv[2:]))


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
