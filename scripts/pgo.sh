#!/usr/bin/env bash
# Builds iostack's Rust core with profile-guided optimisation (PGO):
#
#   1. the core is built instrumented (rustc -Cprofile-generate);
#   2. that build runs a fixed training set on workloads iostack generates itself (the timed
#      stack with and without locality probes, several policies, schedulers and devices, the
#      miss-ratio simulation, the one-pass miss-ratio curve, the CSV and binary readers);
#   3. llvm-profdata merges the counts into one profile under target/pgo/;
#   4. the core is built again with it (rustc -Cprofile-use).
#
# The optimiser then knows which branches are taken and which calls are hot, which it cannot
# tell from a simulator's event loop: the timed stack's default run takes 11 % less time
# (docs/performance.md, "Profile-guided build"). Only code layout and optimisation change;
# every result is the same (bench/same_reports.py between a plain and a PGO build: all equal).
#
#   bash scripts/pgo.sh [PIP_TARGET]   the Python package, installed in place (`pip install
#                                      -e`) with PIP_TARGET's extras (default `.`; install.sh
#                                      passes `.[test,bench,ray]`); profile
#                                      target/pgo/iostack.profdata
#   bash scripts/pgo.sh --cli          the command-line binary alone, target/release/iostack
#                                      (what bench/ scripts take with --iostack); profile
#                                      target/pgo/iostack-cli.profdata
#
# Each build is profiled by its own training run: the package and the binary compile the core
# as different crates' dependency, and a profile only applies to the build that recorded it.
#
# llvm-profdata must come from the LLVM release rustc was built with (the profile format follows
# it). It is looked for in rustup's llvm-tools component, then as llvm-profdata-N and
# /usr/lib/llvm-N/bin/llvm-profdata, N being rustc's LLVM major version; as root with apt-get,
# Debian's llvm-N package is installed when none is found. Without one the core is built once,
# plainly, with a message: everything works as before, a little slower.
#
# scripts/test.sh rebuilds the package in place with the same flags when the profile exists, so
# the build this made is reused. After a change to the Rust code, run this again: a stale profile
# still builds correct code, only less well optimised.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
cli=false
if [ "${1:-}" = --cli ]; then
    cli=true
    shift
fi
target=${1:-.}
if $cli; then
    profile="$root/target/pgo/iostack-cli.profdata"
else
    profile="$root/target/pgo/iostack.profdata"
fi

# The plain build, and the build with extra rustc flags (appended to the user's RUSTFLAGS).
build() {
    local flags=$1
    shift
    if $cli; then
        RUSTFLAGS="${RUSTFLAGS:+$RUSTFLAGS }$flags" cargo build --quiet --release -p iostack-cli "$@"
    else
        RUSTFLAGS="${RUSTFLAGS:+$RUSTFLAGS }$flags" python3 -m pip install --quiet "$@"
    fi
}

llvm_major=$(rustc -vV | sed -n 's/^LLVM version: \([0-9]*\).*/\1/p')
find_profdata() {
    local host sysroot
    host=$(rustc -vV | sed -n 's/^host: //p')
    sysroot=$(rustc --print sysroot)
    for p in "$sysroot/lib/rustlib/$host/bin/llvm-profdata" "$(command -v "llvm-profdata-$llvm_major" || true)" "/usr/lib/llvm-$llvm_major/bin/llvm-profdata"; do
        if [ -n "$p" ] && [ -x "$p" ]; then
            echo "$p"
            return 0
        fi
    done
    return 1
}

profdata=$(find_profdata || true)
if [ -z "$profdata" ] && [ -n "$llvm_major" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    { DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "llvm-$llvm_major" \
        || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "llvm-$llvm_major"; }; } >/dev/null 2>&1 || true
    profdata=$(find_profdata || true)
fi
if [ -z "$profdata" ]; then
    echo "pgo.sh: no llvm-profdata for LLVM ${llvm_major:-?} (rustup's llvm-tools component, or Debian's llvm-${llvm_major:-N}); building without profile-guided optimisation" >&2
    rm -f "$profile"
    if $cli; then build ""; else build "" -e "$target"; fi
    exit 0
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/iostack-pgo.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/raw" "$(dirname "$profile")"

echo "pgo.sh: building the instrumented core" >&2
if $cli; then
    # Its own target folder: the instrumented binary must not take target/release's place.
    build "-Cprofile-generate=$work/raw" --target-dir "$root/target/pgo/instrumented"
    io() { "$root/target/pgo/instrumented/release/iostack" "$@" >/dev/null || failed=true; }
else
    build "-Cprofile-generate=$work/raw" -e "$target"
    io() { python3 -m iostack.cli "$@" >/dev/null || failed=true; }
fi

echo "pgo.sh: training" >&2
train() {
    io gen zipf --alpha 1.0 --objects 400000 --requests 1500000 --seed 11 --format oracle-general --output "$work/zipf.bin"
    io gen zipf --alpha 0.8 --objects 100000 --requests 300000 --seed 12 --write-ratio 0.2 --output "$work/zipf.csv"
    io gen mixed-files --param passes=2 --param index_reads=5000 --param small_reads=300 --output "$work/mixed.csv"
    io run "$work/zipf.bin" --cache 32MiB --json
    io run "$work/zipf.bin" --cache 32MiB --no-locality --json
    io run "$work/zipf.bin" --cache 16MiB --no-locality --sched deadline --json
    io run "$work/zipf.bin" --cache 16MiB --no-locality --policy arc --sched cfq --device ssd:x25m --json
    io run "$work/zipf.csv" --cache 8MiB --no-locality --json
    io run "$work/mixed.csv" --cache 64MiB --policy dulo --json
    io sim "$work/zipf.bin" --policy lru,arc,lirs,s3fifo,clock --cache 1000,10000,100000 --unit-size --json
    io sim "$work/zipf.csv" --policy lru,arc --cache 1MiB,16MiB --json
    io analyze "$work/zipf.bin" --json
}
# Never leave the instrumented build installed: it would write profiles wherever it runs.
plain_instead() {
    echo "pgo.sh: $1; building without profile-guided optimisation" >&2
    rm -f "$profile"
    if $cli; then build ""; else build "" --no-deps -e .; fi
    exit 1
}
failed=false
train
if $failed; then
    plain_instead "the training run failed (see above)"
fi
"$profdata" merge -o "$profile" "$work"/raw/*.profraw || plain_instead "llvm-profdata could not merge the profiles"
echo "pgo.sh: building the core with the profile ($profile)" >&2
if $cli; then build "-Cprofile-use=$profile"; else build "-Cprofile-use=$profile" --no-deps -e .; fi
