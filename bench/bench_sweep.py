"""Speed of `iostack sweep` on a policies x sizes grid against libCacheSim's `cachesim` command
line running the same grid, in one run.

    python bench/bench_sweep.py [--requests N] [--jobs N] [--cachesim PATH] [--no-pypi]

Workload: a Zipf trace (alpha 1.0 over 1,000,000 objects, --requests requests, default
10,000,000, seed 7) written by `iostack gen` as libCacheSim's oracleGeneral binary into
bench/out/ (kept between runs). Grid: LRU, FIFO, ARC, S3-FIFO x 8 cache sizes given as fractions
of the footprint (0.001 ... 0.2), unit size.

Measured, each once, wall clock and CPU time (user + system, from the process's own rusage):
- `iostack sweep` of the grid as one command (footprint pass included), --jobs workers;
- every run of the grid alone (`iostack sim` with one policy and one absolute size), to get the
  slowest single run. The target (issue 14) is sweep <= 1.2 x slowest x runs / cores, on wall
  clock; the CPU-time form of the same ratio is printed beside it, since load inflates wall
  time but not CPU time;
- libCacheSim's command line, `cachesim TRACE oracleGeneral lru,fifo,arc,s3fifo
  0.001,...,0.2 --ignore-obj-size 1 --num-thread JOBS`: the way it runs a grid, one task per
  (policy, size) on a pool of JOBS threads, each task reading the whole trace with its own
  reader. The binary is not part of iostack: build it from libCacheSim's sources and pass its
  path with --cachesim or $LIBCACHESIM_CLI; without one, this peer is skipped (said so);
- libCacheSim's Python package (PyPI `libcachesim`), unless --no-pypi: each point a task that
  opens its own reader and processes the whole trace, on JOBS processes.
Every point's miss ratio is checked against each peer's: the command line prints its miss
ratios with 4 decimals, so iostack's miss count is printed the same way and the texts must be
equal (and the absolute cache sizes and request counts too). Load averages before and after are
printed, as the wall-clock figures mean little on a loaded machine. Not part of the tests.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import pathlib
import re
import resource
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from bench_sim import OUT, iostack_exe, machine  # noqa: E402

POLICIES = ["lru", "fifo", "arc", "s3fifo"]
FRACTIONS = [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2]
# How `cachesim` names each policy's caches in its output (S3-FIFO adds its parameters).
CLI_NAMES = {"lru": "LRU", "fifo": "FIFO", "arc": "ARC", "s3fifo": "S3FIFO"}
CLI_LINE = re.compile(r"^\S+\s+(\S+) cache size\s+(\d+)\S*, (\d+) req, miss ratio ([0-9.]+), byte miss ratio ([0-9.]+)$")


def ensure_trace(requests: int) -> pathlib.Path:
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"zipf_a1.0_o1000000_r{requests}_s7.oracleGeneral.bin"
    if not path.exists():
        print(f"generating {path.name} ...", flush=True)
        subprocess.run([*iostack_exe(), "gen", "zipf", "--alpha", "1.0", "--objects", "1000000", "--requests", str(requests),
                        "--seed", "7", "--format", "oracle-general", "--output", str(path)], check=True)
    return path


def timed(cmd: list[str], cwd: str | None = None) -> dict:
    """Runs `cmd` to the end: its wall time, its own CPU time (user, system) and peak RSS, and
    its output. Fails with its stderr when it fails."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(), err.read().decode()
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{stderr}")
    return {"wall": wall, "user": usage.ru_utime, "sys": usage.ru_stime, "cpu": usage.ru_utime + usage.ru_stime,
            "rss_mb": usage.ru_maxrss / 1024, "stdout": stdout}


def times(t: dict) -> str:
    return f"{t['wall']:.2f} s wall, {t['cpu']:.2f} s CPU ({t['user']:.2f} user + {t['sys']:.2f} system), peak RSS {t['rss_mb']:.0f} MB"


def load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def lcs_task(args):
    import libcachesim as lcs

    path, policy, size = args
    reader = lcs.TraceReader(str(path), lcs.TraceType.ORACLE_GENERAL_TRACE, reader_init_params=lcs.ReaderInitParam(ignore_obj_size=True))
    cache = {"lru": lcs.LRU, "fifo": lcs.FIFO, "arc": lcs.ARC, "s3fifo": lcs.S3FIFO}[policy](size)
    miss_ratio, _ = cache.process_trace(reader)
    return policy, size, miss_ratio


def run_cli(cachesim: str, trace: pathlib.Path, jobs: int, rows: list[dict]) -> dict:
    """The grid through libCacheSim's command line, checked point by point against `rows`."""
    version = subprocess.run([cachesim, "--version"], capture_output=True, text=True).stdout.strip()
    with tempfile.TemporaryDirectory() as tmp:  # it appends its results under ./result/
        t = timed([cachesim, str(trace), "oracleGeneral", ",".join(POLICIES), ",".join(map(str, FRACTIONS)),
                   "--ignore-obj-size", "1", "--num-thread", str(jobs)], cwd=tmp)
    points = [m.groups() for m in map(CLI_LINE.match, t["stdout"].splitlines()) if m]
    if len(points) != len(rows):
        sys.exit(f"cachesim printed {len(points)} results, expected {len(rows)}:\n{t['stdout']}")
    differ, worst = [], 0.0
    for (name, size, req, miss, _), r in zip(points, rows):
        ours = (r["requests"] - r["hits"]) / r["requests"]
        if not name.startswith(CLI_NAMES[r["policy"]]) or int(size) != r["cache_size"] or int(req) != r["requests"]:
            sys.exit(f"cachesim's point {name} {size} ({req} requests) is not iostack's {r['policy']} {r['cache_size']} ({r['requests']} requests)")
        if f"{ours:.4f}" != miss:
            differ.append(f"{r['policy']} at {r['cache_size']}: iostack {ours:.4f}, cachesim {miss}")
        worst = max(worst, abs(ours - float(miss)))
    t["version"] = version
    t["agree"] = (f"{len(rows) - len(differ)} of {len(rows)} miss ratios equal to cachesim's 4 printed decimals "
                  f"(largest difference {worst:.1e})" + "".join(f"\n    differs: {d}" for d in differ))
    return t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--requests", type=int, default=10_000_000)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="workers of each tool (default: one per CPU)")
    ap.add_argument("--cachesim", default=os.environ.get("LIBCACHESIM_CLI"),
                    help="libCacheSim's `cachesim` binary, built from its sources (default $LIBCACHESIM_CLI)")
    ap.add_argument("--no-pypi", action="store_true", help="skip libCacheSim's Python package")
    a = ap.parse_args()
    trace = ensure_trace(a.requests)
    exe = iostack_exe()
    cores = min(a.jobs, os.cpu_count() or 1)
    runs = len(POLICIES) * len(FRACTIONS)
    print(machine())
    print(f"iostack: {' '.join(exe)}; trace {trace.name}; {runs} runs, {a.jobs} jobs, {cores} cores")
    load_before = load()
    print(f"load average (1/5/15 min) before: {load_before}", flush=True)

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
        sweep = timed([*exe, "sweep", str(exp), "--output", str(out), "--jobs", str(a.jobs), "--quiet"])
        rows = [json.loads(line) for line in out.read_text().splitlines()]
    # The command line's order: policy-major, sizes as given.
    order = {(p, str(f)): i for i, (p, f) in enumerate((p, f) for p in POLICIES for f in FRACTIONS)}
    rows.sort(key=lambda r: order[(r["policy"], str(r["cache_size_spec"]))])
    print(f"iostack sweep: {times(sweep)}", flush=True)

    singles = []
    for r in rows:
        t = timed([*exe, "sim", str(trace), "--format", "oracle-general", "-p", r["policy"], "-c", str(r["cache_size"]), "--unit-size", "--json"])
        t["point"] = f"{r['policy']} at {r['cache_size']}"
        singles.append(t)
        print(f"  single {t['point']:>20}: {t['wall']:.2f} s wall, {t['cpu']:.2f} s CPU", flush=True)
    slowest = max(singles, key=lambda t: t["wall"])
    slowest_cpu = max(singles, key=lambda t: t["cpu"])
    bound = slowest["wall"] * runs / cores
    print(f"single runs: slowest {slowest['point']}: {times(slowest)}; "
          f"sum {sum(t['wall'] for t in singles):.2f} s wall, {sum(t['cpu'] for t in singles):.2f} s CPU")
    print(f"target 1.2 x slowest x runs / cores = {1.2 * bound:.2f} s; "
          f"wall: sweep / (slowest x runs / cores) = {sweep['wall'] / bound:.2f}")
    print(f"CPU: sweep / (slowest x runs) = {sweep['cpu'] / (slowest_cpu['cpu'] * runs):.2f} (slowest by CPU: {slowest_cpu['point']}, "
          f"{slowest_cpu['cpu']:.2f} s); sweep / sum of the single runs = {sweep['cpu'] / sum(t['cpu'] for t in singles):.2f}", flush=True)

    if a.cachesim:
        cli = run_cli(a.cachesim, trace, a.jobs, rows)
        print(f"libCacheSim cachesim ({cli['version']}), {a.jobs} threads: {times(cli)}")
        print(f"  {cli['agree']}")
        print(f"  cachesim / iostack sweep: {cli['wall'] / sweep['wall']:.2f} wall, {cli['cpu'] / sweep['cpu']:.2f} CPU", flush=True)
    else:
        print("libCacheSim's command line: skipped (no binary; pass --cachesim PATH or set LIBCACHESIM_CLI)")

    if not a.no_pypi:
        import libcachesim

        tasks = [(trace, r["policy"], r["cache_size"]) for r in rows]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        pool = multiprocessing.get_context("spawn").Pool(a.jobs)
        lcs = pool.map(lcs_task, tasks)
        pool.close()
        pool.join()
        wall = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        user, system = after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime
        worst = max(abs(m - r["miss_ratio"]) for (_, _, m), r in zip(lcs, rows))
        print(f"libCacheSim {getattr(libcachesim, '__version__', '?')} Python package, one task per run on {a.jobs} processes: "
              f"{wall:.2f} s wall, {user + system:.2f} s CPU ({user:.2f} user + {system:.2f} system); "
              f"/ iostack sweep: {wall / sweep['wall']:.2f} wall, {(user + system) / sweep['cpu']:.2f} CPU")
        print(f"  largest miss-ratio difference from iostack's: {worst:.2e}")
    print(f"load average (1/5/15 min) before: {load_before}, after: {load()}")


if __name__ == "__main__":
    main()
