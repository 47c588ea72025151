#!/usr/bin/python3
"""The demo repository: generated deterministically, with the git layout the ground truth
describes, and branches that train as it says (refactor bitwise identical, numerics branch
diverging at step 1, ULP branch a few float32 ULPs off with identical gradients)."""
import os
import shutil
import struct
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import toylib  # noqa: E402

STEPS = 8


def git(repo, *args):
    return subprocess.run(["git", "-C", repo, *args], check=True, text=True, stdout=subprocess.PIPE).stdout.strip()


def ulps(a: float, b: float) -> int:
    ia, ib = (struct.unpack("<i", struct.pack("<f", v))[0] for v in (a, b))
    return abs(ia - ib)


def check_git_layout(truth):
    repo = truth["repo"]
    status = git(repo, "status", "--porcelain")
    if status != "M scripts/run_train.sh":
        toylib.fail(f"working tree should hold only the infra change, git status says {status!r}")
    if git(repo, "rev-parse", "--abbrev-ref", "HEAD") != "main":
        toylib.fail("HEAD is not on main")
    if git(repo, "rev-parse", "--abbrev-ref", "main@{upstream}") != truth["stale_fork"]["main_upstream"]:
        toylib.fail("main does not track origin/master")
    sf = truth["stale_fork"]
    if git(repo, "rev-parse", "origin/master") != sf["origin_master"] or git(repo, "rev-parse", "cann/master") != sf["cann_master"]:
        toylib.fail("remote masters do not match the ground truth")
    if git(repo, "merge-base", "origin/master", "cann/master") != sf["merge_base"]:
        toylib.fail("merge base of the two masters is not the baseline commit")
    counts = git(repo, "rev-list", "--left-right", "--count", "origin/master...cann/master").split()
    if counts != [str(sf["origin_only_commits"]), str(sf["cann_only_commits"])]:
        toylib.fail(f"origin/master...cann/master counts {counts}, ground truth {sf}")
    for branch, info in truth["branches"].items():
        if git(repo, "rev-parse", branch) != info["commit"]:
            toylib.fail(f"{branch} is not at the recorded commit")
        if git(repo, "rev-parse", f"{branch}~1") != truth["baseline"]["commit"]:
            toylib.fail(f"{branch} is not one commit on top of main")
    planted = truth["branches"]["numerics/gelu-tanh"]["planted_change"]
    line = git(repo, "show", f"numerics/gelu-tanh:{planted['file']}").splitlines()[planted["line"] - 1]
    if line.strip() != planted["after"] or 'approximate="tanh"' not in line:
        toylib.fail(f"planted line {planted['file']}:{planted['line']} is {line!r}")
    changed = git(repo, "diff", "--name-only", "main", "numerics/gelu-tanh").splitlines()
    if changed != [planted["file"]]:
        toylib.fail(f"numerics branch changes {changed}, expected only {planted['file']}")


def train(path, dump_folder):
    proc = toylib.run_train(path, ["--module", "toy", "--config", "toy_small", f"--training.steps={STEPS}", "--debug.seed=42",
                                   "--debug.deterministic", "--metrics.enable_tensorboard", f"--dump_folder={dump_folder}"])
    return toylib.metric_lines(proc.stdout), toylib.tb_scalars(dump_folder)


def main():
    tmp = toylib.tempdir("demo")
    truth = toylib.make_demo_repo(os.path.join(tmp, "demo"), ["--steps", str(STEPS)])
    again = toylib.make_demo_repo(os.path.join(tmp, "demo2"), ["--steps", str(STEPS)])
    for key in ("baseline",):
        if truth[key]["commit"] != again[key]["commit"]:
            toylib.fail("two generations produced different baseline commits")
    if {b: i["commit"] for b, i in truth["branches"].items()} != {b: i["commit"] for b, i in again["branches"].items()}:
        toylib.fail("two generations produced different branch commits")
    check_git_layout(truth)

    repo = truth["repo"]
    wt = os.path.join(tmp, "wt")
    runs = {}
    for branch in ["main", *truth["branches"]]:
        path = toylib.worktree(repo, branch, wt)
        runs[branch] = train(path, os.path.join(tmp, "out", branch.replace("/", "_")))
    base_rows, base_tb = runs["main"]
    loss_tag = "loss_metrics/global_avg_loss"

    rows, tb = runs["refactor/move-helpers"]
    if rows != base_rows or tb[loss_tag] != base_tb[loss_tag] or tb["grad_norm"] != base_tb["grad_norm"]:
        toylib.fail(f"refactor branch is not bitwise identical to main: {tb[loss_tag]} vs {base_tb[loss_tag]}")

    info = truth["branches"]["numerics/gelu-tanh"]
    _, tb = runs["numerics/gelu-tanh"]
    first = next((s for s in sorted(base_tb[loss_tag]) if tb[loss_tag][s] != base_tb[loss_tag][s]), None)
    if first is None or first > 2 or first != info["first_divergent_step"]:
        toylib.fail(f"numerics branch first diverges at step {first}, ground truth {info['first_divergent_step']}")

    info = truth["branches"]["ulp/loss-reduction-order"]
    _, tb = runs["ulp/loss-reduction-order"]
    diffs = [ulps(tb[loss_tag][s], base_tb[loss_tag][s]) for s in sorted(base_tb[loss_tag])]
    if max(diffs) == 0:
        toylib.fail("ULP branch is bitwise identical to main; it should differ by a few ULPs")
    if max(diffs) > info["max_loss_ulps_float32"]:
        toylib.fail(f"ULP branch differs by up to {max(diffs)} ULPs, more than {info['max_loss_ulps_float32']}")
    if max(abs(tb[loss_tag][s] - base_tb[loss_tag][s]) for s in base_tb[loss_tag]) >= 1e-5:
        toylib.fail("ULP branch loss differs by 1e-5 or more")
    if tb["grad_norm"] != base_tb["grad_norm"]:
        toylib.fail("ULP branch grad_norm should be bitwise identical to main")

    # The user's own working tree (with the infra patch) runs and shows the patch.
    proc = toylib.run_train(repo, ["--config", "toy_debug", "--training.steps=1", "--debug.seed=42",
                                   f"--dump_folder={os.path.join(tmp, 'out', 'user')}"])
    if truth["infra_change"]["marker_in_log"] not in proc.stdout:
        toylib.fail("the uncommitted infra change does not show in the user's run")
    if git(repo, "status", "--porcelain") != "M scripts/run_train.sh":
        toylib.fail("running training changed the user's git status")
    shutil.rmtree(tmp)
    print(f"ok: demo repo deterministic; refactor bitwise equal; numerics diverges at step 1; ULP branch max {max(diffs)} ULPs")


if __name__ == "__main__":
    main()
