#!/usr/bin/python3
"""`parity premerge` comparing a trainer's own JSON-lines metrics file ("metrics_file", issue
13 item 7), end to end on the demo repository with the real toy trainer (its
--metrics.save_jsonl_file writes one object per step, floats as Python's repr) and real git.
The expected answers, decided from the demo's ground truth before running parity:

  refactor/move-helpers, bitwise      PASS: the branch is bitwise identical, and the file's
                                      full-precision values let a bitwise PASS be proven
  ulp/loss-reduction-order, bitwise   FAIL: the loss moves by a few float32 ULPs, invisible in
                                      the log's 5 printed decimals; its baseline runs come from
                                      the cache the first premerge filled
  a file committed at metrics_file    refused before any run (a run's own file could not be
                                      told from it); nothing in the worktree is removed
  a trainer that writes no file       stopped after the one-step checkpoint run, naming
                                      "metrics_file"
  metrics_file with max_parallel 2    refused before any worktree exists
  parity bisect with metrics_file     bisect/merged-change: the merge carrying the GELU change is
                                      the culprit (first-parent), each probe's file moved
  parity hunt, metrics_file per side  numerics/gelu-tanh located at the ground truth's planted
                                      line, the runs compared on the copied files; a test side
                                      whose trainer writes none is an error naming it

    metrics_file_e2e.py PARITY_BINARY REPO_ROOT
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_failures_e2e import STEPS, expect_error, fail, git, premerge_config, run_parity, worktrees  # noqa: E402

METRICS = "outputs/metrics.jsonl"
WRITE_IT = ["--metrics.save_jsonl_file=" + METRICS]


def with_metrics_file(path, **more):
    with open(path) as f:
        config = json.load(f)
    config["metrics_file"] = METRICS
    config["compare"] = {"preset": "premerge", "bitwise": True}
    config.update(more)
    with open(path, "w") as f:
        json.dump(config, f, indent=2)
    return path


def case_report(report_dir, case):
    with open(os.path.join(report_dir, case, "report.json")) as f:
        return json.load(f)


def main():
    parity, root = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory(prefix="parity-metrics-file-") as dest:
        os.environ["XDG_CACHE_HOME"] = os.path.join(dest, "cache")  # this test's baseline cache
        subprocess.run([os.path.join(root, "examples", "make-demo-repo"), dest, "--steps", str(STEPS)], check=True,
                       capture_output=True)
        repo = os.path.join(dest, "toy-trainer")
        only_user_tree = worktrees(repo)

        # 1. A bitwise-identical refactor: PASS, proven on the file's full-precision values.
        name = "refactor"
        config = with_metrics_file(premerge_config(dest, repo, name, "refactor/move-helpers", ["toy_small"], WRITE_IT))
        code, out, err = run_parity(parity, "premerge", "--config", config)
        if code != 0 or out.get("verdict") != "PASS":
            fail(f"refactor: expected PASS, got exit {code}:\n{json.dumps(out, indent=1)}\n{err[-3000:]}")
        report_dir = os.path.join(dest, "reports", name)
        for side in ("gen_ckpt", "baseline", "baseline_r2", "candidate"):
            copy = os.path.join(report_dir, "metrics", f"{side}_toy_small.jsonl")
            if not os.path.isfile(copy):
                fail(f"refactor: no copy of the {side} run's metrics file at {copy}")
            with open(copy) as f:
                steps = [json.loads(line)["step"] for line in f]
            want = [1] if side == "gen_ckpt" else list(range(1, STEPS + 1))
            if steps != want:
                fail(f"refactor: {copy} holds steps {steps}, not {want}")
        r = case_report(report_dir, "toy_small")
        if r["verdict"] != "PASS" or not r["metrics"]["loss"]["bitwise_equal"]:
            fail(f"refactor: toy_small/report.json: {json.dumps(r, indent=1)[:3000]}")
        compared = json.dumps(r)
        if "metrics/baseline_toy_small.jsonl" not in compared or "metrics/candidate_toy_small.jsonl" not in compared:
            fail(f"refactor: the case did not compare the metrics files:\n{compared[:3000]}")
        if "--metrics.enable_tensorboard" in err:
            fail("refactor: TensorBoard flags were added although metrics_file replaces them")
        if worktrees(repo) != only_user_tree:
            fail(f"refactor: worktrees left: {worktrees(repo)}")

        # 2. A few float32 ULPs on the loss: FAIL at full precision; the baseline from the cache.
        name = "ulp"
        config = with_metrics_file(premerge_config(dest, repo, name, "ulp/loss-reduction-order", ["toy_small"], WRITE_IT))
        code, out, err = run_parity(parity, "premerge", "--config", config)
        case = (out.get("cases") or [{}])[0]
        if code != 1 or out.get("verdict") != "FAIL" or case.get("verdict") != "FAIL":
            fail(f"ulp: expected FAIL, got exit {code}:\n{json.dumps(out, indent=1)}\n{err[-3000:]}")
        d = (out.get("determinism") or [{}])[0]
        if d.get("from_cache") != 2:
            fail(f"ulp: expected both baseline runs from the cache: {json.dumps(d, indent=1)}")
        loss = case_report(os.path.join(dest, "reports", name), "toy_small")["metrics"]["loss"]
        if loss["bitwise_equal"] or not (0 < loss["max_abs"] < 1e-5):
            fail(f"ulp: the loss should differ by a few ULPs (0 < max_abs < 1e-5): {json.dumps(loss, indent=1)[:2000]}")

        # 3. A trainer that writes no file, over a file committed at that very path.
        git(repo, "stash", "push", "-q", "--include-untracked")
        git(repo, "checkout", "-q", "-b", "committed-metrics", "main")
        os.makedirs(os.path.join(repo, "outputs"), exist_ok=True)
        with open(os.path.join(repo, METRICS), "w") as f:
            f.write('{"step": 1, "loss": 1.0, "grad_norm": 1.0}\n{"step": 2, "loss": 1.0, "grad_norm": 1.0}\n')
        git(repo, "add", "-f", METRICS)
        git(repo, "commit", "-q", "-m", "a metrics file in the tree")
        git(repo, "checkout", "-q", "main")
        git(repo, "stash", "pop", "-q")
        name = "nofile"
        config = with_metrics_file(premerge_config(dest, repo, name, "committed-metrics", ["toy_small"]))
        code, out, err = run_parity(parity, "premerge", "--config", config)
        expect_error(code, out, err, "toy-trainer-candidate/" + METRICS + " exists before any run", "were removed")
        if os.path.exists(os.path.join(dest, "reports", name, "manifest.json")):
            with open(os.path.join(dest, "reports", name, "manifest.json")) as f:
                if any(e["tool"] == "run_training" for e in json.load(f)["entries"]):
                    fail("nofile: a training ran although the committed file was in the way")
        if worktrees(repo) != only_user_tree:
            fail(f"nofile: worktrees left: {worktrees(repo)}")
        # The same branch without the committed file: the trainer still writes none.
        git(repo, "branch", "-q", "no-metrics-file", "committed-metrics")
        subprocess.run(["git", "-C", repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "worktree", "add",
                        "-q", os.path.join(dest, "scratch"), "no-metrics-file"], check=True, capture_output=True)
        git(os.path.join(dest, "scratch"), "rm", "-q", METRICS)
        git(os.path.join(dest, "scratch"), "commit", "-q", "-m", "not in the tree after all")
        subprocess.run(["git", "-C", repo, "worktree", "remove", os.path.join(dest, "scratch")], check=True)
        name = "nofile2"
        config = with_metrics_file(premerge_config(dest, repo, name, "no-metrics-file", ["toy_small"]))
        code, out, err = run_parity(parity, "premerge", "--config", config)
        expect_error(code, out, err, "the gen_ckpt run wrote no metrics file", METRICS, '"metrics_file"', "were removed")
        with open(os.path.join(dest, "reports", name, "manifest.json")) as f:
            actions = {e.get("action") for e in json.load(f)["entries"] if e["tool"] == "run_training"}
        if actions != {"gen_ckpt"}:
            fail(f"nofile2: expected only the checkpoint run, the ledger has run_training {actions}")
        if worktrees(repo) != only_user_tree:
            fail(f"nofile2: worktrees left: {worktrees(repo)}")

        # 4. Runs side by side would write one file: refused before anything is made.
        config = with_metrics_file(premerge_config(dest, repo, "parallel", "refactor/move-helpers", ["toy_small"], WRITE_IT),
                                   max_parallel=2)
        code, out, err = run_parity(parity, "premerge", "--config", config)
        expect_error(code, out, err, 'metrics_file: needs "max_parallel": 1')
        if worktrees(repo) != only_user_tree or os.path.exists(repo + "-baseline"):
            fail(f"parallel: worktrees exist: {worktrees(repo)}")

        # 5. parity hunt with a metrics_file on both sides: the GELU change is seen in the files
        #    (the probes still come from the run's output) and located at the planted line.
        with open(os.path.join(dest, "ground_truth.json")) as f:
            planted = json.load(f)["branches"]["numerics/gelu-tanh"]["planted_change"]
        dumps = os.path.join(dest, "msprobe")
        script = ("bash scripts/run_train.sh --module toy --config toy_small --training.steps {s} --debug.seed=42 "
                  "--debug.deterministic --training.dataset_path=data/corpus.txt {w}--dump.dir {d} --dump.level mix "
                  "--dump.mode statistics --dump.step 0")

        def hunt_config(name, test_writes=True):
            side = lambda ref, d, writes: {"mode": "local", "code_path": repo, "ref": ref, "metrics_file": METRICS,
                                           "run_script": script.format(s=STEPS, d=os.path.join(dumps, name, d),
                                                                       w=WRITE_IT[0] + " " if writes else "")}
            hunt = {"baseline": side("main", "b", True), "test": side("numerics/gelu-tanh", "t", test_writes),
                    "msprobe": {"baseline_data_dir": os.path.join(dumps, name, "b"),
                                "test_data_dir": os.path.join(dumps, name, "t")},
                    "debug": {"max_iterations": 2, "tolerance": 0}}
            path = os.path.join(dest, f"hunt-{name}.json")
            with open(path, "w") as f:
                json.dump(hunt, f)
            return path

        report = os.path.join(dest, "reports", "hunt")
        code, out, err = run_parity(parity, "hunt", "--config", hunt_config("hunt"), "--report-dir", report, "--yes")
        located = out.get("located") or {}
        if code != 1 or located.get("file") != planted["file"] or located.get("line") != planted["line"]:
            fail(f"hunt: expected the divergence located at {planted['file']}:{planted['line']}, got exit {code}:\n"
                 f"{json.dumps(out, indent=1)[:3000]}\n{err[-3000:]}")
        for side in ("baseline", "candidate"):
            copy = os.path.join(report, "hunt", "metrics", f"{side}_hunt_logs.jsonl")
            if not os.path.isfile(copy):
                fail(f"hunt: the {side} run's metrics file was not copied to {copy}")
        compared = json.dumps(case_report(report, "hunt_logs"))
        if "hunt/metrics/baseline_hunt_logs.jsonl" not in compared:
            fail(f"hunt: hunt_logs did not compare the metrics files:\n{compared[:2000]}")
        if "loss and grad norm from the trainer's metrics files" not in err:
            fail(f"hunt: the source of the values is not said:\n{err[-2000:]}")

        # 6. The test side's trainer writes no file: an error naming test.metrics_file.
        code, out, err = run_parity(parity, "hunt", "--config", hunt_config("hunt-nofile", test_writes=False),
                                    "--report-dir", os.path.join(dest, "reports", "hunt-nofile"), "--yes")
        if code != 2 or "test.metrics_file: the run wrote nothing at" not in json.dumps(out):
            fail(f"hunt-nofile: expected an error naming test.metrics_file, got exit {code}:\n{json.dumps(out, indent=1)[:3000]}")
        if worktrees(repo) != only_user_tree:
            fail(f"hunt: worktrees left: {worktrees(repo)}")

        # 7. parity bisect reads the same premerge.json key: over bisect/merged-change's
        #    first-parent history the merge that brings the GELU change is the culprit, found
        #    on the moved metrics files of each probe.
        with open(os.path.join(dest, "ground_truth.json")) as f:
            merged = json.load(f)["bisect_merged"]
        config = with_metrics_file(premerge_config(dest, repo, "bisect", "bisect/merged-change", ["toy_small"], WRITE_IT))
        code, out, err = run_parity(parity, "bisect", "--config", config)
        if code != 1 or out.get("answer") != "found" or out["culprit"]["commit"] != merged["merge"]:
            fail(f"bisect: expected the merge {merged['merge']}, got exit {code}:\n{json.dumps(out, indent=1)[:3000]}\n"
                 f"{err[-3000:]}")
        moved = [os.path.join(d, f) for d, _, files in os.walk(os.path.join(dest, "reports", "bisect"))
                 for f in files if f == "candidate_toy_small.jsonl" and os.path.basename(d) == "metrics"]
        if len(moved) != len(out["probes"]):
            fail(f"bisect: {len(out['probes'])} probes but metrics files {moved}")
        if worktrees(repo) != only_user_tree:
            fail(f"bisect: worktrees left: {worktrees(repo)}")
    print("ok")


if __name__ == "__main__":
    main()
