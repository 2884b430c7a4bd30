#!/usr/bin/env python3
"""Speed of the full timed stack against libCacheSim's miss-ratio-only LRU, on the same trace,
in the same run.

iostack: the default stack, Linux readahead + LRU + C-SCAN + HDD (hdd:st3400620as), a
discrete-event simulation with device timing, without the locality probes (they are
measurement, not part of the stack). libCacheSim: ``LRU.process_trace`` (miss ratio only, no
time, no prefetching) through its Python package. Both read the same oracleGeneral trace of N
one-block (4 KiB) requests from ``iostack gen zipf``; both caches hold 64 MiB.

Two measurements of iostack, each alternated with libCacheSim's so that both see the same
machine load:

- in process: ``iostack.run(trace, ...)`` in this Python process, timing the call alone, as
  libCacheSim's ``process_trace`` is timed (its reader is built before the clock starts; both
  read and decode the trace inside the timed call);
- command line: ``iostack run TRACE ... --json`` as a whole process, start-up (Python, the
  console script, and on some machines a version manager's shim) and report included.

Prints requests/s of each (wall clock, and CPU time of all threads), the ratio iostack /
libCacheSim of the best runs (> 1 means iostack is faster), and the median and range of the
ratio within each back-to-back pair of runs (steadier when the machine's speed drifts). Exits
non-zero if the two iostack measurements disagree on the result.

    python bench/bench_timed.py [--requests 10000000] [--alpha 1.0] [--objects 1000000]
                                [--iostack PATH] [--repeat 3] [--no-cli | --cli-only] [--probes-only]

``--cli-only`` runs only the command-line comparison (no in-process measurement, which uses the
installed Python package whatever ``--iostack`` names, and no probe row): to compare two
builds, alternate runs of this script with ``--cli-only --iostack BUILD`` (and ``--trace`` to
use one trace for all).

A last row measures the locality probes, on by default in ``iostack run``: the same command with
and without ``--no-locality``, alternated, as the ratio of their times.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

STACK = {"policy": "lru", "prefetch": "linux", "sched": "cscan", "device": "hdd:st3400620as"}


def child_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_cli(exe: str, trace: str, cache: str, locality: bool = False) -> tuple[float, float, dict]:
    cmd = [exe, "run", trace, "--cache", cache, "--json"] + ([] if locality else ["--no-locality"])
    for k, v in STACK.items():
        cmd += [f"--{k}", v]
    c0, t0 = child_cpu(), time.perf_counter()
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return time.perf_counter() - t0, child_cpu() - c0, json.loads(out)


def run_in_process(trace: str, cache: str) -> tuple[float, float, dict]:
    import iostack

    c0, t0 = time.process_time(), time.perf_counter()
    rep = iostack.run(trace, cache=cache, locality=False, **STACK)
    return time.perf_counter() - t0, time.process_time() - c0, rep


def run_libcachesim(trace: str, cache_bytes: int) -> tuple[float, float, float]:
    import libcachesim as lcs

    reader = lcs.TraceReader(trace, lcs.TraceType.ORACLE_GENERAL_TRACE)
    cache = lcs.LRU(cache_size=cache_bytes)
    c0, t0 = time.process_time(), time.perf_counter()
    miss_ratio, _ = cache.process_trace(reader)
    return time.perf_counter() - t0, time.process_time() - c0, miss_ratio


def compare(name: str, run_iostack, trace: str, cache_bytes: int, repeat: int) -> dict:
    """Alternates `run_iostack` and libCacheSim `repeat` times; prints and returns the figures."""
    io_best = lcs_best = None
    pair_ratios = []
    for _ in range(repeat):
        io = run_iostack()
        io_best = min(io_best or io, io, key=lambda x: x[0])
        lcs = run_libcachesim(trace, cache_bytes)
        lcs_best = min(lcs_best or lcs, lcs, key=lambda x: x[0])
        pair_ratios.append(lcs[0] / io[0])
    rep = io_best[2]
    n = rep["front"]["requests"]
    pair_ratios.sort()
    print(f"{name}:")
    print(f"  iostack (linux+lru+cscan+hdd, timed): wall {io_best[0]:.2f} s = {n / io_best[0] / 1e6:.2f} M req/s;"
          f" cpu {io_best[1]:.2f} s; hit ratio {rep['hit_ratio']:.4f}, {rep['device_requests']} device requests,"
          f" simulated {rep['elapsed_ns'] / 1e9:.0f} s")
    print(f"  libCacheSim LRU (miss ratio only):    wall {lcs_best[0]:.2f} s = {n / lcs_best[0] / 1e6:.2f} M req/s;"
          f" cpu {lcs_best[1]:.2f} s; miss ratio {lcs_best[2]:.4f}")
    print(f"  ratio iostack/libCacheSim (requests/s), best runs: wall {lcs_best[0] / io_best[0]:.2f}x,"
          f" cpu {lcs_best[1] / io_best[1]:.2f}x")
    print(f"  ratio in each of {len(pair_ratios)} back-to-back pairs (wall): median {statistics.median(pair_ratios):.2f}x,"
          f" range {pair_ratios[0]:.2f}x to {pair_ratios[-1]:.2f}x")
    return rep


def compare_probes(exe: str, trace: str, cache: str, repeat: int) -> bool:
    """The cost of the locality probes (on by default): `iostack run` with and without
    `--no-locality`, alternated; prints the ratio of their wall and CPU times (best runs, and
    the median of the pairs). Returns whether both runs agree on everything but the probes."""
    on_best = off_best = None
    pairs = []
    for _ in range(repeat):
        on = run_cli(exe, trace, cache, locality=True)
        off = run_cli(exe, trace, cache, locality=False)
        on_best = min(on_best or on, on, key=lambda x: x[0])
        off_best = min(off_best or off, off, key=lambda x: x[0])
        pairs.append(on[0] / off[0])
    pairs.sort()
    print("locality probes (iostack run, default, vs --no-locality):")
    print(f"  with probes: wall {on_best[0]:.2f} s, cpu {on_best[1]:.2f} s;"
          f" without: wall {off_best[0]:.2f} s, cpu {off_best[1]:.2f} s")
    print(f"  ratio with/without, best runs: wall {on_best[0] / off_best[0]:.2f}x, cpu {on_best[1] / off_best[1]:.2f}x;"
          f" median of {len(pairs)} pairs (wall) {statistics.median(pairs):.2f}x, range {pairs[0]:.2f}x to {pairs[-1]:.2f}x")
    strip = ("config", "locality")
    return {k: v for k, v in on_best[2].items() if k not in strip} == {k: v for k, v in off_best[2].items() if k not in strip}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=10_000_000)
    ap.add_argument("--objects", type=int, default=1_000_000)
    ap.add_argument("--alpha", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--cache", default="64MiB", help="a byte size with unit (KiB, MiB, GiB) or bytes")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each; the best is kept")
    ap.add_argument("--iostack", default=shutil.which("iostack") or "target/release/iostack", help="command for the CLI runs")
    ap.add_argument("--no-cli", action="store_true", help="skip the command-line measurements")
    ap.add_argument("--cli-only", action="store_true", help="only the command-line comparison with libCacheSim (compare builds with --iostack)")
    ap.add_argument("--probes-only", action="store_true", help="only the cost of the locality probes")
    ap.add_argument("--trace", help="use this oracleGeneral trace instead of generating one")
    args = ap.parse_args()
    units = {"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}
    unit = next((u for u in units if args.cache.endswith(u)), None)
    cache_bytes = int(float(args.cache[: -len(unit)]) * units[unit]) if unit else int(args.cache)

    tmp = None
    trace = args.trace
    if trace is None:
        tmp = tempfile.mkdtemp(prefix="iostack-bench-")
        trace = os.path.join(tmp, "zipf.oracleGeneral.bin")
        subprocess.run([args.iostack, "gen", "zipf", "--alpha", str(args.alpha), "--objects", str(args.objects),
                        "--requests", str(args.requests), "--seed", str(args.seed), "-o", trace],
                       check=True, capture_output=True)
    try:
        print(f"trace: {args.requests} requests, zipf alpha={args.alpha} over {args.objects} objects, cache {args.cache}")
        if args.probes_only:
            if not compare_probes(args.iostack, trace, args.cache, args.repeat):
                print("error: the probes changed the stack's results", file=sys.stderr)
                return 1
            return 0
        if args.cli_only and args.no_cli:
            ap.error("--cli-only and --no-cli exclude each other")
        a = None
        if not args.cli_only:
            a = compare("in process (iostack.run vs process_trace, the call alone)",
                        lambda: run_in_process(trace, args.cache), trace, cache_bytes, args.repeat)
        if not args.no_cli:
            b = compare("command line (iostack run as a whole process vs process_trace)",
                        lambda: run_cli(args.iostack, trace, args.cache), trace, cache_bytes, args.repeat)
            strip = ("config",)
            if a is not None and {k: v for k, v in a.items() if k not in strip} != {k: v for k, v in b.items() if k not in strip}:
                print("error: iostack.run and `iostack run` report different results", file=sys.stderr)
                return 1
            if not args.cli_only and not compare_probes(args.iostack, trace, args.cache, args.repeat):
                print("error: the probes changed the stack's results", file=sys.stderr)
                return 1
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
