#!/usr/bin/env bash
# Runs every fuzz target in fuzz/ for SECONDS each (default 60) with cargo-fuzz (libFuzzer) on
# the nightly toolchain, installing cargo-fuzz first if it is missing. Corpora are kept in
# fuzz/corpus/TARGET (not committed), started from the valid examples in fuzz/seeds/TARGET
# (committed, read but never written); a crash stops with the reproducer under fuzz/artifacts/.
# Turn each crash into a regression test under the normal test command (docs/reliability.md).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
    cargo install cargo-fuzz
fi
targets=$(cargo +nightly fuzz list --fuzz-dir fuzz)
for t in $targets; do
    echo "== $t: ${seconds}s"
    mkdir -p "fuzz/corpus/$t"
    seeds=()
    if [ -d "fuzz/seeds/$t" ]; then seeds=("fuzz/seeds/$t"); fi
    cargo +nightly fuzz run --fuzz-dir fuzz "$t" "fuzz/corpus/$t" "${seeds[@]}" -- -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10
done
