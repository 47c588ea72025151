#!/usr/bin/python3
"""Skill steps 0-4 and 8 end to end through `parity call`, on the demo repository with the
real toy trainer: audit_workspace prepares the two worktrees (the uncommitted infra change to
scripts/run_train.sh copied into both), probe_env checks the machine, run_training makes the
initial checkpoint and runs baseline and candidate from it, audit_workspace cleans up, and the
user's working tree is bit-for-bit what it was.

The candidate is refactor/move-helpers, which the demo's ground truth says is bitwise
identical: the two logs must print the same losses, and carry the infra patch's marker.

usage: premerge_steps_e2e.py PARITY_BINARY MAKE_DEMO_REPO
"""
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

parity, make_demo = sys.argv[1], sys.argv[2]
tmp = tempfile.mkdtemp(prefix="parity-premerge-e2e-")
report = os.path.join(tmp, "numerical_report")


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def run(argv, cwd=None):
    p = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        fail(f"{argv} exited {p.returncode}:\n{p.stdout}\n{p.stderr}")
    return p.stdout


def call(tool, args, expect_ok=True):
    p = subprocess.run([parity, "call", tool, json.dumps(args), "--report-dir", report],
                       capture_output=True, text=True, timeout=900)
    if expect_ok and p.returncode != 0:
        fail(f"parity call {tool} exited {p.returncode}:\n{p.stdout}\n{p.stderr}")
    return json.loads(p.stdout)


def tree_fingerprint(repo):
    """HEAD, branches, index, status (with untracked), stash, and the bytes of every changed file."""
    git = lambda *a: run(["git", "-C", repo] + list(a))
    parts = [git("rev-parse", "HEAD"), git("symbolic-ref", "HEAD"), git("for-each-ref"),
             git("status", "--porcelain=v1", "--untracked-files=all"), git("stash", "list"),
             git("diff"), git("diff", "--cached"), git("worktree", "list", "--porcelain").split("\n\n")[0]]
    for line in git("status", "--porcelain=v1", "--untracked-files=all").splitlines():
        path = os.path.join(repo, line[3:])
        if os.path.isfile(path):
            parts.append(hashlib.sha256(open(path, "rb").read()).hexdigest())
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


def losses(path):
    text = re.sub(r"\x1b\[[0-9;]*m", "", open(path, encoding="utf-8", errors="replace").read())
    return re.findall(r"step:\s*\d+\s+loss:\s*(\S+)", text)


try:
    run([make_demo, os.path.join(tmp, "demo")])
    repo = os.path.join(tmp, "demo", "toy-trainer")
    before = tree_fingerprint(repo)

    # Step 0: the proposal, then prepare with every class confirmed (as the user would).
    diff = call("audit_workspace", {"action": "diff", "repo": repo, "baseline": "main",
                                    "candidate": "refactor/move-helpers"})["diff"]
    classes = {f["path"]: f["proposed"] for f in diff["files"]}
    if classes.get("scripts/run_train.sh") != "B":
        fail(f"the uncommitted infra change is not proposed as class B: {classes}")
    prepared = call("audit_workspace", {"action": "prepare", "repo": repo, "baseline": "main",
                                        "candidate": "refactor/move-helpers", "classes": classes})
    if "prepare" not in prepared:
        fail(f"prepare did not prepare: {json.dumps(prepared)[:2000]}")
    baseline_wt = prepared["prepare"]["baseline_worktree"]["path"]
    candidate_wt = prepared["prepare"]["candidate_worktree"]["path"]

    # Step 1: this machine has no NPU; probe_env says so and succeeds.
    env = call("probe_env", {})
    codes = {a["code"] for a in env["anomalies"]}
    if not {"no_npu", "torch_npu_import_failed"} <= codes:
        fail(f"probe_env anomalies on a CPU machine: {codes}")

    # Steps 3-4: B1 in the candidate worktree, B2 on both sides.
    common = {"model": "toy", "config": "toy_small", "dataset_path": "data/corpus.txt", "probe_env": False}
    gen = call("run_training", dict(common, worktree=candidate_wt, phase="gen_ckpt"))["job"]
    if gen["status"] != "ok" or not os.path.isfile(os.path.join(report, "initial_ckpt_toy_small", "model.safetensors")):
        fail(f"initial checkpoint: {json.dumps(gen)[:2000]}")
    for side, wt in (("baseline", baseline_wt), ("candidate", candidate_wt)):
        job = call("run_training", dict(common, worktree=wt, side=side, steps=8))["job"]
        if job["status"] != "ok" or job["steps"]["last"] != 8:
            fail(f"{side} run: {json.dumps(job)[:2000]}")
    base_log = os.path.join(report, "baseline_toy_small_train.log")
    cand_log = os.path.join(report, "candidate_toy_small_train.log")
    for log in (base_log, cand_log):
        if "run_train.sh: infra patch active" not in open(log).read():
            fail(f"{log} does not show the class-B infra patch")
    if len(losses(base_log)) != 8 or losses(base_log) != losses(cand_log):
        fail(f"refactor/move-helpers should be bitwise identical: {losses(base_log)} vs {losses(cand_log)}")

    manifest = json.load(open(os.path.join(report, "manifest.json")))
    runs = [e for e in manifest["entries"] if e["tool"] == "run_training"]
    if [e["outcome"]["status"] for e in runs] != ["ok", "ok", "ok"]:
        fail(f"ledger outcomes: {[e['outcome'] for e in runs]}")
    commits = {e["side"] or "gen": e["git"]["commit"] for e in runs}
    head_of = lambda wt: run(["git", "-C", wt, "rev-parse", "HEAD"]).strip()
    if commits["baseline"] != head_of(baseline_wt) or commits["candidate"] != head_of(candidate_wt):
        fail(f"ledger commits {commits}")

    # Step 8: cleanup, and the user's tree is untouched.
    call("audit_workspace", {"action": "cleanup", "repo": repo, "force": True})
    for wt in (baseline_wt, candidate_wt):
        if os.path.exists(wt):
            fail(f"worktree {wt} still exists after cleanup")
    if tree_fingerprint(repo) != before:
        fail("the user's working tree changed")
    print(f"premerge steps 0-4, 8 ok: bitwise-equal losses {losses(base_log)[:3]}..., ledger {len(manifest['entries'])} entries")
finally:
    shutil.rmtree(tmp, ignore_errors=True)
