#!/usr/bin/python3
"""The premerge skill's initial-checkpoint flow (B1 then B2 on two branches) gives both
sides the same starting weights; full-state resume continues bitwise; torchtitan's
failure modes (the "None" string path, a DCP folder without .metadata, an unknown flag)
fail loudly with a Python traceback and a non-zero exit."""
import os
import re
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import toylib  # noqa: E402

BASE = ["--module", "toy", "--config", "toy_small", "--debug.seed=42", "--debug.deterministic",
        "--training.dataset_path=data/corpus.txt"]
_CRC = re.compile(r"Model weights crc32 before step (\d+): ([0-9a-f]{8})")


def start_crc(log: str) -> tuple[int, str]:
    m = _CRC.search(log)
    if not m:
        toylib.fail(f"no starting-weights line in log:\n{log[-2000:]}")
    return int(m.group(1)), m.group(2)


def expect_failure(workdir, args, exception_line):
    proc = toylib.run_train(workdir, args, expect_success=False)
    if proc.returncode == 0:
        toylib.fail(f"{args} should fail but exited 0")
    if "Traceback (most recent call last):" not in proc.stdout or exception_line not in proc.stdout:
        toylib.fail(f"{args}: expected a traceback ending in {exception_line!r}, got:\n{proc.stdout[-3000:]}")
    if "training success" in proc.stdout:
        toylib.fail(f"{args}: failed run still printed 'training success'")


def main():
    tmp = toylib.tempdir("ckpt")
    truth = toylib.make_demo_repo(os.path.join(tmp, "demo"))
    wt = os.path.join(tmp, "wt")
    baseline = toylib.worktree(truth["repo"], "main", wt)
    candidate = toylib.worktree(truth["repo"], "numerics/gelu-tanh", wt)

    # B1 on the candidate: one step, HF format, then moved aside as the skill does.
    gen = toylib.run_train(candidate, BASE + ["--training.steps", "1", "--checkpoint.enable",
                                              "--checkpoint.last_save_in_hf", "--checkpoint.last_save_model_only"])
    step1 = os.path.join(candidate, "outputs", "checkpoint", "step-1")
    if not os.path.isfile(os.path.join(step1, "model.safetensors")):
        toylib.fail(f"B1 did not write {step1}/model.safetensors")
    initial = os.path.join(tmp, "numerical_report", "initial_ckpt_toy_small")
    os.makedirs(initial)
    shutil.move(step1, initial)
    _, fresh_crc = start_crc(gen.stdout)

    # B2 on both sides.
    crcs = {}
    for side in (baseline, candidate):
        shutil.rmtree(os.path.join(side, "outputs", "checkpoint"), ignore_errors=True)
        proc = toylib.run_train(side, BASE + ["--training.steps=3", "--checkpoint.enable", "--checkpoint.load_only",
                                              "--checkpoint.initial_load_path", initial, "--checkpoint.initial_load_in_hf"])
        if "Loading the checkpoint from" not in proc.stdout:
            toylib.fail(f"{side}: B2 did not load the initial checkpoint")
        crcs[side] = start_crc(proc.stdout)
        if os.path.exists(os.path.join(side, "outputs", "checkpoint")):
            toylib.fail(f"{side}: --checkpoint.load_only still saved a checkpoint")
    if crcs[baseline] != crcs[candidate]:
        toylib.fail(f"starting weights differ: baseline {crcs[baseline]}, candidate {crcs[candidate]}")
    if crcs[baseline][1] == fresh_crc:
        toylib.fail("starting weights equal a fresh initialisation: the checkpoint was not applied")

    # Full-state resume (DCP-like, model + optimizer + step) continues bitwise.
    straight = toylib.run_train(baseline, BASE + ["--training.steps=4", f"--dump_folder={tmp}/straight"])
    resumed_dir = f"--dump_folder={tmp}/resumed"
    toylib.run_train(baseline, BASE + ["--training.steps=2", resumed_dir, "--checkpoint.enable", "--checkpoint.no_last_save_model_only"])
    if not os.path.isfile(os.path.join(tmp, "resumed", "checkpoint", "step-2", ".metadata")):
        toylib.fail("full checkpoint step-2 lacks .metadata")
    resumed = toylib.run_train(baseline, BASE + ["--training.steps=4", resumed_dir, "--checkpoint.enable"])
    if start_crc(resumed.stdout)[0] != 3:
        toylib.fail("resume did not continue at step 3")
    tail = [r for r in toylib.metric_lines(straight.stdout) if r["step"] > 2]
    if toylib.metric_lines(resumed.stdout) != tail:
        toylib.fail(f"resumed steps 3-4 differ from an uninterrupted run: {toylib.metric_lines(resumed.stdout)} vs {tail}")

    # Failure modes.
    expect_failure(baseline, BASE + ["--training.steps=1", "--checkpoint.enable", "--checkpoint.initial_load_path", "None"],
                   "ValueError: checkpoint.initial_load_path is specified but the path is not valid: None")
    no_metadata = os.path.join(tmp, "no_metadata")
    shutil.copytree(os.path.join(tmp, "resumed", "checkpoint", "step-2"), no_metadata)
    os.remove(os.path.join(no_metadata, ".metadata"))
    expect_failure(baseline, BASE + ["--training.steps=1", f"--dump_folder={tmp}/nm", "--checkpoint.enable",
                                     f"--checkpoint.initial_load_path={no_metadata}"], "AssertionError: metadata is None")
    expect_failure(baseline, BASE + ["--training.steps=1", f"--dump_folder={tmp}/hf", "--checkpoint.enable",
                                     f"--checkpoint.initial_load_path={initial}"], "AssertionError: metadata is None")
    unknown = toylib.run_train(baseline, BASE + ["--training.stpes=3"], expect_success=False)
    if unknown.returncode != 2 or "unrecognized arguments: --training.stpes=3" not in unknown.stdout:
        toylib.fail(f"unknown flag: exit {unknown.returncode}, output {unknown.stdout[-500:]!r}")
    shutil.rmtree(tmp)
    print("ok: B1/B2 give identical starting weights; resume is bitwise; None path, missing metadata and bad flags fail")


if __name__ == "__main__":
    main()
