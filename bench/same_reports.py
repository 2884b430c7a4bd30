#!/usr/bin/env python3
"""Checks that two builds of iostack give byte-identical `iostack run --json` reports (locality
probes on) on a set of traces and stacks: the check behind every speed change that must not
change a result.

    python bench/same_reports.py BEFORE AFTER [--traces DIR] [--quick]

BEFORE and AFTER are iostack executables (e.g. a release build of the commit before a change,
copied aside, and the build after it). Traces: the shared samples under DIR (default
../shared/traces, skipped when absent) and workloads generated with AFTER into a temporary
directory (Zipf with writes and four processes, DULO's mixed files in both forms, SPC-2, a
two-device Zipf). Stacks: the default, and variants of policy, prefetcher, scheduler (CFQ and
anticipatory reorder, deadline and noop), queue depth, replay, write policy, REDCAP and a
per-device map, so that boundaries see the same streams in some runs and different ones in
others. Prints one line per run and exits non-zero if any report differs (or a run fails in
one build and not the other).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile

STACKS = [
    [],
    ["--policy", "arc", "--prefetch", "none", "--sched", "deadline"],
    ["--policy", "lru", "--queue-depth", "8", "--sched", "noop"],
    ["--sched", "cfq"],
    ["--sched", "anticipatory", "--queue-depth", "4"],
    ["--redcap", "on"],
    ["--policy", "dulo", "--write-policy", "through", "--replay", "open"],
]
QUICK = 3


def generated(exe: str, tmp: str) -> list[tuple[str, list[str]]]:
    """Workloads made by `exe gen`, with the extra options each needs to run."""
    specs = [
        ("zipf-w4.csv", ["zipf", "--alpha", "0.9", "--objects", "50000", "--requests", "60000", "--write-ratio", "0.3",
                         "--processes", "4", "--seed", "3"], []),
        ("zipf-2dev.csv", ["zipf", "--objects", "40000", "--requests", "40000", "--seed", "5"], []),
        ("mixed.csv", ["mixed-files", "--param", "passes=1", "--param", "index_reads=3000", "--param", "data_file_blocks=2048"], []),
        ("blast.csv", ["mixed-files", "--param", "blast=yes", "--param", "passes=1", "--param", "index_reads=3000",
                       "--param", "data_file_blocks=2048"], []),
        ("spc2.csv", ["spc2", "--requests", "30000", "--seed", "2"], []),
    ]
    out = []
    for name, args, extra in specs:
        path = os.path.join(tmp, name)
        subprocess.run([exe, "gen", *args, "-o", path], check=True, capture_output=True)
        if name == "zipf-2dev.csv":
            # Half the requests on a second device.
            lines = open(path).read().splitlines()
            with open(path, "w") as f:
                f.write(lines[0] + "\n")
                for i, line in enumerate(lines[1:]):
                    fields = line.split(",")
                    fields[5] = str(i % 2)
                    f.write(",".join(fields) + "\n")
            extra = ["--device", "0=hdd:st3400620as,1=ssd:x25m"]
        out.append((path, extra))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--traces", default=os.path.join(os.path.dirname(__file__), "..", "..", "shared", "traces"))
    ap.add_argument("--quick", action="store_true", help=f"only the first {QUICK} stacks")
    args = ap.parse_args()
    traces: list[tuple[str, list[str]]] = []
    if os.path.isdir(args.traces):
        for root, _, files in sorted(os.walk(args.traces)):
            for f in sorted(files):
                if f != "SOURCES.md" and not f.endswith(".vscsi"):
                    traces.append((os.path.join(root, f), []))
    else:
        print(f"note: {args.traces} is absent; generated traces only")
    stacks = STACKS[:QUICK] if args.quick else STACKS
    differ = 0
    runs = 0
    with tempfile.TemporaryDirectory(prefix="iostack-same-") as tmp:
        traces += generated(args.after, tmp)
        for trace, extra in traces:
            for stack in stacks:
                cmd = ["run", trace, "--json", *extra, *stack]
                a = subprocess.run([args.before, *cmd], capture_output=True)
                b = subprocess.run([args.after, *cmd], capture_output=True)
                runs += 1
                same = a.returncode == b.returncode and a.stdout == b.stdout
                if a.returncode != 0 and same:
                    status = f"both fail ({a.stderr.decode(errors='replace').strip().splitlines()[-1][:80]})"
                else:
                    status = "identical" if same else "DIFFERENT"
                if not same:
                    differ += 1
                print(f"{status:>10}  {os.path.basename(trace)} {' '.join(extra + stack)}")
    print(f"{runs - differ} of {runs} runs identical")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
