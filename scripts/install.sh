#!/usr/bin/env bash
# Installs iostack (Rust core, CLI and Python package) with every dependency, including those of
# the tests and benchmarks, then runs the demo: several policies and cache sizes on a built-in
# generated workload.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install --upgrade --quiet pip
python3 -m pip install --quiet -e ".[test,bench]"
# The console script lands in pip's script folder, which may not be on PATH.
if command -v iostack >/dev/null 2>&1; then
    iostack demo
else
    python3 -m iostack.cli demo
fi
