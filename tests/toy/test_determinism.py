#!/usr/bin/python3
"""Two runs of the trainer with the same seed are bitwise identical in every logged value;
log lines are torchtitan's; TensorBoard event files round-trip through an independent
reader (CRCs checked) to the logged values; --debug.deterministic_warn_only is visible."""
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import toylib  # noqa: E402

STEPS = 12
FLAGS = ["--module", "toy", "--config", "toy_small", f"--training.steps={STEPS}", "--debug.seed=42",
         "--debug.deterministic", "--training.dataset_path=data/corpus.txt", "--metrics.enable_tensorboard"]


def run(tmp: str, name: str, extra: list[str] | None = None):
    out = os.path.join(tmp, name)
    proc = toylib.run_train(toylib.TRAINER, FLAGS + [f"--dump_folder={out}"] + (extra or []))
    return proc.stdout, toylib.metric_lines(proc.stdout), toylib.tb_scalars(out)


def main():
    tmp = toylib.tempdir("determinism")
    log_a, rows_a, tb_a = run(tmp, "a")
    log_b, rows_b, tb_b = run(tmp, "b")

    if [r["step"] for r in rows_a] != list(range(1, STEPS + 1)):
        toylib.fail(f"expected one metrics line per step 1..{STEPS}, got steps {[r['step'] for r in rows_a]}")
    last = log_a.rstrip("\n").splitlines()[-1]
    if not last.endswith(" - root - INFO - training success"):
        toylib.fail(f"last log line is not 'training success': {last!r}")
    if "\x1b[31mstep:  1  \x1b[32mloss: " not in log_a or "\x1b[38;2;180;60;0mgrad_norm: " not in log_a:
        toylib.fail("metrics line lacks torchtitan's colour codes")

    for a, b in zip(rows_a, rows_b):
        if (a["loss"], a["grad_norm"]) != (b["loss"], b["grad_norm"]):
            toylib.fail(f"step {a['step']}: run A logged {a}, run B logged {b}")
    for tag in ("loss_metrics/global_avg_loss", "loss_metrics/global_max_loss", "grad_norm", "lr"):
        if tb_a.get(tag) != tb_b.get(tag):
            toylib.fail(f"TensorBoard tag {tag} differs between two identical runs: {tb_a.get(tag)} vs {tb_b.get(tag)}")

    # The event file holds the full-precision values the log line rounds.
    for row in rows_a:
        loss = tb_a["loss_metrics/global_avg_loss"][row["step"]]
        grad = tb_a["grad_norm"][row["step"]]
        if f"{loss:8.5f}".strip() != row["loss"] or f"{grad:7.4f}".strip() != row["grad_norm"]:
            toylib.fail(f"step {row['step']}: TensorBoard has loss {loss!r} grad_norm {grad!r}, log shows {row}")
    if sorted(tb_a["loss_metrics/global_avg_loss"]) != list(range(1, STEPS + 1)):
        toylib.fail(f"TensorBoard steps: {sorted(tb_a['loss_metrics/global_avg_loss'])}")

    log_w, _, _ = run(tmp, "warn", ["--debug.deterministic_warn_only"])
    if not any(" - root - WARNING - debug.deterministic_warn_only is set" in l for l in log_w.splitlines()):
        toylib.fail("--debug.deterministic_warn_only is not visible in the log")
    shutil.rmtree(tmp)
    print(f"ok: {STEPS} steps bitwise identical across two runs; TensorBoard round-trip exact; warn_only logged")


if __name__ == "__main__":
    main()
