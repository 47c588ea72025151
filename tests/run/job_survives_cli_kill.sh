#!/bin/bash
# A run_training job outlives the process that started it: `parity call run_training` is
# SIGKILLed while it follows the job, then a new `parity call` (a restarted server, as far
# as the job can tell) finds the job on disk and reports it to completion, and the ledger
# holds its outcome.
# usage: job_survives_cli_kill.sh PARITY_BINARY TOY_TRAINER_DIR
set -euo pipefail
parity=$1
toy=$2
tmp=$(mktemp -d /tmp/parity-cli-kill-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cp -r "$toy" "$tmp/repo"
rm -rf "$tmp/repo/outputs"
git -C "$tmp/repo" init -q -b main
git -C "$tmp/repo" add -A
git -C "$tmp/repo" -c user.name=t -c user.email=t@example.com commit -q -m toy
report=$tmp/report

# A script of the repository run by bash: a preset's shape, which the default policy runs
# without asking (`parity call` has no terminal here to ask on).
cat > "$tmp/repo/slow.sh" <<'SH'
for i in $(seq 1 25); do echo "step: $i  loss:  1.5"; sleep 0.2; done
SH
cat > "$tmp/start.json" <<JSON
{"worktree": "$tmp/repo", "side": "baseline", "config": "slow", "launcher": "argv",
 "argv": ["bash", "slow.sh"], "steps": 25, "probe_env": false, "wait": true}
JSON
"$parity" call run_training "$(cat "$tmp/start.json")" --report-dir "$report" > "$tmp/first.out" 2>&1 &
caller=$!

log=$report/baseline_slow_train.log
for _ in $(seq 1 150); do
  if [ -f "$log" ] && [ "$(grep -c 'step:' "$log")" -ge 3 ]; then break; fi
  sleep 0.1
done
[ -f "$log" ] && [ "$(grep -c 'step:' "$log")" -ge 3 ] || { echo "the job never started"; cat "$tmp/first.out"; exit 1; }
kill -KILL "$caller"
wait "$caller" 2>/dev/null || true
id=$(ls "$report/jobs")
steps_at_kill=$(grep -c 'step:' "$log")
[ "$steps_at_kill" -lt 25 ] || { echo "the job ended before the caller was killed; nothing was tested"; exit 1; }

"$parity" call run_training "{\"action\": \"wait\", \"job_id\": \"$id\"}" --report-dir "$report" > "$tmp/second.out"
grep -q '"status": *"ok"' "$tmp/second.out" || { echo "job not reported ok:"; cat "$tmp/second.out"; exit 1; }
[ "$(grep -c 'step:' "$log")" -eq 25 ] || { echo "log incomplete"; exit 1; }
/usr/bin/python3 - "$report/manifest.json" <<'PY'
import json, sys
entries = json.load(open(sys.argv[1]))["entries"]
assert len(entries) == 1, entries
e = entries[0]
assert e["tool"] == "run_training" and e["outcome"]["status"] == "ok", e["outcome"]
assert e["outcome"]["steps"] == 25, e["outcome"]
PY
echo "job $id survived the killed caller (killed at step $steps_at_kill of 25) and was reported ok"
