#!/usr/bin/python3
"""`parity bisect` end to end on make-demo-repo's bisect histories, with the real toy trainer
(Debian's PyTorch), real git worktrees and real trainings, at a few steps. The expected
answers were decided by hand from the generator (ground_truth.json) and the search's rule
(the midpoint of the untested commits; after a skip, the untested commits without it):

  bisect/history (13 first-parent commits; 6 fails with an ImportError; 8 is the GELU change)
    with the hunt     exit 1, culprit = commit 8, probes 6 (skip), 7, 10, 8 = 4 probes
                      <= ceil(log2 13) + 1 skip, 6 trainings in all (+ the good side's
                      checkpoint and run), the skip's evidence names the ImportError, every
                      probe directory holds a reproduce.json that `parity reproduce --print`
                      reads, the hunt names model.py's planted line and hunk, the worktrees
                      are removed and the user's tree is untouched
    --bad commit 7    exit 0, no_change: probes 3, 5, 6 (skip), 7 (the bad one, last)
    --jobs 2          culprit 8 in 3 rounds: {4, 8}, {5, 6}, {7}
  bisect/merged-change (refactor, README, merge of a branch carrying the change, README)
    --into-merges     the merge found first (probes 2, 3), then inside it the fork point,
                      the comment and the GELU commit: culprit = the GELU commit

    bisect_e2e.py PARITY_BINARY REPO_ROOT
"""
import json
import os
import subprocess
import sys
import tempfile

STEPS = 3


def fail(message):
    print("FAIL:", message, file=sys.stderr)
    sys.exit(1)


def git(repo, *args):
    return subprocess.run(["git", "-C", repo, *args], capture_output=True, text=True, check=True).stdout


def write_premerge(dest, name, candidate):
    config = {
        "repo": os.path.join(dest, "toy-trainer"), "report_dir": os.path.join(dest, "reports", name),
        "baseline": "main", "candidate": candidate, "model": "toy", "configs": ["toy_small"], "steps": STEPS,
        "dataset_path": "data/corpus.txt", "compare": {"preset": "premerge", "tolerance_abs": 0},
        "confirm": {"classes": "proposed", "environment_anomalies": True},
    }
    path = os.path.join(dest, f"premerge-{name}.json")
    with open(path, "w") as f:
        json.dump(config, f, indent=2)
    return path


def write_hunt(dest):
    dumps = os.path.join(dest, "msprobe")
    script = ("bash scripts/run_train.sh --module toy --config toy_small --training.steps {steps} --debug.seed=42 "
              "--debug.deterministic --training.dataset_path=data/corpus.txt --dump.level mix --dump.mode statistics "
              "--dump.step 0 --dump.dir {dump}")
    repo = os.path.join(dest, "toy-trainer")
    config = {
        "baseline": {"mode": "local", "code_path": repo, "run_script": script.format(steps=STEPS, dump=dumps + "/baseline")},
        "test": {"mode": "local", "code_path": repo, "run_script": script.format(steps=STEPS, dump=dumps + "/test")},
        "msprobe": {"baseline_data_dir": dumps + "/baseline", "test_data_dir": dumps + "/test"},
        "debug": {"max_iterations": 5, "tolerance": 0, "trace_threshold": 0},
    }
    path = os.path.join(dest, "hunt-config.json")
    with open(path, "w") as f:
        json.dump(config, f, indent=2)
    return path


def bisect(parity, config, *flags):
    p = subprocess.run([parity, "bisect", "--config", config, *flags], capture_output=True, text=True, timeout=1100)
    try:
        out = json.loads(p.stdout)
    except json.JSONDecodeError:
        fail(f"parity bisect printed no JSON (exit {p.returncode}):\n{p.stdout}\n{p.stderr}")
    return p.returncode, out, p.stderr


def probed(out):
    index = {c["commit"]: c["index"] for c in out["commits"]}
    return [(index.get(p["commit"]), p["verdict"]) for p in out["probes"]]


def check_history(parity, dest, truth, repo):
    b = truth["bisect"]
    before = (git(repo, "status", "--porcelain"), git(repo, "rev-parse", "HEAD"), git(repo, "branch", "--list"))
    code, out, err = bisect(parity, write_premerge(dest, "history", "bisect/history"), "--hunt-config", write_hunt(dest))
    if code != 1 or out["answer"] != "found":
        fail(f"history: exit {code}, answer {out.get('answer')}: {out.get('explanation')}\n{err}")
    if len(out["commits"]) != 13 or b["first_parent_commits"] != 13:
        fail(f"history: {len(out['commits'])} first-parent commits, expected 13")
    if out["culprit"]["commit"] != b["culprit"]:
        fail(f"history: culprit {out['culprit']['commit']}, planted {b['culprit']}")
    expected = [(6, "skip"), (7, "same"), (10, "differs"), (8, "differs")]
    if probed(out) != expected:
        fail(f"history: probes {probed(out)}, expected {expected}")
    if len(out["probes"]) > out["probe_bound"] or out["probe_bound"] != 4 + 1:
        fail(f"history: {len(out['probes'])} probes, bound {out['probe_bound']} (ceil(log2 13) + 1 skip = 5)")
    if out["trainings"] != 2 + 4:
        fail(f"history: {out['trainings']} trainings, expected 6 (checkpoint + good run + 4 probes)")
    skip = out["probes"][0]
    evidence = json.dumps(skip.get("evidence", {}))
    if skip["commit"] != b["skip"] or "ModuleNotFoundError" not in evidence or "fused_ops" not in evidence:
        fail(f"history: the skipped probe carries no ImportError evidence: {skip}")
    for p in out["probes"][1:]:
        if not os.path.isfile(p["reproduce"]):
            fail(f"history: probe {p['commit'][:12]} has no reproduce.json")
    plan = subprocess.run([parity, "reproduce", out["probes"][-1]["report_dir"], "--print"], capture_output=True,
                          text=True, timeout=60)
    if plan.returncode != 0 or b["culprit"] not in plan.stdout or "run_train.sh" not in plan.stdout:
        fail(f"history: parity reproduce --print of the culprit's probe:\n{plan.stdout}\n{plan.stderr}")
    hunt = out["hunt"]
    planted = b["planted_change"]
    if not hunt["ran"] or hunt["verdict"] != "inputs equal, output differs":
        fail(f"history: hunt {hunt}")
    located = hunt["located"]
    if (located["file"], located["line"]) != (planted["file"], planted["line"]):
        fail(f"history: hunt at {located['file']}:{located['line']}, planted {planted['file']}:{planted['line']}")
    hunk = [line[1:].strip() for line in located["hunk"]["lines"]]
    if hunk != [planted["before"], planted["after"]]:
        fail(f"history: hunk {located['hunk']['lines']} is not the planted change")
    if hunt["baseline_commit"] != b["commits"][6]["commit"] or hunt["candidate_commit"] != b["culprit"]:
        fail(f"history: the hunt compared {hunt['baseline_commit']}..{hunt['candidate_commit']}, not parent..culprit")
    with open(out["outputs"]["json"]) as f:
        doc = json.load(f)
    if 'approximate="tanh"' not in doc["culprit"]["diff"]:
        fail("history: bisect.json's culprit diff does not show the change")
    with open(out["outputs"]["markdown"]) as f:
        md = f.read()
    for needle in ("## Commits tried", "## The culprit", "toy_trainer/model.py:" + str(planted["line"]), "skip"):
        if needle not in md:
            fail(f"history: bisect.md lacks {needle!r}")
    after = (git(repo, "status", "--porcelain"), git(repo, "rev-parse", "HEAD"), git(repo, "branch", "--list"))
    if before != after:
        fail(f"history: the user's repository changed: {before} -> {after}")
    worktrees = git(repo, "worktree", "list", "--porcelain").count("worktree ")
    if worktrees != 1:
        fail(f"history: {worktrees - 1} worktree(s) left:\n{git(repo, 'worktree', 'list')}")
    print(f"ok history: culprit {b['culprit'][:12]} in {len(out['probes'])} probes, hunt at "
          f"{located['file']}:{located['line']}")


def check_no_change(parity, dest, truth):
    b = truth["bisect"]
    code, out, err = bisect(parity, write_premerge(dest, "nochange", "bisect/history"), "--bad", b["last_same"])
    if code != 0 or out["answer"] != "no_change":
        fail(f"no change: exit {code}, answer {out.get('answer')}: {out.get('explanation')}\n{err}")
    expected = [(3, "same"), (5, "same"), (6, "skip"), (7, "same")]
    if probed(out) != expected:
        fail(f"no change: probes {probed(out)}, expected {expected}")
    if out["culprit"] is not None or "no commit changes the numbers" not in out["explanation"]:
        fail(f"no change: {out['explanation']}")
    print("ok no change: " + out["explanation"])


def check_parallel(parity, dest, truth):
    b = truth["bisect"]
    code, out, err = bisect(parity, write_premerge(dest, "parallel", "bisect/history"), "--jobs", "2")
    if code != 1 or out["culprit"]["commit"] != b["culprit"]:
        fail(f"parallel: exit {code}: {out.get('explanation')}\n{err}")
    rounds = {}
    index = {c["commit"]: c["index"] for c in out["commits"]}
    for p in out["probes"]:
        rounds.setdefault(p["round"], []).append(index[p["commit"]])
    if sorted(rounds.values()) != sorted([[4, 8], [5, 6], [7]]):
        fail(f"parallel: rounds {rounds}, expected {{4, 8}}, {{5, 6}}, {{7}}")
    print(f"ok parallel: {len(rounds)} rounds")


def check_into_merges(parity, dest, truth):
    m = truth["bisect_merged"]
    code, out, err = bisect(parity, write_premerge(dest, "merged", "bisect/merged-change"), "--into-merges")
    if code != 1 or out["answer"] != "found":
        fail(f"into merges: exit {code}: {out.get('explanation')}\n{err}")
    if out["culprit"]["commit"] != m["culprit"] or out["culprit"].get("inside_merge") != m["merge"]:
        fail(f"into merges: culprit {out['culprit']}, expected {m['culprit']} inside {m['merge']}")
    first = [(p["commit"], p["verdict"]) for p in out["probes"] if p["history"] == "first-parent"]
    inside = [(p["commit"], p["verdict"]) for p in out["probes"] if p["history"] != "first-parent"]
    if [v for _, v in first] != ["same", "differs"] or first[1][0] != m["merge"]:
        fail(f"into merges: first-parent probes {first}")
    if inside != [(m["refactor"], "same"), (m["side_same"], "same"), (m["culprit"], "differs")]:
        fail(f"into merges: probes inside the merge {inside}")
    print("ok into merges: " + out["explanation"])


def main():
    parity, root = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory(prefix="parity-bisect-e2e-") as dest:
        subprocess.run([os.path.join(root, "examples", "make-demo-repo"), dest, "--steps", str(STEPS)], check=True,
                       capture_output=True)
        with open(os.path.join(dest, "ground_truth.json")) as f:
            truth = json.load(f)
        repo = os.path.join(dest, "toy-trainer")
        check_history(parity, dest, truth, repo)
        check_no_change(parity, dest, truth)
        check_parallel(parity, dest, truth)
        check_into_merges(parity, dest, truth)
    print("bisect e2e: all passed")


if __name__ == "__main__":
    main()
