#!/usr/bin/env bash
# Runs the official MCP conformance suite against a server started here.
#   run-conformance.sh VERSION SERVER_BINARY [suite options...]
#   e.g. run-conformance.sh 0.1.16 build/tests/conformance/parity-conformance-fixture --suite all
# The server is started with --http 127.0.0.1:0 (the kernel picks a free port; the server
# prints the URL), always stopped on exit, and the suite's exit status is returned.
# PARITY_DEPS (default ~/.cache/parity-deps) holds node22/ and conformance-VERSION/.
set -euo pipefail
version="${1:?usage: run-conformance.sh VERSION SERVER_BINARY [suite options...]}"
server="${2:?usage: run-conformance.sh VERSION SERVER_BINARY [suite options...]}"
shift 2
deps="${PARITY_DEPS:-$HOME/.cache/parity-deps}"
node_bin="$deps/node22/node_modules/node/bin"
suite="$deps/conformance-$version/node_modules/@modelcontextprotocol/conformance/dist/index.js"
[ -x "$node_bin/node" ] || { echo "run-conformance: Node 22 not found at $node_bin (run scripts/install-deps)" >&2; exit 1; }
[ -f "$suite" ] || { echo "run-conformance: conformance $version not found at $suite (run scripts/install-deps)" >&2; exit 1; }
export PATH="$node_bin:$PATH"

work="$(mktemp -d)"
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT INT TERM

"$server" --http 127.0.0.1:0 2>"$work/server.log" &
server_pid=$!
url=""
for _ in $(seq 1 100); do
  url="$(grep -o 'http://127.0.0.1:[0-9]*/mcp' "$work/server.log" || true)"
  [ -n "$url" ] && break
  kill -0 "$server_pid" 2>/dev/null || { echo "run-conformance: server exited:" >&2; cat "$work/server.log" >&2; exit 1; }
  sleep 0.1
done
[ -n "$url" ] || { echo "run-conformance: server did not start" >&2; cat "$work/server.log" >&2; exit 1; }
echo "run-conformance: conformance $version against $url $*"

status=0
node "$suite" server --url "$url" "$@" >"$work/out.txt" 2>&1 || status=$?
cat "$work/out.txt"
echo "run-conformance: exit status $status"
if [ "$status" -ne 0 ]; then
  echo "--- server log (tail) ---"
  tail -n 40 "$work/server.log"
fi
exit "$status"
