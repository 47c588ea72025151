#!/usr/bin/python3
"""    make_report_dir.py PARITY OUT [--steps N] [--replace]

Builds three report directories for render_report's tests the way a user gets them: the
demo repository (examples/make-demo-repo) and `PARITY premerge --yes` once per case, so
the ledger, the training logs, the initial checkpoint, the infra tarball and
toy_small/report.json + diff_summary.csv are written by parity's own tools (audit_workspace,
probe_env, run_training on the real toy trainer, compare_logs). For the failing case the
root cause is hunted as the precision-comparer skill does: both sides rerun for one step
with msprobe-format dumps (run_training), msprobe_first_diff writes hunt/hunt.json, and
audit_workspace removes the worktrees.

  refactor        refactor/move-helpers     TensorBoard values, bitwise          PASS
  gelu_tanh       numerics/gelu-tanh        TensorBoard values, bitwise          FAIL
  ulp_loss_order  ulp/loss-reduction-order  printed values (grad_norm 4 decimals)
                                            against the 1e-5 tolerance           INCONCLUSIVE

OUT/<case>/numerical_report/ is each report directory. The verdicts are checked against
the demo's ground truth; any tool failure stops the script with the tool's output.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MAKE_DEMO = os.path.join(ROOT, "examples", "make-demo-repo")
CONFIG = "toy_small"

CASES = [  # (case, branch, premerge.json settings, expected verdict, exit status)
    ("refactor", "refactor/move-helpers", {"tensorboard": True, "compare": {"preset": "premerge", "tolerance_abs": 0}},
     "PASS", 0),
    ("ulp_loss_order", "ulp/loss-reduction-order", {"tensorboard": False, "compare": {"preset": "premerge"}},
     "INCONCLUSIVE", 2),
    # Last: its worktrees stay for the dump runs and are then removed with audit_workspace.
    ("gelu_tanh", "numerics/gelu-tanh",
     {"tensorboard": True, "compare": {"preset": "premerge", "tolerance_abs": 0}, "cleanup": False}, "FAIL", 1),
]


def run(argv, cwd, ok_codes=(0,)):
    proc = subprocess.run(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=900)
    if proc.returncode not in ok_codes:
        sys.exit(f"{argv} in {cwd} exited {proc.returncode}:\n--- stdout\n{proc.stdout.decode(errors='replace')[-4000:]}"
                 f"\n--- stderr\n{proc.stderr.decode(errors='replace')[-4000:]}")
    return proc


def call(parity, tool, arguments, report_dir, cwd):
    out = run([parity, "call", tool, json.dumps(arguments), "--report-dir", report_dir], cwd).stdout
    return json.loads(out)


def premerge(parity, out, repo, case, branch, settings, steps, expected, code):
    report_dir = os.path.join(out, case, "numerical_report")
    config = {"repo": repo, "report_dir": report_dir, "baseline": "main", "candidate": branch, "model": "toy",
              "configs": [CONFIG], "steps": steps, "dataset_path": "data/corpus.txt", **settings}
    path = os.path.join(out, f"premerge_{case}.json")
    with open(path, "w") as f:
        json.dump(config, f, indent=2)
    # --no-cache: every fixture run trains its baseline, whatever an earlier run left cached.
    result = json.loads(run([parity, "premerge", "--config", path, "--yes", "--no-cache"], repo,
                            ok_codes=(code,)).stdout)
    if result["verdict"] != expected:
        sys.exit(f"{case}: premerge verdict {result['verdict']}, expected {expected}: {json.dumps(result, indent=2)}")
    return report_dir


def hunt(parity, repo, report_dir, branch):
    """Skill precision-comparer: one step with msprobe dumps on both sides, then the first divergent API."""
    worktrees = {"baseline": f"{repo}-baseline", "candidate": f"{repo}-candidate"}
    dumps = {}
    for side, worktree in worktrees.items():
        dumps[side] = os.path.join(report_dir, "hunt", "dump", side)
        job = call(parity, "run_training",
                   {"action": "start", "phase": "train", "side": side, "worktree": worktree, "config": "toy_debug",
                    "model": "toy", "dataset_path": "data/corpus.txt", "steps": 1, "load_checkpoint": False,
                    "probe_env": False,
                    "extra_args": ["--dump.dir", dumps[side], "--dump.level", "L1", "--dump.mode", "statistics",
                                   "--dump.step", "0"]},
                   report_dir, repo)
        if job["job"]["status"] != "ok":
            sys.exit(f"dump run {side} failed: {json.dumps(job, indent=2)}")
    found = call(parity, "msprobe_first_diff",
                 {"baseline_dump": dumps["baseline"], "candidate_dump": dumps["candidate"],
                  # The candidate worktree is a repository of its own (linked), holding both refs.
                  "worktree": worktrees["candidate"], "repo": worktrees["candidate"], "baseline_ref": "main",
                  "candidate_ref": branch},
                 report_dir, repo)
    if not found.get("found") or not (found["first_divergence"].get("source") or {}).get("hunk"):
        sys.exit(f"msprobe_first_diff found no divergence or no git hunk: {json.dumps(found, indent=2)[:4000]}")
    call(parity, "audit_workspace", {"action": "cleanup", "repo": repo, "paths": list(worktrees.values())},
         report_dir, repo)
    return found["first_divergence"]["api"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("parity")
    ap.add_argument("out")
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--replace", action="store_true", help="delete OUT first")
    args = ap.parse_args()
    parity, out = os.path.abspath(args.parity), os.path.abspath(args.out)
    if args.replace and os.path.exists(out):
        shutil.rmtree(out)
    run([sys.executable, MAKE_DEMO, os.path.join(out, "demo")], ROOT)
    repo = os.path.join(out, "demo", "toy-trainer")
    truth = json.load(open(os.path.join(out, "demo", "ground_truth.json")))
    report_dirs, verdicts = {}, {}
    for case, branch, settings, expected, code in CASES:
        report_dirs[case] = premerge(parity, out, repo, case, branch, settings, args.steps, expected, code)
        verdicts[case] = expected
    api = hunt(parity, repo, report_dirs["gelu_tanh"], "numerics/gelu-tanh")
    want = truth["branches"]["numerics/gelu-tanh"]["first_divergent_api"]
    if api != want:
        sys.exit(f"msprobe_first_diff named {api}, the demo's ground truth says {want}")
    print(json.dumps({"repo": repo, "report_dirs": report_dirs, "verdicts": verdicts, "first_divergent_api": api}))


if __name__ == "__main__":
    main()
