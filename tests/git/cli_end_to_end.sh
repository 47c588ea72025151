#!/bin/bash
# audit_workspace through the real `parity call` command line on a repository made with the
# git CLI: audit, a refused unknown ref, prepare asking first and then run with the confirmed
# classes, the worktrees seen by `git worktree list`, the infra file in both, the tarball and
# the ledger, cleanup, and the user's clone (its .git included) unchanged file for file.
# KEEP=1 keeps the temporary folder for a look after a failure.
set -euo pipefail
PARITY=$1
PY=/usr/bin/python3
T=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$T"' EXIT
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null GIT_TERMINAL_PROMPT=0
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@parity.invalid GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@parity.invalid
export GIT_AUTHOR_DATE="1767268800 +0000" GIT_COMMITTER_DATE="1767268800 +0000"
fail() { echo "FAIL: $*" >&2; exit 1; }

git init -q -b master "$T/up"
mkdir -p "$T/up/scripts"
printf 'def f(x):\n    return x\n' > "$T/up/model.py"
printf '#!/bin/bash\npython train.py "$@"\n' > "$T/up/scripts/run.sh"
chmod +x "$T/up/scripts/run.sh"
git -C "$T/up" add -A && git -C "$T/up" commit -q -m base
git clone -q "$T/up" "$T/proj"
git -C "$T/proj" checkout -q -b feature
printf 'def f(x):\n    return x + 0\n' > "$T/proj/model.py"
git -C "$T/proj" commit -q -am candidate
printf '#!/bin/bash\nexport HCCL_DETERMINISTIC=true\npython train.py "$@"\n' > "$T/proj/scripts/run.sh"

snapshot() { (cd "$T/proj" && find . -print0 | LC_ALL=C sort -z | while IFS= read -r -d '' p; do
  if [ -f "$p" ]; then printf '%s %s %s\n' "$p" "$(stat -c %a "$p")" "$(sha256sum < "$p")"; else printf '%s dir\n' "$p"; fi
done); }
snapshot > "$T/before"

"$PARITY" call audit_workspace "{\"repo\": \"$T/proj\"}" --report-dir "$T/report" > "$T/audit.json" || fail "audit exit $?"
$PY - "$T/audit.json" <<'PYEOF' || fail "audit output"
import json, sys
a = json.load(open(sys.argv[1]))["audit"]
assert a["head"]["branch"] == "feature", a["head"]
assert a["head"]["upstream"] is None
assert [u["path"] for u in a["unstaged"]] == ["scripts/run.sh"], a["unstaged"]
assert a["remotes"][0]["name"] == "origin"
PYEOF

set +e
"$PARITY" call audit_workspace "{\"action\": \"diff\", \"repo\": \"$T/proj\", \"baseline\": \"nope\"}" > "$T/unknown.txt" 2>&1
rc=$?
set -e
[ "$rc" = 1 ] || fail "unknown ref: exit $rc"
grep -q "unknown revision 'nope'" "$T/unknown.txt" || fail "unknown ref message: $(cat "$T/unknown.txt")"

prepare="{\"action\": \"prepare\", \"repo\": \"$T/proj\", \"baseline\": \"origin/master\"}"
set +e
"$PARITY" call audit_workspace "$prepare" --report-dir "$T/report" > "$T/question.json" 2> "$T/question.err"
rc=$?
set -e
[ "$rc" = 1 ] || fail "prepare without answers: exit $rc"
[ ! -e "$T/proj-baseline" ] || fail "a worktree was created before the user confirmed"
$PY - "$T/question.json" "$T/classes.json" <<'PYEOF' || fail "confirmation output"
import json, sys
q = json.load(open(sys.argv[1]))
assert q["status"] == "confirmation_required", q
c = q["confirmations"][0]
fields = c["requestedSchema"]["properties"]
assert fields["scripts/run.sh"]["default"] == "B", fields
assert fields["model.py"]["default"] == "A", fields
json.dump({k: v["default"] for k, v in fields.items()}, open(sys.argv[2], "w"))
PYEOF
# The user confirmed the proposal; a script passes the confirmed classes back as `classes`
# (a confirmation token is only good inside the process that issued it).
prepare_confirmed="{\"action\": \"prepare\", \"repo\": \"$T/proj\", \"baseline\": \"origin/master\", \"classes\": $(cat "$T/classes.json")}"
"$PARITY" call audit_workspace "$prepare_confirmed" --report-dir "$T/report" > "$T/prepare.json" \
  || fail "prepare with confirmed classes: exit $? $(cat "$T/prepare.json")"

git -C "$T/proj" worktree list --porcelain > "$T/list.txt"
grep -q "^worktree $T/proj-baseline$" "$T/list.txt" || fail "baseline worktree not listed: $(cat "$T/list.txt")"
grep -q "^worktree $T/proj-candidate$" "$T/list.txt" || fail "candidate worktree not listed"
for wt in proj-baseline proj-candidate; do
  cmp "$T/proj/scripts/run.sh" "$T/$wt/scripts/run.sh" || fail "infra file differs in $wt"
  [ -x "$T/$wt/scripts/run.sh" ] || fail "executable bit lost in $wt"
done
grep -q "x + 0" "$T/proj-candidate/model.py" || fail "candidate not at the candidate commit"
if grep -q "x + 0" "$T/proj-baseline/model.py"; then fail "baseline has the candidate change"; fi
[ "$(tar -tzf "$T/report/infra_files.tar.gz")" = "scripts/run.sh" ] || fail "tarball content"
$PY -c "import json,sys; e=json.load(open(sys.argv[1]))['entries']; assert [x['action'] for x in e]==['worktree_add','worktree_add','infra_copy'], e" \
  "$T/report/manifest.json" || fail "ledger"

"$PARITY" call audit_workspace "{\"action\": \"cleanup\", \"repo\": \"$T/proj\"}" --report-dir "$T/report" > "$T/cleanup.json" \
  || fail "cleanup exit $?"
[ ! -e "$T/proj-baseline" ] && [ ! -e "$T/proj-candidate" ] || fail "worktrees left behind"
snapshot > "$T/after"
diff "$T/before" "$T/after" || fail "the user's clone changed"
echo "ok"
