#!/usr/bin/env python3
"""Speed of the full timed stack against libCacheSim's miss-ratio-only LRU, on the same trace,
in the same run.

iostack: ``iostack run --no-locality`` (the locality probes are measurement, not part of the
stack) with Linux readahead + LRU + C-SCAN + HDD (hdd:st3400620as), a
discrete-event simulation with device timing. libCacheSim: ``LRU.process_trace`` (miss ratio
only, no time, no prefetching) through its Python package. Both read the same oracleGeneral
trace of N one-block (4 KiB) requests from ``iostack gen zipf``; both caches hold 64 MiB.

Prints requests/s of each (wall clock and CPU time, which is fairer on a busy machine), the
ratio iostack / libCacheSim of the best runs (> 1 means iostack is faster), and the median and
range of the ratio within each back-to-back pair of runs (steadier when the machine's speed
drifts).

    python bench/bench_timed.py [--requests 10000000] [--alpha 1.0] [--objects 1000000]
                                [--iostack target/release/iostack] [--repeat 3]
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


def child_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_iostack(exe: str, trace: str, cache: str) -> tuple[float, float, dict]:
    cmd = [exe, "run", trace, "--policy", "lru", "--prefetch", "linux", "--sched", "cscan",
           "--device", "hdd:st3400620as", "--cache", cache, "--no-locality", "--json"]
    c0, t0 = child_cpu(), time.perf_counter()
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return time.perf_counter() - t0, child_cpu() - c0, json.loads(out)


def run_libcachesim(trace: str, cache_bytes: int) -> tuple[float, float, float]:
    import libcachesim as lcs

    reader = lcs.TraceReader(trace, lcs.TraceType.ORACLE_GENERAL_TRACE)
    cache = lcs.LRU(cache_size=cache_bytes)
    c0, t0 = time.process_time(), time.perf_counter()
    miss_ratio, _ = cache.process_trace(reader)
    return time.perf_counter() - t0, time.process_time() - c0, miss_ratio


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=10_000_000)
    ap.add_argument("--objects", type=int, default=1_000_000)
    ap.add_argument("--alpha", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--cache", default="64MiB")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each; the best is kept")
    ap.add_argument("--iostack", default=shutil.which("iostack") or "target/release/iostack")
    ap.add_argument("--trace", help="use this oracleGeneral trace instead of generating one")
    args = ap.parse_args()
    cache_bytes = 64 << 20 if args.cache == "64MiB" else int(args.cache)

    tmp = None
    trace = args.trace
    if trace is None:
        tmp = tempfile.mkdtemp(prefix="iostack-bench-")
        trace = os.path.join(tmp, "zipf.oracleGeneral.bin")
        subprocess.run([args.iostack, "gen", "zipf", "--alpha", str(args.alpha), "--objects", str(args.objects),
                        "--requests", str(args.requests), "--seed", str(args.seed), "-o", trace],
                       check=True, capture_output=True)
    try:
        io_best = lcs_best = None
        pair_ratios = []
        for _ in range(args.repeat):
            # Alternate, so both see the same machine load; each pair gives one ratio.
            io_wall, cpu, rep = run_iostack(args.iostack, trace, args.cache)
            io_best = min(io_best or (io_wall, cpu, rep), (io_wall, cpu, rep), key=lambda x: x[1])
            lcs_wall, cpu, mr = run_libcachesim(trace, cache_bytes)
            lcs_best = min(lcs_best or (lcs_wall, cpu, mr), (lcs_wall, cpu, mr), key=lambda x: x[1])
            pair_ratios.append(lcs_wall / io_wall)
        n = io_best[2]["front"]["requests"]
        print(f"trace: {n} requests, zipf alpha={args.alpha} over {args.objects} objects, cache {args.cache}")
        print(f"iostack run (linux+lru+cscan+hdd, timed): wall {io_best[0]:.2f} s = {n / io_best[0] / 1e6:.2f} M req/s;"
              f" cpu {io_best[1]:.2f} s = {n / io_best[1] / 1e6:.2f} M req/s;"
              f" hit ratio {io_best[2]['hit_ratio']:.4f}, {io_best[2]['device_requests']} device requests,"
              f" simulated {io_best[2]['elapsed_ns'] / 1e9:.0f} s")
        print(f"libCacheSim LRU (miss ratio only):        wall {lcs_best[0]:.2f} s = {n / lcs_best[0] / 1e6:.2f} M req/s;"
              f" cpu {lcs_best[1]:.2f} s = {n / lcs_best[1] / 1e6:.2f} M req/s; miss ratio {lcs_best[2]:.4f}")
        print(f"ratio iostack/libCacheSim (requests/s): wall {lcs_best[0] / io_best[0]:.2f}x, cpu {lcs_best[1] / io_best[1]:.2f}x"
              " (best run of each)")
        # The machine's speed drifts between runs; the ratio within each back-to-back pair is the
        # steadier figure.
        pair_ratios.sort()
        print(f"ratio in each of {len(pair_ratios)} back-to-back pairs (wall): median {statistics.median(pair_ratios):.2f}x,"
              f" range {pair_ratios[0]:.2f}x to {pair_ratios[-1]:.2f}x")
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
