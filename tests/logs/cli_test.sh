#!/usr/bin/env bash
# parity call parse_log / compare_logs through the real CLI on every fixture format:
# exit codes (0 ok, 1 tool error) and the structured result's key facts.
set -euo pipefail
parity="$1"
fixtures="$(cd "$(dirname "$0")" && pwd)/fixtures"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
check() {  # check FILE PYTHON-EXPR: the expression over d (the JSON) must be true
  /usr/bin/python3 - "$1" "$2" <<'PY' || fail "$2 on $(head -c 300 "$1")"
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if eval(sys.argv[2]) else 1)
PY
}
declare -A expect=([torchtitan_v022_color.log]=torchtitan [torchtitan_v021_plain.log]=torchtitan
                   [torchtitan_npu.log]=torchtitan-npu [megatron.log]=megatron [pangu_mindspeed.log]=megatron
                   [deepspeed.log]=deepspeed [hf_trainer.log]=hf_trainer [tb_baseline]=tensorboard)
for f in "${!expect[@]}"; do
  "$parity" call parse_log "{\"paths\": [\"$fixtures/$f\"]}" > "$work/out.json" 2> /dev/null
  check "$work/out.json" "d['files'][0]['format'] == '${expect[$f]}' and d['files'][0]['metrics'][0]['points'] > 0"
done
# A missing file is a tool error (exit 1) that names the path.
if "$parity" call parse_log '{"paths": ["/nonexistent/parity.log"]}' > "$work/err.txt" 2>&1; then
  fail "missing file accepted"
else
  [[ $? -eq 1 ]] || fail "missing file: exit code is not 1"
  grep -q /nonexistent/parity.log "$work/err.txt" || fail "missing file: path not in the message"
fi
"$parity" call compare_logs "{\"baseline\": \"$fixtures/tb_baseline\", \"candidate\": \"$fixtures/tb_candidate\",
  \"preset\": \"premerge\", \"case\": \"tb\"}" --report-dir "$work/report" > "$work/cmp.json" 2> /dev/null
check "$work/cmp.json" "d['verdict'] == 'PASS' and d['metrics']['loss']['max_abs_step'] == 7"
[[ -s "$work/report/tb/report.json" && -s "$work/report/tb/diff_summary.csv" && -s "$work/report/manifest.json" ]] ||
  fail "report files or ledger missing"
"$parity" call compare_logs "{\"baseline\": \"$fixtures/tb_baseline\", \"candidate\": \"$fixtures/tb_candidate\",
  \"bitwise\": true}" --report-dir "$work/report" > "$work/bw.json" 2> /dev/null
check "$work/bw.json" "d['verdict'] == 'FAIL' and d['metrics']['loss']['first_exceeding_step'] == 7"
echo "cli_test: all checks passed"
