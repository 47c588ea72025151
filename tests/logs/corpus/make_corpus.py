#!/usr/bin/env python3
"""Writes the compare_logs corpus: logs in the trainers' own line formats, each line made by
the trainer's own format string (copied verbatim below, with its source in README.md), from
values chosen here by hand. The tests state the expected results from these values; they are
never read back from parity's output. Run from this folder: python3 make_corpus.py
"""
import gzip
import subprocess
import json
import lzma
from datetime import datetime, timedelta


class Color:  # torchtitan/tools/utils.py (colours off: NoColor has the same fields set to "")
    red = green = orange = turquoise = blue = cyan = magenta = yellow = reset = ""


def titan_line(step, global_avg_loss, grad_norm, mfu=0.17, tflops=0.52, tps=7282.0, when=None):
    # torchtitan/components/metrics.py MetricsProcessor.log (v0.2.2 and HEAD), verbatim
    # apart from the variables: HEAD's mfu_str ("N/A" when FP8/MX quantization is active).
    color = Color
    mfu_str = f"{mfu:.2f}%" if mfu is not None else "N/A"
    max_reserved_gib, max_reserved_pct = 9.46, 64.99
    message = (
        f"{color.red}step: {step:2}  "
        f"{color.green}loss: {global_avg_loss:8.5f}  "
        f"{color.orange}grad_norm: {grad_norm:7.4f}  "
        f"{color.turquoise}memory: {max_reserved_gib:5.2f}GiB"
        f"({max_reserved_pct:.2f}%)  "
        f"{color.blue}tps: {round(tps):,}  "
        f"{color.cyan}tflops: {tflops:,.2f}  "
        f"{color.magenta}mfu: {mfu_str}{color.reset}"
    )
    when = when or datetime(2026, 5, 18, 16, 4, 20) + timedelta(seconds=step)
    # torchtitan/tools/logging.py: "[titan] %(asctime)s - %(name)s - %(levelname)s - %(message)s"
    return f"[titan] {when.strftime('%Y-%m-%d %H:%M:%S')},338 - root - INFO - {message}"


def tee(rank, line):
    # torch/distributed/elastic/multiprocessing/tail_log.py: header=f"[{self._name}{local_rank}]:"
    # with run_train.sh's --role rank.
    return f"[rank{rank}]:{line}"


def real_loss(step):
    return 10.84523 - 0.2137 * step + 0.00311 * step * step


def grad(step):
    return 5.2134 - 0.0917 * step


def write(name, lines):
    with open(name, "w") as f:
        for line in lines:
            f.write(line + "\n")


def pipeline_parallel(name, last_stage_shift=0.0, placeholder=-1.0):
    # PP degree 2, DP 2: ranks 0-1 hold the first stage and print the placeholder loss
    # (torchtitan/train.py: loss = ... if self.pp_has_last_stage else torch.tensor([-1.0])),
    # ranks 2-3 the last stage. The gradient norm is reduced over the whole model: equal on
    # every rank. The ranks' lines interleave as torchrun's tee writes them.
    lines = []
    for step in range(1, 21):
        for rank in (2, 0, 3, 1):
            if rank >= 2:
                loss = real_loss(step) + (last_stage_shift if step >= 10 else 0.0)
            else:
                loss = placeholder
            lines.append(tee(rank, titan_line(step, loss, grad(step))))
    for rank in range(4):
        lines.append(tee(rank, "[titan] 2026-05-18 16:05:00,001 - root - INFO - Training completed"))
    write(name, lines)


def per_rank_files(folder, last_stage_shift=0.0, placeholder=-1.0, layout="srun"):
    # The run of pipeline_parallel (PP 2 x DP 2, the same values), each rank's lines in a
    # file of its own, unprefixed (only torchrun's tee labels lines):
    #  - srun: `srun --output=train_%t.log` (srun(1): "%t  Task identifier (rank) relative to
    #    current job"): train_0.log ... train_3.log;
    #  - torchrun: `torchrun --log-dir L --redirects 3`: L/<run_id>_<random>/attempt_<restart>/
    #    <local_rank>/stdout.log and stderr.log (torch/distributed/elastic/agent/server/
    #    local_elastic_agent.py: attempt_log_dir = os.path.join(self._log_dir,
    #    f"attempt_{restart_count}"); torch/distributed/elastic/multiprocessing/__init__.py:
    #    clogdir = os.path.join(log_dir, str(local_rank)); stdouts[local_rank] =
    #    os.path.join(clogdir, "stdout.log")); torchtitan HEAD logs to stdout
    #    (torchtitan/tools/logging.py: ch = logging.StreamHandler(sys.stdout)), stderr.log
    #    holds a warning of the launcher's.
    import os
    for rank in range(4):
        lines = []
        for step in range(1, 21):
            loss = real_loss(step) + (last_stage_shift if step >= 10 else 0.0) if rank >= 2 else placeholder
            lines.append(titan_line(step, loss, grad(step)))
        lines.append("[titan] 2026-05-18 16:05:00,001 - root - INFO - Training completed")
        if layout == "srun":
            os.makedirs(folder, exist_ok=True)
            write(os.path.join(folder, f"train_{rank}.log"), lines)
        else:
            rank_dir = os.path.join(folder, "none_k2x7q9ab", "attempt_0", str(rank))
            os.makedirs(rank_dir, exist_ok=True)
            write(os.path.join(rank_dir, "stdout.log"), lines)
            write(os.path.join(rank_dir, "stderr.log"),
                  ["/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py:2517: UserWarning: "
                   "torch.distributed.reduce_op is deprecated, please use torch.distributed.ReduceOp instead"])


def main():
    per_rank_files("per_rank_srun/baseline")
    per_rank_files("per_rank_srun/candidate_moved", last_stage_shift=0.01)
    per_rank_files("per_rank_srun/candidate_placeholder", placeholder=-2.0)
    per_rank_files("per_rank_torchrun/baseline", layout="torchrun")
    per_rank_files("per_rank_torchrun/candidate_moved", last_stage_shift=0.01, layout="torchrun")
    pipeline_parallel("torchtitan_pp_baseline.log")
    pipeline_parallel("torchtitan_pp_candidate_moved.log", last_stage_shift=0.01)
    pipeline_parallel("torchtitan_pp_candidate_placeholder.log", placeholder=-2.0)

    # log_freq 10: torchtitan's MetricsProcessor.should_log is step == 1 or step % log_freq == 0.
    lines = [tee(0, titan_line(s, real_loss(s) / 4, grad(s) / 4)) for s in [1] + list(range(10, 101, 10))]
    lines.append(tee(0, "[titan] 2026-05-18 16:09:00,001 - root - INFO - Training completed"))
    write("torchtitan_log_freq_10.log", lines)

    # HEAD with FP8: mfu_str = "N/A".
    write("torchtitan_mfu_na.log", [tee(0, titan_line(s, real_loss(s), grad(s), mfu=None)) for s in range(1, 6)])

    # 50 steps whose last loss is 3.10399: the cut-line tests cut the last line everywhere.
    lines = [tee(0, titan_line(s, real_loss(s) / 3, grad(s) / 4)) for s in range(1, 50)]
    lines.append(tee(0, titan_line(50, 3.10399, 0.5678)))
    write("torchtitan_50_steps.log", lines)

    megatron()
    hf_trainer()
    jsonl()
    compressed()


def compressed():
    # The Megatron log as logrotate / gzip / xz leave it: gzip (mtime 0, so the bytes are
    # reproducible), gzip in two members (what `cat a.gz b.gz` gives), xz.
    text = open("megatron_skipped.log", "rb").read()
    cut = text.index(b"\n", len(text) // 2) + 1
    with open("megatron_skipped.log.gz", "wb") as f:
        f.write(gzip.compress(text, mtime=0))
    with open("megatron_skipped_two_members.gz", "wb") as f:
        f.write(gzip.compress(text[:cut], mtime=0) + gzip.compress(text[cut:], mtime=0))
    with open("megatron_skipped.log.xz", "wb") as f:
        f.write(lzma.compress(text, format=lzma.FORMAT_XZ))
    # zstd: the real zstd CLI (Debian's zstd package; Python 3.11 has no zstd module), one
    # frame, and two frames concatenated (what `cat a.zst b.zst` gives).
    zstd = lambda data: subprocess.run(["zstd", "-q", "-19", "-c"], input=data, capture_output=True, check=True).stdout
    with open("megatron_skipped.log.zst", "wb") as f:
        f.write(zstd(text))
    with open("megatron_skipped_two_frames.zst", "wb") as f:
        f.write(zstd(text[:cut]) + zstd(text[cut:]))


def megatron():
    # megatron/training/training.py training_log (core_v0.12.0 lines 1533-1581), verbatim
    # but for the variables; log interval 1, fp16: iterations 1, 2 and 7 overflowed and were
    # skipped (no loss was averaged: avg > 0.0 is false, the key is not printed; grad_norm is
    # None: not printed; number of skipped iterations: 1).
    train_iters = 12
    skipped = {1, 2, 7}
    lines = []
    consumed = 0
    for iteration in range(1, train_iters + 1):
        consumed += 8
        log_string = f" [2026-09-11 12:{iteration:02d}:52]"
        log_string += ' iteration {:8d}/{:8d} |'.format(iteration, train_iters)
        log_string += ' consumed samples: {:12d} |'.format(consumed)
        log_string += ' elapsed time per iteration (ms): {:.1f} |'.format(296.8 + iteration)
        learning_rate = 1.5e-4 * iteration / train_iters
        log_string += f' learning rate: {learning_rate:.6E} |'
        log_string += f' global batch size: {8:5d} |'
        if iteration not in skipped:
            avg = 10.58957 - 0.1 * iteration
            if avg > 0.0:
                log_string += ' {}: {:.6E} |'.format('lm loss', avg)
        loss_scale = 65536.0 / (2 ** sum(1 for s in skipped if s <= iteration))
        log_string += f' loss scale: {loss_scale:.1f} |'
        if iteration not in skipped:
            grad_norm = 5.703 - 0.01 * iteration
            log_string += f' grad norm: {grad_norm:.3f} |'
        log_string += ' number of skipped iterations: {:3d} |'.format(1 if iteration in skipped else 0)
        log_string += ' number of nan iterations: {:3d} |'.format(0)
        lines.append(log_string)
    write("megatron_skipped.log", lines)


def hf_trainer():
    # transformers Trainer with logging_steps=5, max_steps=20, tqdm writing to a file:
    # ProgressCallback.on_step_end updates the bar to state.global_step, then on_log does
    # self.training_bar.write(str(shallow_logs)) (trainer_callback.py), which clears the bar
    # ("\r" + spaces + "\r"), writes the dict and a newline, and redraws the bar. The bar is
    # tqdm's default "{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}<{remaining}, {rate_fmt}]".
    total = 20
    out = []
    line = ""
    for step in range(1, total + 1):
        pct = int(100 * step / total)
        bar = f"\r{pct:3d}%|{'#' * (pct // 10):10s}| {step}/{total} [00:{step:02d}<00:{total - step:02d},  1.00it/s]"
        line += bar
        if step % 5 == 0:
            logs = {"loss": round(2.5 - 0.05 * step, 4), "grad_norm": 1.8181818181818181 / step,
                    "learning_rate": 5e-05 * (1 - step / total), "epoch": round(step / 40, 2)}
            line += "\r" + " " * 60 + "\r" + str(logs)
            out.append(line)
            line = bar
    out.append(line + "\r" + str({"train_runtime": 20.5, "train_samples_per_second": 7.8, "train_loss": 2.0}))
    write("hf_trainer_tqdm.log", out)


def jsonl():
    # A trainer's own metrics file: json.dumps of a flat dict per step (values are Python
    # floats from tensor.item(): repr, the double in full).
    lines = []
    for step in range(1, 11):
        loss = float.fromhex("0x1.5b8p+1") - step / 1024 + 1 / 3 * 1e-7 * step
        row = {"step": step, "loss": loss, "grad_norm": 0.8319 + step / 3, "lr": 3e-4,
               "mfu": None if step == 4 else 0.17 + step / 7}
        lines.append(json.dumps(row))
    write("metrics.jsonl", lines)


if __name__ == "__main__":
    main()
