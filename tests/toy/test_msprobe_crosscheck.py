#!/usr/bin/python3
"""Optional cross-check with the real msprobe: its `compare -da` must read the toy
trainer's dumps and name the planted API of the numerics branch.

msprobe cannot be a dependency (no PyPI here) and its code is never committed, so this
test runs only when PARITY_MSPROBE_PYTHONPATH points at a local copy (msprobe's python/
folder and einops, joined with ':'; see tests/fixtures/msprobe-real/README.md) and
is reported as skipped (exit 77) otherwise.
"""
import glob
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import toylib  # noqa: E402

SKIP = 77


def main():
    msprobe_path = os.environ.get("PARITY_MSPROBE_PYTHONPATH")
    if not msprobe_path:
        print("skipped: set PARITY_MSPROBE_PYTHONPATH to a local msprobe (python/) and einops copy to run it")
        sys.exit(SKIP)
    tmp = toylib.tempdir("msprobe")
    truth = toylib.make_demo_repo(os.path.join(tmp, "demo"))
    wt = os.path.join(tmp, "wt")
    dumps = {}
    for branch in ("main", "numerics/gelu-tanh"):
        tree = toylib.worktree(truth["repo"], branch, wt)
        out = os.path.join(tmp, "dumps", branch.replace("/", "_"))
        toylib.run_train(tree, ["--config", "toy_small", "--training.steps=1", "--debug.seed=42", "--debug.deterministic",
                                f"--dump_folder={tmp}/train", f"--dump.dir={out}", "--dump.level=mix", "--dump.mode=md5"])
        dumps[branch] = os.path.join(out, "step0")
    result = os.path.join(tmp, "compare")
    env = dict(os.environ, PYTHONPATH=msprobe_path)
    proc = subprocess.run([toylib.PYTHON, "-m", "msprobe.msprobe", "compare", "-tp", dumps["numerics/gelu-tanh"],
                           "-gp", dumps["main"], "-o", result, "-da"], env=env, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=toylib.RUN_TIMEOUT_S)
    if proc.returncode != 0 or "The analyze result is saved in" not in proc.stdout:
        toylib.fail(f"msprobe compare exited {proc.returncode}:\n{proc.stdout[-3000:]}")
    analyses = glob.glob(os.path.join(result, "diff_analyze_*.json"))
    if len(analyses) != 1:
        toylib.fail(f"expected one diff_analyze_*.json in {result}, found {os.listdir(result)}")
    with open(analyses[0]) as f:
        first = json.load(f)["rank_0"][0]["op_name"]
    expected = truth["branches"]["numerics/gelu-tanh"]["first_divergent_api"]
    if first != expected:
        toylib.fail(f"real msprobe names {first} as the first divergent API, ground truth says {expected}")
    shutil.rmtree(tmp)
    print(f"ok: real msprobe compare -da reads the toy dumps and names {first}")


if __name__ == "__main__":
    main()
