"""Speed of `iostack sweep` on a policies x sizes grid against libCacheSim running the same grid
one task at a time, in one run.

    python bench/bench_sweep.py [--requests N] [--jobs N]

Workload: a Zipf trace (alpha 1.0 over 1,000,000 objects, --requests requests, default
10,000,000, seed 7) written by `iostack gen` as libCacheSim's oracleGeneral binary into
bench/out/ (kept between runs). Grid: LRU, FIFO, ARC, S3-FIFO x 8 cache sizes given as fractions
of the footprint (0.001 ... 0.2), unit size.

Measured (wall clock):
- `iostack sweep` of the grid as one command (footprint pass included), --jobs workers;
- every run of the grid alone (`iostack sim` with one policy and one size), to get the slowest
  single run; the issue's target is sweep <= 1.2 x slowest x runs / cores;
- libCacheSim 0.3.5 (Python package): each (policy, size) a task that opens its own reader and
  processes the whole trace, as its CLI does per task, spread over --jobs processes.
It checks that both report the same miss ratio for every point. Not part of the tests.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import pathlib
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from bench_sim import OUT, iostack_exe, machine  # noqa: E402

POLICIES = ["lru", "fifo", "arc", "s3fifo"]
FRACTIONS = [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2]


def ensure_trace(requests: int) -> pathlib.Path:
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"zipf_a1.0_o1000000_r{requests}_s7.oracleGeneral.bin"
    if not path.exists():
        print(f"generating {path.name} ...", flush=True)
        subprocess.run([*iostack_exe(), "gen", "zipf", "--alpha", "1.0", "--objects", "1000000", "--requests", str(requests),
                        "--seed", "7", "--format", "oracle-general", "--output", str(path)], check=True)
    return path


def lcs_task(args):
    import libcachesim as lcs

    path, policy, size = args
    reader = lcs.TraceReader(str(path), lcs.TraceType.ORACLE_GENERAL_TRACE, reader_init_params=lcs.ReaderInitParam(ignore_obj_size=True))
    cache = {"lru": lcs.LRU, "fifo": lcs.FIFO, "arc": lcs.ARC, "s3fifo": lcs.S3FIFO}[policy](size)
    miss_ratio, _ = cache.process_trace(reader)
    return policy, size, miss_ratio


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=10_000_000)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    a = ap.parse_args()
    trace = ensure_trace(a.requests)
    exe = iostack_exe()
    print(machine())
    runs = len(POLICIES) * len(FRACTIONS)
    with tempfile.TemporaryDirectory() as tmp:
        exp = pathlib.Path(tmp) / "grid.toml"
        exp.write_text(
            "[experiment]\nkind = \"sim\"\n"
            f"traces = [{json.dumps(str(trace))}]\n"
            f"cache_size = {json.dumps([str(f) for f in FRACTIONS])}\n"
            "[base]\nunit_size = true\nformat = \"oracle-general\"\n"
            f"[axes]\npolicy = {json.dumps(POLICIES)}\n"
        )
        out = pathlib.Path(tmp) / "rows.jsonl"
        t0 = time.perf_counter()
        subprocess.run([*exe, "sweep", str(exp), "--output", str(out), "--jobs", str(a.jobs), "--quiet"], check=True)
        sweep_s = time.perf_counter() - t0
        rows = [json.loads(line) for line in out.read_text().splitlines()]
    print(f"iostack sweep: {runs} runs in {sweep_s:.2f} s ({a.jobs} jobs)")

    singles = []
    for r in rows:
        t0 = time.perf_counter()
        subprocess.run([*exe, "sim", str(trace), "--format", "oracle-general", "-p", r["policy"], "-c", str(r["cache_size"]),
                        "--unit-size", "--json"], check=True, capture_output=True)
        singles.append((time.perf_counter() - t0, r["policy"], r["cache_size"]))
    slowest = max(singles)
    bound = slowest[0] * runs / a.jobs
    print(f"single runs: slowest {slowest[1]} at {slowest[2]}: {slowest[0]:.2f} s; sum {sum(s[0] for s in singles):.2f} s")
    print(f"target 1.2 x slowest x runs / cores = {1.2 * bound:.2f} s; sweep / (slowest x runs / cores) = {sweep_s / bound:.2f}")

    tasks = [(trace, r["policy"], r["cache_size"]) for r in rows]
    t0 = time.perf_counter()
    with multiprocessing.get_context("spawn").Pool(a.jobs) as pool:
        lcs = pool.map(lcs_task, tasks)
    lcs_s = time.perf_counter() - t0
    print(f"libCacheSim, one task per run ({a.jobs} processes): {lcs_s:.2f} s; libCacheSim / iostack sweep = {lcs_s / sweep_s:.2f}")
    worst = max(abs(m - r["miss_ratio"]) for (_, _, m), r in zip(lcs, rows))
    print(f"largest miss-ratio difference between the two: {worst:.2e}")


if __name__ == "__main__":
    main()
