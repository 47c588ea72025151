#!/usr/bin/python3
"""What `parity premerge` and `parity hunt` leave behind when a run cannot go on, end to end on
the demo repository (examples/make-demo-repo) with the real toy trainer and real git:

  a config name with a typo      refused before any worktree exists (`git worktree list`
                                 shows the user's tree only), naming the registered configs
  a training that fails          its worktrees are removed, and the error says so
  the same with --keep-worktrees the error says they are kept, where, and the command that
                                 removes them; that command, run as printed, removes them
  a new run over kept worktrees  refused without consent, listing them (nothing removed);
                                 with --yes they are removed first (parity's mark, not a guess)
  a trainer without TensorBoard  stopped after the one-step checkpoint run (one run in the
                                 ledger), naming "tensorboard": false and what is lost
  a hunt whose run_script sets   VAR=value words reach the training's environment, the
  variables                      value `$(...)` literally (nothing runs it)
  Ctrl-C during a premerge's     (SIGINT to parity) the training ends by SIGTERM (signal 15,
  training                       status cancelled), parity exits 2 with a cancelled error,
                                 and the worktrees are removed

    run_failures_e2e.py PARITY_BINARY REPO_ROOT
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

STEPS = 2


def fail(message):
    print("FAIL:", message, file=sys.stderr)
    sys.exit(1)


def git(repo, *args):
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@example.com", GIT_CONFIG_GLOBAL="/dev/null")
    return subprocess.run(["git", "-C", repo, *args], capture_output=True, text=True, check=True, env=env).stdout


def worktrees(repo):
    return [line.split(" ", 1)[1] for line in git(repo, "worktree", "list", "--porcelain").splitlines()
            if line.startswith("worktree ")]


def run_parity(parity, *args):
    p = subprocess.run([parity, *args], capture_output=True, text=True, timeout=900)
    try:
        out = json.loads(p.stdout)
    except json.JSONDecodeError:
        fail(f"parity {' '.join(args)} printed no JSON (exit {p.returncode}):\n{p.stdout}\n{p.stderr}")
    return p.returncode, out, p.stderr


def premerge_config(dest, repo, name, candidate, configs, extra_args=None, confirm=None):
    path = os.path.join(dest, f"premerge-{name}.json")
    entries = [{"name": c, "extra_args": extra_args} if extra_args else c for c in configs]
    config = {"repo": repo, "report_dir": os.path.join(dest, "reports", name), "baseline": "main",
              "candidate": candidate, "model": "toy", "configs": entries, "steps": STEPS,
              "dataset_path": "data/corpus.txt", "compare": {"preset": "premerge", "tolerance_abs": 0},
              "confirm": {"classes": "proposed", "environment_anomalies": True, **(confirm or {})}}
    with open(path, "w") as f:
        json.dump(config, f, indent=2)
    return path


def expect_error(code, out, err, *texts):
    if code != 2 or out.get("verdict") != "ERROR":
        fail(f"expected an error (exit 2), got exit {code}:\n{json.dumps(out, indent=1)}\n{err}")
    said = out["error"]["message"] + "\n" + out["error"]["hint"]
    for t in texts:
        if t not in said:
            fail(f"the error does not say {t!r}:\n{said}")
    return out["error"]


def commit_branch(repo, branch, edits):
    """A branch off main with `edits` ({file: (before, after)}), the user's HEAD left where it was."""
    git(repo, "stash", "push", "-q", "--include-untracked")  # the demo's uncommitted infra change
    head = git(repo, "rev-parse", "--abbrev-ref", "HEAD").strip()
    git(repo, "checkout", "-q", "-b", branch, "main")
    for rel, (before, after) in edits.items():
        path = os.path.join(repo, rel)
        with open(path) as f:
            text = f.read()
        if text.count(before) != 1:
            fail(f"{rel}: {before!r} not found once; the toy trainer changed")
        with open(path, "w") as f:
            f.write(text.replace(before, after))
    git(repo, "commit", "-q", "-am", branch)
    git(repo, "checkout", "-q", head)
    git(repo, "stash", "pop", "-q")


def main():
    parity, root = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory(prefix="parity-failures-") as dest:
        subprocess.run([os.path.join(root, "examples", "make-demo-repo"), dest, "--steps", str(STEPS)], check=True,
                       capture_output=True)
        repo = os.path.join(dest, "toy-trainer")
        only_user_tree = worktrees(repo)

        # 1. A typo'd config: refused before any worktree exists.
        code, out, err = run_parity(parity, "premerge", "--config",
                                    premerge_config(dest, repo, "typo", "refactor/move-helpers", ["toy_smal"]), "--yes")
        expect_error(code, out, err, 'the config "toy_smal" of the model toy is not registered in the candidate',
                     "registered for toy: toy_small, toy_tp2, toy_debug")
        if worktrees(repo) != only_user_tree or os.path.exists(repo + "-baseline"):
            fail(f"typo: worktrees exist: {worktrees(repo)}")

        # 2. A training that fails (a flag the trainer refuses): the worktrees go.
        bad = ["--training.no_such_option=1"]
        code, out, err = run_parity(parity, "premerge", "--config",
                                    premerge_config(dest, repo, "fails", "refactor/move-helpers", ["toy_small"], bad))
        expect_error(code, out, err, "were removed")
        if worktrees(repo) != only_user_tree:
            fail(f"failed training: worktrees left: {worktrees(repo)}")

        # 3. The same, keeping them: where they are and the exact command that removes them.
        config = premerge_config(dest, repo, "kept", "refactor/move-helpers", ["toy_small"], bad)
        code, out, err = run_parity(parity, "premerge", "--config", config, "--keep-worktrees")
        error = expect_error(code, out, err, "are kept", repo + "-baseline", "remove them with: parity call audit_workspace")
        if len(worktrees(repo)) != 3:
            fail(f"--keep-worktrees: {worktrees(repo)}")
        command = error["hint"].split("remove them with: ", 1)[1].split("; ")[0]
        command = command.replace("parity call", parity + " call", 1)
        subprocess.run(["bash", "-c", command], check=True, capture_output=True)
        if worktrees(repo) != only_user_tree:
            fail(f"the printed command did not remove them: {command}\n{worktrees(repo)}")

        # 4. An earlier run's worktrees in the way: offered, removed only with consent.
        code, out, err = run_parity(parity, "premerge", "--config", config, "--keep-worktrees")
        expect_error(code, out, err, "are kept")
        marker = os.path.join(repo, ".git", "worktrees", "toy-trainer-candidate", "parity.json")
        if json.load(open(marker)).get("created_by") != "parity":
            fail("parity's mark is missing")
        code, out, err = run_parity(parity, "premerge", "--config", config)
        expect_error(code, out, err, "earlier run", "set confirm.stale_worktrees to true (or run with --yes)",
                     "remove them yourself: parity call audit_workspace")
        if len(worktrees(repo)) != 3:
            fail("the stale worktrees were removed without consent")
        code, out, err = run_parity(parity, "premerge", "--config", config, "--yes")
        expect_error(code, out, err, "were removed")
        if "removed the earlier run's worktree " + repo + "-baseline" not in err:
            fail(f"the removal of the earlier worktrees is not reported:\n{err}")
        if worktrees(repo) != only_user_tree:
            fail(f"stale: worktrees left: {worktrees(repo)}")

        # 5. A trainer that ignores the TensorBoard flags: stopped after the checkpoint run.
        commit_branch(repo, "no-tensorboard", {"toy_trainer/metrics.py": (
            "        if cfg.metrics.enable_tensorboard:\n",
            "        if cfg.metrics.enable_tensorboard:\n"
            "            logger.warning('TensorBoard is not installed; --metrics.enable_tensorboard is ignored')\n"
            "        if False:\n")})
        config = premerge_config(dest, repo, "notb", "no-tensorboard", ["toy_small"])
        code, out, err = run_parity(parity, "premerge", "--config", config)
        expect_error(code, out, err, "the initial-checkpoint run wrote no TensorBoard event file",
                     "TensorBoard is not installed", '"tensorboard": false', "INCONCLUSIVE", "were removed")
        with open(os.path.join(dest, "reports", "notb", "manifest.json")) as f:
            actions = {e.get("action") for e in json.load(f)["entries"] if e["tool"] == "run_training"}
        if actions != {"gen_ckpt"}:
            fail(f"expected only the checkpoint run, the ledger has run_training {actions}")

        # 6. run_script variables reach the child, literally.
        # (Not in scripts/run_train.sh: the demo's uncommitted change to it is copied over both sides.)
        commit_branch(repo, "env-echo", {"toy_trainer/__init__.py": (
            "checkpoint layout.\"\"\"\n",
            "checkpoint layout.\"\"\"\nimport os as _os\n"
            "print(f\"env A=[{_os.environ.get('OMP_NUM_THREADS', '')}] B=[{_os.environ.get('TOKENIZERS_PARALLELISM', '')}]\")\n")})
        dumps = os.path.join(dest, "msprobe")
        # Names the default policy lets a run set (support/policy.cpp's env.set list).
        script = ("OMP_NUM_THREADS=1 TOKENIZERS_PARALLELISM=$(touch_{d}) bash scripts/run_train.sh --module toy --config toy_small "
                  "--training.steps {s} --debug.seed=42 --debug.deterministic --training.dataset_path=data/corpus.txt "
                  "--dump.dir {d} --dump.level mix --dump.mode statistics --dump.step 0")
        hunt = {"baseline": {"mode": "local", "code_path": repo, "ref": "env-echo",
                             "run_script": script.format(s=STEPS, d=os.path.join(dumps, "b"))},
                "test": {"mode": "local", "code_path": repo, "ref": "env-echo",
                         "run_script": script.format(s=STEPS, d=os.path.join(dumps, "t"))},
                "msprobe": {"baseline_data_dir": os.path.join(dumps, "b"), "test_data_dir": os.path.join(dumps, "t")},
                "debug": {"max_iterations": 1, "tolerance": 0}}
        hunt_path = os.path.join(dest, "hunt-env.json")
        with open(hunt_path, "w") as f:
            json.dump(hunt, f)
        report = os.path.join(dest, "reports", "hunt-env")
        code, out, err = run_parity(parity, "hunt", "--config", hunt_path, "--report-dir", report, "--yes")
        if code != 0 or out.get("verdict") != "no divergence":
            fail(f"env hunt: exit {code}\n{json.dumps(out, indent=1)}\n{err}")
        if not any("is passed literally" in w for w in out["warnings"]):
            fail(f"env hunt: no warning about the literal value: {out['warnings']}")
        for side in ("baseline", "candidate"):
            with open(os.path.join(report, f"{side}_hunt_logs_train.log")) as f:
                log = f.read()
            wanted = "env A=[1] B=[$(touch_" + os.path.join(dumps, "b" if side == "baseline" else "t") + ")]"
            if wanted not in log:
                fail(f"env hunt: {side} log lacks {wanted!r}:\n{log[:2000]}")
        if worktrees(repo) != only_user_tree:
            fail(f"env hunt: worktrees left: {worktrees(repo)}")

        # 7. Ctrl-C while the baseline trains (100000 steps: it would run for hours).
        config = premerge_config(dest, repo, "interrupt", "refactor/move-helpers", ["toy_small"])
        with open(config) as f:
            c = json.load(f)
        c.update({"steps": 100000, "cache": {"enabled": False}})
        with open(config, "w") as f:
            json.dump(c, f)
        report = os.path.join(dest, "reports", "interrupt")
        p = subprocess.Popen([parity, "premerge", "--config", config], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
        log = os.path.join(report, "baseline_toy_small_train.log")
        deadline = time.time() + 300
        while not (os.path.exists(log) and "step:" in open(log, errors="replace").read()):
            if p.poll() is not None or time.time() > deadline:
                out, err = p.communicate()
                fail(f"interrupt: the baseline never trained (exit {p.returncode}):\n{out}\n{err}")
            time.sleep(0.2)
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=120)
        try:
            result = json.loads(out)
        except json.JSONDecodeError:
            fail(f"interrupt: no JSON (exit {p.returncode}):\n{out}\n{err}")
        expect_error(p.returncode, result, err, "cancelled")
        jobs = json.loads(subprocess.run([parity, "call", "run_training", json.dumps({"action": "list", "report_dir": report}),
                               "--allow-folder", dest],
                                         capture_output=True, text=True, check=True).stdout)["jobs"]
        baseline = [j for j in jobs if j.get("side") == "baseline"]
        if len(baseline) != 1 or baseline[0]["status"] != "cancelled" or baseline[0].get("signal") != 15:
            fail(f"interrupt: the baseline job did not end by SIGTERM: {json.dumps(baseline, indent=1)[:3000]}")
        if worktrees(repo) != only_user_tree:
            fail(f"interrupt: worktrees left: {worktrees(repo)}")
    print("ok")


if __name__ == "__main__":
    main()
