#!/usr/bin/env python3
"""Cost of KDSim's virtual disk (spec D-O1: a run with it takes at most 2x the wall time of the
same run without it).

The workload is the paper's AIR (``iostack gen air``, scaled by ``--file-size`` and the LKR tree
size) with ``--processes`` processes; the stack is the paper's (CFQ, Linux readahead, LRU page
cache, 128 KiB requests) on ``--device``. Two commands on the same trace, alternated ``--repeat``
times so that both see the same machine load:

- without: ``iostack run TRACE ... --no-locality --json``;
- with: ``iostack kdsim accuracy TRACE ... --table T --json``, the same run with the virtual disk
  fed a copy of every request, its table (trained first by ``iostack kdsim train``) updated from
  every real service time, and the per-window sums.

Prints each run's wall and CPU time, the best of each side and their ratio (with / without; the target is
<= 2), and the median and range of the ratio within each back-to-back pair. Exits non-zero if
the two commands disagree on the real device's busy time (the virtual disk must not change the
real run).

With ``--ada`` it then measures ADA's cost (issue 12: at most 2x the wall time of the same run
without it) on the same trace and stack, three ``iostack run`` commands alternated ``--repeat``
times: vanilla (REDCAP absent), REDCAP alone (``--redcap on``, always active) and REDCAP under ADA
(``--redcap on --ada window=1000,table=T``: the virtual disk, the window comparison and, while
off, the simulated REDCAP). It prints the best wall and CPU time of each and the ratios of ADA to
the other two (see ``ada_cost``).

    python bench/bench_kdsim.py [--iostack PATH] [--processes 8] [--file-size 256MiB]
                                [--lkr-files 6000] [--device hdd:st3400620as] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def child_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def timed(cmd: list[str]) -> tuple[float, float, dict]:
    """Wall time, CPU time (all threads) and JSON output of a command."""
    c0, t0 = child_cpu(), time.perf_counter()
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return time.perf_counter() - t0, child_cpu() - c0, json.loads(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--iostack", default=shutil.which("iostack") or "iostack")
    ap.add_argument("--processes", type=int, default=8)
    ap.add_argument("--file-size", default="256MiB")
    ap.add_argument("--lkr-files", type=int, default=6000)
    ap.add_argument("--lkr-dirs", type=int, default=400)
    ap.add_argument("--device", default="hdd:st3400620as")
    ap.add_argument("--sched", default="cfq")
    ap.add_argument("--cache", default="128MiB")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--ada", action="store_true", help="also measure ADA's cost (see ada_cost)")
    a = ap.parse_args()
    exe = a.iostack
    with tempfile.TemporaryDirectory() as tmp:
        trace, table = f"{tmp}/air.csv", f"{tmp}/table.json"
        subprocess.run(
            [exe, "gen", "air", "--processes", str(a.processes), "--param", f"file_size={a.file_size}",
             "--param", f"lkr_files={a.lkr_files}", "--param", f"lkr_dirs={a.lkr_dirs}", "-o", trace],
            check=True, capture_output=True,
        )
        subprocess.run([exe, "kdsim", "train", "--device", a.device, "--output", table], check=True, capture_output=True)
        stack = ["--device", a.device, "--sched", a.sched, "--cache", a.cache, "--policy", "lru", "--prefetch", "linux", "--max-request", "128KiB"]
        without_cmd = [exe, "run", trace, *stack, "--no-locality", "--json"]
        with_cmd = [exe, "kdsim", "accuracy", trace, *stack, "--table", table, "--json"]
        base, vd, ratios, cpu = [], [], [], []
        busy = None
        for i in range(a.repeat):
            t0, c0, rep = timed(without_cmd)
            t1, c1, acc = timed(with_cmd)
            base.append(t0)
            vd.append(t1)
            ratios.append(t1 / t0)
            cpu.append((c0, c1))
            rd_ms = sum(w["rd_ms"] for w in acc["windows"])
            busy = rep["device_busy_ns"] / 1e6
            print(f"run {i + 1}: without {t0:.2f} s ({c0:.2f} s CPU), with the virtual disk {t1:.2f} s ({c1:.2f} s CPU) (ratio {t1 / t0:.2f}); "
                  f"{acc['requests']} requests in {len(acc['windows'])} windows, mean |diff| {acc['mean_abs_diff_pct']:.3f} %")
            if abs(rd_ms - busy) > 1e-6 * max(busy, 1.0) + 1e-3:
                print(f"the real device's busy time differs: {busy:.3f} ms without, {rd_ms:.3f} ms summed over the windows", file=sys.stderr)
                return 1
        print(f"AIR, {a.processes} processes, files of {a.file_size}, LKR {a.lkr_files} files; {a.device}, {a.sched}")
        print(f"best: without {min(base):.2f} s, with the virtual disk {min(vd):.2f} s, ratio {min(vd) / min(base):.2f} (target <= 2)")
        print(f"ratio per pair: median {statistics.median(ratios):.2f}, range {min(ratios):.2f}-{max(ratios):.2f}")
        cpu_ratio = min(c for _, c in cpu) / min(c for c, _ in cpu)
        print(f"CPU time (all threads), best: without {min(c for c, _ in cpu):.2f} s, with {min(c for _, c in cpu):.2f} s, ratio {cpu_ratio:.2f}")
        if a.ada:
            return ada_cost(exe, trace, table, stack, a.repeat)
    return 0


def ada_cost(exe: str, trace: str, table: str, stack: list[str], repeat: int) -> int:
    """ADA's cost: vanilla, REDCAP alone and REDCAP under ADA on one trace and stack, alternated
    ``repeat`` times; prints each run, then the best wall and CPU time of each and ADA's ratios."""
    runs = {
        "vanilla": [exe, "run", trace, *stack, "--no-locality", "--json"],
        "REDCAP": [exe, "run", trace, *stack, "--no-locality", "--redcap", "on", "--json"],
        "ADA": [exe, "run", trace, *stack, "--no-locality", "--redcap", "on", "--ada", f"window=1000,table={table}", "--json"],
    }
    wall: dict[str, list[float]] = {k: [] for k in runs}
    cpu: dict[str, list[float]] = {k: [] for k in runs}
    for i in range(repeat):
        line = []
        for name, cmd in runs.items():
            t, c, rep = timed(cmd)
            wall[name].append(t)
            cpu[name].append(c)
            extra = ""
            if rep.get("ada"):
                extra = f", activation {rep['ada']['activation_share']:.3f}, {len(rep['ada']['switches'])} switches"
            line.append(f"{name} {t:.2f} s ({c:.2f} s CPU, simulated {rep['elapsed_ns'] / 1e9:.1f} s{extra})")
        print(f"ADA run {i + 1}: " + "; ".join(line))
    best = {k: (min(wall[k]), min(cpu[k])) for k in runs}
    print("ADA's cost, best of each: " + ", ".join(f"{k} {w:.2f} s wall / {c:.2f} s CPU" for k, (w, c) in best.items()))
    for peer in ("vanilla", "REDCAP"):
        print(f"ADA / {peer}: wall {best['ADA'][0] / best[peer][0]:.2f}, CPU {best['ADA'][1] / best[peer][1]:.2f} (target <= 2)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
