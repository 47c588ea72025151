#!/usr/bin/env bash
# parse_log / compare_logs benchmark. Generates (once) a 1 GiB torchtitan log (8 ranks
# interleaved, ANSI colours, 100k steps) and a 1 GiB Megatron log, then measures, in the
# same run and on the same page-cached files:
#   wc -l                      the read-speed floor
#   parity parse_log           bench_logs parse (domain code, loss + grad_norm, errors, markers)
#   Python re                  bench/logs/py_extract.py with /usr/bin/python3
# and compare_logs on two 1,000,000-step series (two metrics), then prints MB/s and ratios.
# Each timing is the best of RUNS (default 3; Python runs once: it takes minutes).
#   usage: bench/logs/run.sh [BUILD_DIR]     (default build-logs; needs gen_logs, bench_logs)
#   env:   BENCH_DIR (default /tmp/parity-bench-logs), BENCH_BYTES (default 1073741824),
#          RUNS (3), SKIP_PYTHON=1 to skip the slow peer.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${1:-$root/build-logs}"
dir="${BENCH_DIR:-/tmp/parity-bench-logs}"
bytes="${BENCH_BYTES:-1073741824}"
runs="${RUNS:-3}"
gen="$build/bench/logs/gen_logs"
bench="$build/bench/logs/bench_logs"
for exe in "$gen" "$bench"; do
  [[ -x "$exe" ]] || { echo "missing $exe: cmake --build $build --target gen_logs bench_logs" >&2; exit 2; }
done
mkdir -p "$dir"
tt="$dir/torchtitan_8ranks_100k.log"
meg="$dir/megatron.log"
[[ -s "$tt" ]] || "$gen" torchtitan "$tt" 100000 "$bytes"
[[ -s "$meg" ]] || "$gen" megatron "$meg" "$bytes"

now() { date +%s.%N; }
best_of() {  # best_of N CMD...: prints the fastest wall time in seconds
  local n="$1"; shift
  local best=""
  for _ in $(seq "$n"); do
    local t0 t1 dt
    t0=$(now); "$@" > /dev/null; t1=$(now)
    dt=$(echo "$t1 - $t0" | bc -l)
    if [[ -z "$best" ]] || (( $(echo "$dt < $best" | bc -l) )); then best="$dt"; fi
  done
  echo "$best"
}

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); load $(cut -d' ' -f1-3 /proc/loadavg)"
for f in "$tt" "$meg"; do
  size=$(stat -c %s "$f")
  mb=$(echo "$size / 1000000" | bc -l)
  cat "$f" > /dev/null  # into the page cache, so every tool reads from memory
  t_wc=$(best_of "$runs" wc -l "$f")
  t_parity=$(best_of "$runs" "$bench" parse "$f")
  "$bench" parse "$f"
  t_py=""
  if [[ "${SKIP_PYTHON:-0}" != 1 ]]; then
    t0=$(now)
    /usr/bin/python3 "$root/bench/logs/py_extract.py" "$f"
    t1=$(now)
    t_py=$(echo "$t1 - $t0" | bc -l)
  fi
  printf '%s (%.0f MB)\n' "$(basename "$f")" "$mb"
  printf '  wc -l        %8.3f s  %8.1f MB/s\n' "$t_wc" "$(echo "$mb / $t_wc" | bc -l)"
  printf '  parse_log    %8.3f s  %8.1f MB/s   %.2fx the time of wc -l\n' "$t_parity" \
    "$(echo "$mb / $t_parity" | bc -l)" "$(echo "$t_parity / $t_wc" | bc -l)"
  if [[ -n "$t_py" ]]; then
    printf '  python re    %8.3f s  %8.1f MB/s   parse_log is %.1fx faster\n' "$t_py" \
      "$(echo "$mb / $t_py" | bc -l)" "$(echo "$t_py / $t_parity" | bc -l)"
  fi
done
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
echo "compare_logs core, two 1,000,000-step series (loss, grad_norm):"
for _ in $(seq "$runs"); do "$bench" compare 1000000 "$out/case"; done
