#!/usr/bin/env bash
# Installs iostack (Rust core, CLI and Python package) with every dependency, including those of
# the tests and benchmarks, then runs the demo: several policies and cache sizes on a built-in
# generated workload.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install --upgrade --quiet pip
python3 -m pip install --quiet -e ".[test,bench]"
iostack demo
