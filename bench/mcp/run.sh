#!/usr/bin/env bash
# MCP round-trip latency and memory: parity against the reference server
# @modelcontextprotocol/server-everything, measured in the same run by the same native
# client (mcp_latency). Per transport (stdio, Streamable HTTP):
#   - p50/p99 of sequential no-op tool calls: the conformance fixture tool test_simple_text
#     (served by the same protocol library and transports as `parity serve`, whose own
#     tools all do real work) vs the reference's echo;
#   - VmRSS of the server after the handshake (idle) and after the calls, for
#     `parity serve` itself (pings), the fixture, and the reference;
#   - the stdio floor: the same client against pipe_echo, a trivial program answering each
#     line with one read and one write (no JSON parser), i.e. what one pipe round trip
#     between two processes costs on this machine.
# Prints a table (medians over ROUNDS runs) and the ratios against the bars: HTTP p50 at most
# a tenth of the reference's; stdio p50 at most 3x the bare pipe round trip; idle RSS as a
# ratio to the reference (no absolute bar). Never a test: no asserts.
# Environment: PARITY_BUILD_DIR (default build), PARITY_DEPS, CALLS (2000), WARMUP (200),
# ROUNDS (3), PARITY_JOBS (2), BUILD (1; 0 measures the binaries already in the build dir).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
build="${PARITY_BUILD_DIR:-build}"
deps="${PARITY_DEPS:-$HOME/.cache/parity-deps}"
calls="${CALLS:-2000}"
warmup="${WARMUP:-200}"
rounds="${ROUNDS:-3}"
everything="$deps/clients/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
[ -f "$everything" ] || { echo "run.sh: $everything missing; run scripts/install-deps" >&2; exit 2; }
node_bin="$(command -v node)"

if [ "${BUILD:-1}" != 0 ]; then
  if [ ! -f "$build/CMakeCache.txt" ]; then
    generator=()
    command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
    cmake -S . -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  fi
  cmake --build "$build" --target mcp_latency pipe_echo parity parity-conformance-fixture \
    parity-client-fixture-stdio \
    -j "${PARITY_JOBS:-2}" >/dev/null
fi

latency="$build/bench/mcp/mcp_latency"
pipe_echo="$build/bench/mcp/pipe_echo"
parity="$build/cli/parity"
fixture_http="$build/tests/conformance/parity-conformance-fixture"
fixture_stdio="$build/tests/clients/parity-client-fixture-stdio"
for exe in "$latency" "$pipe_echo" "$parity" "$fixture_http" "$fixture_stdio"; do
  [ -x "$exe" ] || { echo "run.sh: $exe not built" >&2; exit 2; }
done

results="$(mktemp)"
trap 'rm -f "$results"' EXIT
measure() {  # measure SERVER-LABEL mcp_latency-args...
  local label="$1"; shift
  local line
  line="$("$latency" --calls "$calls" --warmup "$warmup" "$@")"
  printf '{"server":"%s","result":%s}\n' "$label" "$line" >>"$results"
}

for ((r = 1; r <= rounds; r++)); do
  echo "round $r/$rounds" >&2
  measure "parity fixture" --tool test_simple_text --stdio -- "$fixture_stdio"
  measure "reference" --tool echo --args '{"message":"x"}' --stdio -- "$node_bin" "$everything" stdio
  measure "parity fixture" --tool test_simple_text --http -- "$fixture_http" --http '127.0.0.1:{port}'
  measure "reference" --tool echo --args '{"message":"x"}' --http --env 'PORT={port}' -- "$node_bin" "$everything" streamableHttp
  measure "parity serve" --stdio -- "$parity" serve
  measure "parity serve" --http -- "$parity" serve --http '127.0.0.1:{port}'
  measure "pipe floor" --stdio -- "$pipe_echo"
done

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(uname -sr)"
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'); reference: server-everything $(sed -n 's/.*"version": "\(.*\)".*/\1/p' "$(dirname "$everything")/../package.json" | head -1) on node $("$node_bin" --version)"
echo "calls per run: $calls (after $warmup warm-up), rounds: $rounds (medians shown)"
/usr/bin/python3 - "$results" <<'PY'
import json, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    entry = json.loads(line)
    r = entry["result"]
    rows.setdefault((entry["server"], r["transport"], r["method"]), []).append(r)
med = lambda runs, key: statistics.median(x[key] for x in runs)
print(f"{'server':<15} {'transport':<9} {'request':<27} {'p50 us':>8} {'p99 us':>8} {'idle RSS KiB':>13} {'RSS after KiB':>14}")
for (server, transport, method), runs in rows.items():
    print(f"{server:<15} {transport:<9} {method:<27} {med(runs,'p50_us'):>8.0f} {med(runs,'p99_us'):>8.0f} "
          f"{med(runs,'rss_idle_kib'):>13.0f} {med(runs,'rss_after_kib'):>14.0f}")
def get(server, transport):
    for (s, t, _), runs in rows.items():
        if s == server and t == transport: return runs
p, ref = get("parity fixture", "http"), get("reference", "http")
ratio = med(p, "p50_us") / med(ref, "p50_us")
print(f"http: p50 parity/reference = {ratio:.3f} ({'meets' if ratio <= 0.1 else 'MISSES'} the bar <= 0.1); "
      f"p99 ratio {med(p,'p99_us') / med(ref,'p99_us'):.3f}")
# stdio: the bar is the physical floor, one bare pipe round trip by the same client.
p, ref, floor = get("parity fixture", "stdio"), get("reference", "stdio"), get("pipe floor", "stdio")
ratio = med(p, "p50_us") / med(floor, "p50_us")
print(f"stdio: p50 parity/pipe floor = {ratio:.2f} ({'meets' if ratio <= 3 else 'MISSES'} the bar <= 3); "
      f"parity/reference {med(p,'p50_us') / med(ref,'p50_us'):.3f}, p99 ratio {med(p,'p99_us') / med(ref,'p99_us'):.3f}")
# Memory: no absolute bar any more (the 10 MiB one is retired); parity against the reference.
for transport in ("stdio", "http"):
    idle = med(get("parity serve", transport), "rss_idle_kib")
    ref = med(get("reference", transport), "rss_idle_kib")
    print(f"{transport}: parity serve idle RSS {idle/1024:.1f} MiB, reference {ref/1024:.1f} MiB, ratio {idle/ref:.3f}")
PY
