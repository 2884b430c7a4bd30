#!/usr/bin/env python3
"""Benchmark of the locality metrics: stack distance throughput, and the one-pass LRU miss-ratio
curve against running one LRU simulation per cache size.

Workload: a 10M-request Zipf trace (alpha 1.0 over 1M objects, seeded, made by `iostack gen
zipf`), in object mode with unit sizes (one reference per request). Phases, all on the same trace in the same run:

1. the bare stack-distance engine (Fenwick tree over last-use times), references per second;
2. the full analysis (`metrics::analyze`: stack and block distance, affinities, series, MRC);
3. LRU simulations at 8 cache sizes with the miss-ratio engine, compared with the MRC (they must
   agree exactly);
4. end to end through the command line: `iostack analyze --mode object --mrc-sizes ...` once,
   against `iostack sim` once per size (when this build's `iostack sim` runs simulations).

Phases 1-3 run in the `bench_metrics` Rust example (release build), which times each phase in
wall-clock and CPU seconds (CPU time stays meaningful when other jobs share the machine).

Usage: python3 bench/bench_metrics.py [--requests N] [--objects N] [--alpha A] [--out DIR]
Prints a JSON summary and a Markdown table for docs/performance.md.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import shutil
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent


def zipf_trace(exe: list, path: pathlib.Path, requests: int, objects: int, alpha: float, seed: int) -> None:
    """Generates the Zipf trace with `iostack gen zipf` (ranks scattered over the offsets, so that
    popularity carries no spatial order), in iostack's binary format (cheap to read)."""
    if path.exists():
        return
    subprocess.run(
        [*exe, "gen", "zipf", "--requests", str(requests), "--objects", str(objects), "--alpha", str(alpha),
         "--seed", str(seed), "--param", "scatter=yes", "-o", str(path)],
        check=True,
    )


def cargo(*args: str) -> None:
    subprocess.run(["cargo", *args], cwd=ROOT, check=True)


def iostack_cmd() -> list:
    exe = ROOT / "target" / "release" / "iostack"
    return [str(exe)] if exe.exists() else [shutil.which("iostack") or "iostack"]


def timed_run(cmd: list) -> tuple:
    t = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True)
    return p, time.perf_counter() - t


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--requests", type=int, default=10_000_000)
    ap.add_argument("--objects", type=int, default=1_000_000)
    ap.add_argument("--alpha", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default=str(ROOT / "bench" / "out"))
    args = ap.parse_args()

    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    cargo("build", "--release", "-p", "iostack", "--example", "bench_metrics")
    cargo("build", "--release", "-p", "iostack-cli")
    exe = iostack_cmd()
    trace = out / f"zipf-{args.requests}-{args.objects}-{args.alpha}-{args.seed}.bin"
    zipf_trace(exe, trace, args.requests, args.objects, args.alpha, args.seed)

    # Eight cache sizes from 0.1 % to 80 % of the object count.
    sizes = [max(1, int(args.objects * f)) for f in (0.001, 0.005, 0.01, 0.02, 0.05, 0.1, 0.3, 0.8)]
    size_list = ",".join(map(str, sizes))

    p = subprocess.run([str(ROOT / "target" / "release" / "examples" / "bench_metrics"), str(trace), size_list], capture_output=True, text=True)
    if p.returncode != 0:
        print(p.stderr, file=sys.stderr)
        return 1
    lib = json.loads(p.stdout)

    # End to end through the command line (includes reading the trace).
    a, analyze_s = timed_run([*exe, "analyze", str(trace), "--mode", "object", "--mrc-sizes", size_list, "--json"])
    if a.returncode != 0:
        print(a.stderr, file=sys.stderr)
        return 1
    mrc = {m["cache_size"]: m["miss_ratio"] for m in json.loads(a.stdout)["mrc"]}
    sim_s = 0.0
    sim_status = "ran"
    for c in sizes:
        s, dt = timed_run([*exe, "sim", str(trace), "--policy", "lru", "--cache", str(c), "--mode", "object", "--unit-size", "--json"])
        if s.returncode != 0:
            sim_status = f"not available in this build: {s.stderr.strip().splitlines()[-1] if s.stderr.strip() else s.returncode}"
            sim_s = None
            break
        sim_s += dt
        sim_ratio = json.loads(s.stdout)[0]["miss_ratio"]
        if sim_ratio != mrc[c]:
            print(f"MISMATCH at cache size {c}: iostack sim {sim_ratio}, analyze MRC {mrc[c]}", file=sys.stderr)
            return 1

    result = {
        "trace": {"requests": lib["requests"], "distinct": lib["distinct"], "alpha": args.alpha},
        "machine": {"cpus": os.cpu_count(), "loadavg": os.getloadavg()},
        "stack_distance_refs_per_s_wall": lib["stack_distance"]["refs_per_s_wall"],
        "stack_distance_refs_per_s_cpu": lib["stack_distance"]["refs_per_s_cpu"],
        "analyze_library_s": lib["analyze"]["wall_s"],
        "lru_sims_library_s": lib["lru_sims"]["wall_s"],
        "lru_sims_library_cpu_s": lib["lru_sims"]["cpu_s"],
        "analyze_library_cpu_s": lib["analyze"]["cpu_s"],
        "mrc_equals_sims": lib["mrc_equals_sims"],
        "cli_analyze_s": analyze_s,
        "cli_sim_8_sizes_s": sim_s,
        "cli_sim_status": sim_status,
        "cli_mrc_equals_sim": sim_s is not None,
        "sizes": sizes,
        "mrc": mrc,
    }
    print(json.dumps(result, indent=2))
    print()
    print("| measure | value |")
    print("|---|---|")
    print(f"| trace | Zipf alpha {args.alpha}, {lib['requests']:,} requests, {lib['distinct']:,} distinct objects |")
    print(f"| stack distance engine | {lib['stack_distance']['refs_per_s_wall'] / 1e6:.1f} M refs/s wall, {lib['stack_distance']['refs_per_s_cpu'] / 1e6:.1f} M refs/s CPU |")
    print(f"| full analysis, library (MRC at every size + affinities + series) | {lib['analyze']['wall_s']:.2f} s wall, {lib['analyze']['cpu_s']:.2f} s CPU |")
    print(f"| 8 LRU simulations, library | {lib['lru_sims']['wall_s']:.2f} s wall, {lib['lru_sims']['cpu_s']:.2f} s CPU |")
    print(f"| `iostack analyze` (one pass, incl. parsing) | {analyze_s:.2f} s |")
    print(f"| `iostack sim` x 8 sizes | {'%.2f s' % sim_s if sim_s is not None else sim_status} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
