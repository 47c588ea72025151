#!/usr/bin/python3
"""The peer the bench measures parse_log against: the same extraction written the way
PrecisionComparer, torchtitan's loss_compare.py (v0.2.2) and torchtitan-npu's
train_log_plot.py do it, with Python's re module, line by line:
strip ANSI colours, keep rank-0 (or unprefixed) lines, pull step / loss / grad_norm out of
torchtitan lines or iteration / lm loss / grad norm out of Megatron lines, and flag error
lines (Traceback, ERROR, out of memory, ERR00100, E?9999, HCCL timeouts, Killed).

usage: py_extract.py FILE
"""
import re
import sys
import time

ANSI_ESCAPE_RE = re.compile(r"\x1B\[[0-?]*[ -/]*[@-~]")
RANK_RE = re.compile(r"^\[(?:rank|default)(\d+)\]:")
NUM = r"([-+]?\d[\d,]*(?:\.\d+)?(?:[eE][-+]?\d+)?|nan|inf)"
STEP_RE = re.compile(rf"\bstep:\s*{NUM}")
LOSS_RE = re.compile(rf"\bloss:\s*{NUM}")
GRAD_NORM_RE = re.compile(rf"\bgrad_norm:\s*{NUM}")
ITER_RE = re.compile(r"\biteration\s+(\d+)/")
LM_LOSS_RE = re.compile(rf"\blm loss:\s*{NUM}")
MEG_GRAD_RE = re.compile(rf"\bgrad norm:\s*{NUM}")
# Literal keywords are tested with `in` (what PrecisionComparer does with its log_keywords);
# only the two coded patterns need a regex.
ERROR_KEYWORDS = ("Traceback (most recent call last)", "ERROR", "out of memory",
                  "Watchdog caught collective operation timeout", "Killed", "SIGKILL")
ERROR_CODE_RE = re.compile(r"ERR\d{5}|E[A-Z0-9]9999")


def main(path):
    start = time.perf_counter()
    steps, losses, grads = [], [], []
    errors = 0
    with open(path, "r", encoding="utf-8", errors="replace") as f:
        for line in f:
            if any(k in line for k in ERROR_KEYWORDS) or (
                    ("ERR" in line or "9999" in line) and ERROR_CODE_RE.search(line)):
                errors += 1
            m = RANK_RE.match(line)
            if m and m.group(1) != "0":
                continue
            line = ANSI_ESCAPE_RE.sub("", line)
            s = STEP_RE.search(line)
            if s:
                loss = LOSS_RE.search(line)
                if loss:
                    steps.append(int(s.group(1).replace(",", "")))
                    losses.append(float(loss.group(1)))
                    g = GRAD_NORM_RE.search(line)
                    grads.append(float(g.group(1)) if g else None)
                continue
            it = ITER_RE.search(line)
            if it:
                loss = LM_LOSS_RE.search(line)
                if loss:
                    steps.append(int(it.group(1)))
                    losses.append(float(loss.group(1)))
                    g = MEG_GRAD_RE.search(line)
                    grads.append(float(g.group(1)) if g else None)
    seconds = time.perf_counter() - start
    import os
    size = os.path.getsize(path)
    print('{"bytes": %d, "seconds": %.4f, "mb_per_s": %.1f, "loss_points": %d, "errors": %d}'
          % (size, seconds, size / 1e6 / seconds, len(losses), errors))


if __name__ == "__main__":
    main(sys.argv[1])
