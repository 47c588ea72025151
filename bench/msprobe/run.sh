#!/bin/sh
# Generates a 1 GiB-per-side msprobe dump pair from the real fixtures and measures parity's
# msprobe_first_diff reader against the Python json reader, in one run (figures for
# docs/PERFORMANCE.md). Usage: bench/msprobe/run.sh [build-dir] [size-mib] [out-dir]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-build}
size=${2:-1024}
out=${3:-/tmp/parity-msprobe-bench}
fixtures=$here/../../tests/fixtures/msprobe-real
exec "$build/bench/msprobe/msprobe_bench" --fixtures "$fixtures" --out "$out" --size-mib "$size" \
  --py-reader "$here/py_reader.py"
