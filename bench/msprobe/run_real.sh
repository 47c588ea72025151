#!/bin/sh
# The real-dump case of bench/msprobe: makes a pair of REAL msprobe dumps (statistics, L1) at
# bench time with the real msprobe (never committed: hundreds of MB), then times, in one run
# on the same files, parity's first answer, parity with the compare table, cp of a file of the
# table's size, Python's json.load of the two files, and the real `msprobe compare`.
# Usage: bench/msprobe/run_real.sh MSPROBE_PYTHONPATH [build-dir] [micro-batches] [out-dir]
#   MSPROBE_PYTHONPATH: <msprobe>/python:<einops>, the sources exported as
#   tests/fixtures/msprobe-real/README.md says (fetch github:Ascend/msprobe, arogozhnikov/einops).
#   micro-batches: about 49 KB of dump.json each (4200: about 200 MB per side).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
msprobe_path=$1
build=${2:-build}
micro=${3:-4200}
out=${4:-/tmp/parity-msprobe-real}
if [ ! -f "$out/candidate/step0/rank0/dump.json" ]; then
  PYTHONPATH=$msprobe_path /usr/bin/python3 "$here/make_real_dumps.py" "$out" "$micro"
fi
exec "$build/bench/msprobe/msprobe_bench" --real "$out" --msprobe-pythonpath "$msprobe_path" \
  --py-reader "$here/py_reader.py"
