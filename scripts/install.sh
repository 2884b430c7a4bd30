#!/usr/bin/env bash
# Installs iostack (Rust core, CLI and Python package) with every dependency, including those of
# the tests and benchmarks, then runs the demo: several policies and cache sizes on a built-in
# generated workload.
set -euo pipefail
cd "$(dirname "$0")/.."
# The Rust toolchain builds the core (maturin compiles it during the pip install below). It comes
# from rustup (https://rustup.rs); Debian's packaged rustc is too old for the code.
if ! command -v cargo >/dev/null 2>&1; then
    echo "install.sh: cargo is missing: install Rust 1.86 or later with rustup (https://rustup.rs), then run this again" >&2
    exit 1
fi
rust_version=$(rustc --version | awk '{print $2}')
if [ "$(printf '%s\n' 1.86.0 "$rust_version" | sort -V | head -n1)" != 1.86.0 ]; then
    echo "install.sh: rustc $rust_version is older than the 1.86 iostack needs: run 'rustup update stable'" >&2
    exit 1
fi
# Headless Chromium renders `iostack report`'s HTML in the tests (tests/test_report.py). Debian's
# package, installed where this can be done (as root with apt-get); elsewhere that test skips.
if ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null \
            || echo "install.sh: could not install chromium; the report's browser test will be skipped" >&2
    else
        echo "install.sh: chromium is missing and cannot be installed here (not root, or no apt-get); the report's browser test will be skipped" >&2
    fi
fi
python3 -m pip install --upgrade --quiet pip
# The package with its test, benchmark and Ray dependencies; its Rust core built with
# profile-guided optimisation where LLVM's profile tool can be had (scripts/pgo.sh explains).
bash scripts/pgo.sh ".[test,bench,ray]"
# The console script lands in pip's script folder, which may not be on PATH.
if command -v iostack >/dev/null 2>&1; then
    iostack demo
else
    python3 -m iostack.cli demo
fi
