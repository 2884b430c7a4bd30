"""Speed of replacement policies written in Python: iostack.Policy against libCacheSim's
PluginCache (the same LRU, an OrderedDict, written once for each), with both simulators'
built-in LRU for scale.

    python bench/bench_python_policy.py [--requests N] [--objects N] [--repeat N]

Generates a Zipf(1.0) trace into bench/out/ with `iostack gen`, then times, in this process, each
simulator's run of the trace at one cache size (10% of the objects, unit size), best of
--repeat runs, and checks that all four miss ratios agree. Prints the ratio of iostack's
Python-policy time to libCacheSim's.
"""

from __future__ import annotations

import argparse
import pathlib
import subprocess
import sys
import time
from collections import OrderedDict

import iostack

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "examples"))
from python_lru import PyLRU  # noqa: E402


def best(f, repeat):
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = f()
        times.append(time.perf_counter() - t0)
    return min(times), out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=1_000_000)
    ap.add_argument("--objects", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    out = ROOT / "bench" / "out"
    out.mkdir(parents=True, exist_ok=True)
    trace = out / f"zipf1.0_{args.objects}_{args.requests}.oracleGeneral.bin"
    if not trace.exists():
        subprocess.run([sys.executable, "-m", "iostack.cli", "gen", "zipf", "--alpha", "1.0", "--objects", str(args.objects),
                        "--requests", str(args.requests), "--seed", "7", "--format", "oracle-general", "--output", str(trace)],
                       check=True)
    size = args.objects // 10
    rows = []
    t, r = best(lambda: iostack.simulate(trace, policy="lru", cache_size=size, unit_size=True), args.repeat)
    rows.append(("iostack lru (Rust)", t, r["miss_ratio"]))
    t_py, r = best(lambda: iostack.simulate(trace, policy=PyLRU, cache_size=size, unit_size=True), args.repeat)
    rows.append(("iostack PyLRU (iostack.Policy)", t_py, r["miss_ratio"]))
    try:
        import libcachesim as lcs
    except ImportError:
        lcs = None
    t_lcs = None
    if lcs is not None:
        params = lcs.ReaderInitParam(ignore_obj_size=True)

        def reader():
            return lcs.TraceReader(str(trace), lcs.TraceType.ORACLE_GENERAL_TRACE, reader_init_params=params)

        t, (mr, _) = best(lambda: lcs.LRU(size).process_trace(reader()), args.repeat)
        rows.append(("libCacheSim LRU (C)", t, mr))

        def plugin():
            return lcs.PluginCache(
                cache_size=size,
                cache_init_hook=lambda params: OrderedDict(),
                cache_hit_hook=lambda d, req: d.move_to_end(req.obj_id),
                cache_miss_hook=lambda d, req: d.__setitem__(req.obj_id, None),
                cache_eviction_hook=lambda d, req: d.popitem(last=False)[0],
                cache_remove_hook=lambda d, obj_id: d.pop(obj_id, None),
                cache_free_hook=lambda d: None,
                cache_name="PyLRU",
            )

        t_lcs, (mr, _) = best(lambda: plugin().process_trace(reader()), args.repeat)
        rows.append(("libCacheSim PluginCache LRU", t_lcs, mr))
    print(f"trace {trace.name}: {args.requests} requests, cache {size} objects, best of {args.repeat}")
    for name, t, mr in rows:
        print(f"{name:34} {t:8.3f} s  {args.requests / t / 1e6:7.2f} M req/s  miss ratio {mr:.7f}")
    if t_lcs is not None:
        print(f"iostack.Policy vs PluginCache: {t_lcs / t_py:.2f}x (above 1: iostack faster)")
    mrs = {round(mr, 7) for _, _, mr in rows}
    print("miss ratios agree" if len(mrs) == 1 else f"miss ratios DIFFER: {sorted(mrs)}")


if __name__ == "__main__":
    main()
