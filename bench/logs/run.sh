#!/usr/bin/env bash
# parse_log / compare_logs benchmark. Generates (once) a 1 GiB torchtitan log (8 ranks
# interleaved, ANSI colours, 100k steps) and a 1 GiB Megatron log, then measures, in the
# same run and on the same page-cached files:
#   wc -l                      the read-speed floor
#   parity parse_log           bench_logs parse (domain code, loss + grad_norm, errors, markers)
#   Python re                  bench/logs/py_extract.py with /usr/bin/python3
# and compare_logs on two 1,000,000-step series (two metrics), then prints MB/s and ratios.
# Each timing is the best of RUNS (default 3; Python runs once: it takes minutes), as wall
# time and as CPU time (user + sys): on a shared, loaded machine the wall time mostly
# measures the wait for a core, so the CPU-time ratios are the steadier figures.
#   usage: bench/logs/run.sh [BUILD_DIR]     (default build-logs; needs gen_logs, bench_logs)
#   env:   BENCH_DIR (default /tmp/parity-bench-logs), BENCH_BYTES (default 1073741824),
#          RUNS (3), SKIP_PYTHON=1 to skip the slow peer.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${1:-$root/build-logs}"
build="$(cd "$build" && pwd)"  # absolute: the tool-path part runs from another folder
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

timing="$(mktemp)"
best_of() {  # best_of N CMD...: prints "WALL CPU", each the best of N runs, in seconds
  local n="$1"; shift
  local best_wall="" best_cpu=""
  for _ in $(seq "$n"); do
    /usr/bin/time -o "$timing" -f "%e %U %S" "$@" > /dev/null
    read -r wall user sys < <(tail -1 "$timing")
    local cpu
    cpu=$(echo "$user + $sys" | bc -l)
    if [[ -z "$best_wall" ]] || (( $(echo "$wall < $best_wall" | bc -l) )); then best_wall="$wall"; fi
    if [[ -z "$best_cpu" ]] || (( $(echo "$cpu < $best_cpu" | bc -l) )); then best_cpu="$cpu"; fi
  done
  echo "$best_wall $best_cpu"
}
ratio() { if (( $(echo "$2 > 0" | bc -l) )); then echo "$1 / $2" | bc -l; else echo 0; fi; }  # 0: too fast to time

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); load $(cut -d' ' -f1-3 /proc/loadavg)"
regex_tt='loss: +(?<loss>[-+0-9.eE]+|nan|inf)'
regex_meg='lm loss: (?<loss>[-+0-9.eE]+)'
for f in "$tt" "$meg"; do
  size=$(stat -c %s "$f")
  mb=$(echo "$size / 1000000" | bc -l)
  regex="$regex_tt"; [[ "$f" == "$meg" ]] && regex="$regex_meg"
  cat "$f" > /dev/null  # into the page cache, so every tool reads from memory
  read -r wc_wall wc_cpu < <(best_of "$runs" wc -l "$f")
  read -r p_wall p_cpu < <(best_of "$runs" "$bench" parse "$f")
  read -r r_wall r_cpu < <(best_of "$runs" "$bench" regex "$f" "$regex")
  "$bench" parse "$f"
  py_wall=""
  if [[ "${SKIP_PYTHON:-0}" != 1 ]]; then
    /usr/bin/time -o "$timing" -f "%e %U %S" /usr/bin/python3 "$root/bench/logs/py_extract.py" "$f"
    read -r py_wall py_user py_sys < <(tail -1 "$timing")
    py_cpu=$(echo "$py_user + $py_sys" | bc -l)
  fi
  printf '%s (%.0f MB)                 wall                      CPU (user+sys)\n' "$(basename "$f")" "$mb"
  printf '  wc -l             %8.3f s %8.1f MB/s      %8.3f s\n' "$wc_wall" "$(ratio "$mb" "$wc_wall")" "$wc_cpu"
  printf '  parse_log         %8.3f s %8.1f MB/s      %8.3f s     %.2fx / %.2fx the time of wc -l (wall / CPU)\n' \
    "$p_wall" "$(ratio "$mb" "$p_wall")" "$p_cpu" "$(ratio "$p_wall" "$wc_wall")" "$(ratio "$p_cpu" "$wc_cpu")"
  printf '  parse_log regex   %8.3f s %8.1f MB/s      %8.3f s     (%s)\n' \
    "$r_wall" "$(ratio "$mb" "$r_wall")" "$r_cpu" "$regex"
  if [[ -n "$py_wall" ]]; then
    printf '  python re         %8.3f s %8.1f MB/s      %8.3f s     parse_log is %.1fx / %.1fx faster (wall / CPU)\n' \
      "$py_wall" "$(ratio "$mb" "$py_wall")" "$py_cpu" "$(ratio "$py_wall" "$p_wall")" "$(ratio "$py_cpu" "$p_cpu")"
  fi
done
out="$(mktemp -d)"
trap 'rm -rf "$out" "$timing"' EXIT
echo "compare_logs core, two 1,000,000-step series (loss, grad_norm):"
for _ in $(seq "$runs"); do "$bench" compare 1000000 "$out/case"; done

# The tool path itself (#15 case 11): `parity call parse_log` on the Megatron log, its output
# size and peak memory, and one MCP round trip (`parity serve` on stdio: initialize,
# tools/call) with the size of the response, beside wc -l on the same file.
parity="$build/cli/parity"
if [[ -x "$parity" ]]; then
  cd "$out"
  read -r wc_wall wc_cpu < <(best_of 1 wc -l "$meg")
  /usr/bin/time -o "$timing" -f "%e %U %S %M" "$parity" call parse_log "{\"paths\": [\"$meg\"]}" --allow-folder "$dir" > "$out/call.json"
  read -r c_wall c_user c_sys c_rss < <(tail -1 "$timing")
  printf 'parity call parse_log %s: %.3f s wall (%.2fx wc -l), %s KB peak RSS, %s bytes of output\n' \
    "$(basename "$meg")" "$c_wall" "$(ratio "$c_wall" "$wc_wall")" "$c_rss" "$(stat -c %s "$out/call.json")"
  : > "$out/responses.jsonl"
  # stdin stays open until the tools/call response is out (the server exits on EOF).
  /usr/bin/time -o "$timing" -f "%e %M" "$parity" serve --allow-folder "$dir" > "$out/responses.jsonl" 2> /dev/null < <(
    printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}'
    printf '%s\n' '{"jsonrpc":"2.0","method":"notifications/initialized"}'
    printf '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"parse_log","arguments":{"paths":["%s"]}}}\n' "$meg"
    until grep -q '"id":2' "$out/responses.jsonl" 2> /dev/null; do sleep 0.2; done
  ) || true
  read -r s_wall s_rss < <(tail -1 "$timing")
  printf 'MCP round trip (parity serve, stdio): tools/call response %s bytes, server peak RSS %s KB\n' \
    "$(tail -1 "$out/responses.jsonl" | wc -c)" "$s_rss"
fi
