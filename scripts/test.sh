#!/usr/bin/env bash
# Runs all tests: the Rust crates, then the Python package (rebuilt in place first so that the
# tests exercise the current code). Tests that need ../shared skip with a reason unless
# IOSTACK_REQUIRE_SHARED=1, when they fail instead.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --profile fasttest --workspace --exclude iostack-py
# With the profile scripts/pgo.sh made (as scripts/install.sh does), the same flags: the build
# it installed is reused when the code has not changed since.
if [ -f target/pgo/iostack.profdata ]; then
    RUSTFLAGS="${RUSTFLAGS:+$RUSTFLAGS }-Cprofile-use=$(pwd)/target/pgo/iostack.profdata" python3 -m pip install --quiet --no-deps -e .
else
    python3 -m pip install --quiet --no-deps -e .
fi
python3 -m pytest -q tests
