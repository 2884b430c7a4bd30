"""Speed of iostack's miss-ratio simulation against libCacheSim, side by side, in one run.

    python bench/bench_sim.py [--repeat N] [--requests N] [--no-csv | --csv-only]

Workload: a Zipf trace (alpha 1.0 over 1,000,000 objects, 10,000,000 requests, seed 7) written by
`iostack gen` as libCacheSim's oracleGeneral binary and as iostack CSV into bench/out/ (kept
between runs). Cache: 76,286 objects, unit size (libCacheSim's ignore_obj_size).

Measured, each the best of --repeat runs (wall clock and CPU time):
- libCacheSim 0.3.5 (Python package): `process_trace` of LRU and ARC, timed alone; building its
  reader is timed separately.
- iostack's Python `simulate` in this same process.
- iostack's command line as a whole process (`iostack sim ... --json`), with its peak RSS.
- The same on the CSV copy of the trace, and the share of time spent reading the CSV (time on
  CSV minus time on the binary trace, for each tool).
It checks that both simulators report the same miss ratios, and prints requests/s and ratios.
Not part of the tests: it takes a minute or two.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import platform
import shutil
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out"
CACHE = 76_286
POLICIES = ["lru", "arc"]


def iostack_exe() -> list[str]:
    """`$IOSTACK_EXE` when set; else the installed `iostack` command (the Python console
    script), or the release binary."""
    if os.environ.get("IOSTACK_EXE"):
        return [os.environ["IOSTACK_EXE"]]
    beside = pathlib.Path(sys.executable).parent / "iostack"
    if beside.exists():
        return [str(beside)]
    exe = shutil.which("iostack")
    if exe:
        return [exe]
    built = ROOT / "target" / "release" / "iostack"
    if built.exists():
        return [str(built)]
    return [sys.executable, "-m", "iostack.cli"]


def ensure_traces(requests: int) -> tuple[pathlib.Path, pathlib.Path]:
    OUT.mkdir(parents=True, exist_ok=True)
    tag = f"zipf_a1.0_o1000000_r{requests}_s7"
    binary = OUT / f"{tag}.oracleGeneral.bin"
    csv = OUT / f"{tag}.csv"
    for path, fmt in [(binary, "oracle-general"), (csv, "csv")]:
        if not path.exists():
            print(f"generating {path.name} ...", flush=True)
            subprocess.run(
                [*iostack_exe(), "gen", "zipf", "--alpha", "1.0", "--objects", "1000000", "--requests", str(requests),
                 "--seed", "7", "--format", fmt, "--output", str(path)],
                check=True,
            )
    return binary, csv


def best(fn, repeat: int):
    """Runs fn() `repeat` times; returns the result with the smallest wall time."""
    runs = [fn() for _ in range(repeat)]
    return min(runs, key=lambda r: r["wall"])


def lcs_reader(path: pathlib.Path, csv: bool):
    import libcachesim as lcs

    if csv:
        params = lcs.ReaderInitParam(ignore_obj_size=True, has_header=True, has_header_set=True, delimiter=",")
        # iostack CSV columns: time_ns,pid,op,offset,length,... (libCacheSim counts fields from 1)
        params.time_field = 1
        params.obj_id_field = 4
        params.obj_size_field = 5
        return lcs.TraceReader(str(path), lcs.TraceType.CSV_TRACE, reader_init_params=params)
    params = lcs.ReaderInitParam(ignore_obj_size=True)
    return lcs.TraceReader(str(path), lcs.TraceType.ORACLE_GENERAL_TRACE, reader_init_params=params)


def run_lcs(path: pathlib.Path, policy: str, csv: bool) -> dict:
    import libcachesim as lcs

    t0 = time.perf_counter()
    reader = lcs_reader(path, csv)
    t1 = time.perf_counter()
    cache = {"lru": lcs.LRU, "arc": lcs.ARC}[policy](CACHE)
    c0, w0 = time.process_time(), time.perf_counter()
    miss_ratio, _ = cache.process_trace(reader)
    c1, w1 = time.process_time(), time.perf_counter()
    return {"wall": w1 - w0, "cpu": c1 - c0, "reader_init": t1 - t0, "miss_ratio": miss_ratio}


def run_py(path: pathlib.Path, policy: str, csv: bool) -> dict:
    import iostack

    fmt = "csv" if csv else "oracle-general"
    c0, w0 = time.process_time(), time.perf_counter()
    r = iostack.simulate(path, policy=policy, cache_size=CACHE, unit_size=True, format=fmt)
    c1, w1 = time.process_time(), time.perf_counter()
    return {"wall": w1 - w0, "cpu": c1 - c0, "miss_ratio": r["miss_ratio"], "requests": r["requests"],
            "meta": r["metadata_bytes_per_object"]}


def popen_with_rusage(cmd: list[str]) -> tuple[bytes, bytes, int, float, float]:
    """Runs cmd; returns stdout, stderr, exit status, CPU seconds and peak RSS (MiB) of the
    command alone.

    The peak RSS of a child forked from this (large) Python process would count the pages it
    shared with us before exec, so when GNU time is available the command is started from it,
    a small process, and its figure is used."""
    import tempfile

    gnu_time = pathlib.Path("/usr/bin/time")
    with tempfile.TemporaryFile() as so, tempfile.TemporaryFile() as se, tempfile.NamedTemporaryFile("r") as tf:
        wrapped = [str(gnu_time), "-f", "%M", "-o", tf.name, *cmd] if gnu_time.exists() else cmd
        p = subprocess.Popen(wrapped, stdout=so, stderr=se)
        _, status, ru = os.wait4(p.pid, 0)
        code = os.waitstatus_to_exitcode(status)
        so.seek(0)
        se.seek(0)
        rss_mib = ru.ru_maxrss / 1024
        if gnu_time.exists() and code == 0:
            rss_mib = int(tf.read().strip().splitlines()[-1]) / 1024
        return so.read(), se.read(), code, ru.ru_utime + ru.ru_stime, rss_mib


def run_cli(path: pathlib.Path, policy: str, csv: bool) -> dict:
    fmt = "csv" if csv else "oracle-general"
    cmd = [*iostack_exe(), "sim", str(path), "--policy", policy, "--cache", str(CACHE), "--unit-size", "--format", fmt, "--json"]
    w0 = time.perf_counter()
    out, err, code, cpu, rss_mib = popen_with_rusage(cmd)
    w1 = time.perf_counter()
    if code != 0:
        raise SystemExit(f"{' '.join(cmd)} failed: {err.decode()}")
    r = json.loads(out)[0]
    return {"wall": w1 - w0, "cpu": cpu, "rss_mib": rss_mib, "miss_ratio": r["miss_ratio"],
            "meta": r["metadata_bytes_per_object"]}


def memory_breakdown(path: pathlib.Path) -> tuple[float, float] | None:
    """Peak anonymous and file-backed RSS (MiB) of one CLI run (LRU), sampled from
    /proc/PID/status every 10 ms (Linux only): the file-backed part is the memory-mapped trace,
    and the program code, page cache the kernel can drop, not memory iostack allocates."""
    if not pathlib.Path("/proc/self/status").exists():
        return None
    cmd = [*iostack_exe(), "sim", str(path), "--policy", "lru", "--cache", str(CACHE), "--unit-size", "--json"]
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    anon = file = 0
    while p.poll() is None:
        try:
            with open(f"/proc/{p.pid}/status") as f:
                for line in f:
                    if line.startswith("RssAnon:"):
                        anon = max(anon, int(line.split()[1]))
                    elif line.startswith("RssFile:"):
                        file = max(file, int(line.split()[1]))
        except (OSError, ValueError):
            pass
        time.sleep(0.01)
    return anon / 1024, file / 1024


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return f"{cpu}, {os.cpu_count()} logical CPUs, {platform.system()} {platform.release()}, Python {platform.python_version()}, load average {load:.1f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3, help="runs per measurement; the fastest is kept (default 3)")
    ap.add_argument("--requests", type=int, default=10_000_000)
    ap.add_argument("--no-csv", action="store_true", help="skip the CSV comparison")
    ap.add_argument("--csv-only", action="store_true",
                    help="only what the CSV reading figure needs: LRU on the binary and on the CSV trace")
    args = ap.parse_args()

    import iostack
    import libcachesim

    binary, csv = ensure_traces(args.requests)
    n = args.requests
    print(f"machine: {machine()}")
    print(f"libCacheSim {getattr(libcachesim, '__version__', '?')}, iostack {iostack.__version__}, CLI {' '.join(iostack_exe())}")
    print(f"trace: {binary.name} ({n:,} requests), cache {CACHE:,} objects, unit size; best of {args.repeat}\n")

    rows = []
    ok = True
    formats = [(binary, False)] + ([] if args.no_csv else [(csv, True)])
    results: dict = {}
    for path, is_csv in formats:
        kind = "csv" if is_csv else "oracleGeneral"
        for policy in POLICIES if not (is_csv or args.csv_only) else ["lru"]:
            lcs_r = best(lambda: run_lcs(path, policy, is_csv), args.repeat)
            py_r = best(lambda: run_py(path, policy, is_csv), args.repeat)
            cli_r = best(lambda: run_cli(path, policy, is_csv), args.repeat)
            results[(kind, policy)] = (lcs_r, py_r, cli_r)
            agree = abs(lcs_r["miss_ratio"] - py_r["miss_ratio"]) < 1e-12 and py_r["miss_ratio"] == cli_r["miss_ratio"]
            ok &= agree
            rows.append((kind, policy, lcs_r, py_r, cli_r, agree))

    hdr = f"{'trace':<14}{'policy':<7}{'libCacheSim':>13}{'iostack py':>13}{'iostack cli':>13}{'py/lcs':>9}{'cli/lcs':>9}{'cpu ratio':>10}  miss ratio (agree)"
    print("Requests per second (millions), wall clock; cpu ratio = libCacheSim CPU s / iostack py CPU s")
    print(hdr)
    for kind, policy, l, p, c, agree in rows:
        print(
            f"{kind:<14}{policy:<7}{n / l['wall'] / 1e6:>13.2f}{n / p['wall'] / 1e6:>13.2f}{n / c['wall'] / 1e6:>13.2f}"
            f"{l['wall'] / p['wall']:>8.1f}x{l['wall'] / c['wall']:>8.1f}x{l['cpu'] / p['cpu']:>9.1f}x  "
            f"{p['miss_ratio']:.7f} vs {l['miss_ratio']:.7f} ({'yes' if agree else 'NO'})"
        )
    print()
    for kind, policy, l, p, c, _ in rows:
        print(f"{kind:<14}{policy:<7}libCacheSim reader construction {l['reader_init'] * 1e3:.2f} ms; "
              f"iostack metadata {p['meta']:.1f} B per cached object; iostack CLI peak RSS {c['rss_mib']:.1f} MiB")
    mem = None if args.csv_only else memory_breakdown(binary)
    if mem:
        print(f"iostack CLI (LRU, oracleGeneral) peak RSS split: {mem[0]:.1f} MiB anonymous, {mem[1]:.1f} MiB file-backed "
              f"(the memory-mapped trace, {binary.stat().st_size / 2**20:.0f} MiB on disk, and program code)")
    if ("csv", "lru") in results:
        lb, pb, cb = results[("oracleGeneral", "lru")]
        lc, pc, cc = results[("csv", "lru")]
        lcs_read = max(lc["cpu"] - lb["cpu"], 1e-9)
        io_read = max(pc["cpu"] - pb["cpu"], 1e-9)
        print(
            f"\nCSV reading (CPU time on CSV minus on binary, LRU): libCacheSim {lcs_read:.2f} s "
            f"({n / lcs_read / 1e6:.2f} M lines/s), iostack {io_read:.2f} s ({n / io_read / 1e6:.2f} M lines/s): "
            f"{lcs_read / io_read:.1f}x"
        )
        print(f"CSV end to end (LRU, wall): iostack py {lc['wall'] / pc['wall']:.1f}x, cli {lc['wall'] / cc['wall']:.1f}x libCacheSim")
    if not ok:
        print("\nMISS RATIOS DISAGREE")
        sys.exit(1)


if __name__ == "__main__":
    main()
