#!/usr/bin/env bash
# Runs all tests: the Rust crates, then the Python package (rebuilt in place first so that the
# tests exercise the current code). Tests that need ../shared skip with a reason unless
# IOSTACK_REQUIRE_SHARED=1, when they fail instead.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --profile fasttest --workspace --exclude iostack-py
python3 -m pip install --quiet --no-deps -e .
python3 -m pytest -q tests
