#!/usr/bin/env python3
"""Real msprobe dumps of hundreds of MB for bench/msprobe, made at bench time (never
committed): the REAL msprobe PrecisionDebugger (statistics task, L1) around one step of
tests/fixtures/msprobe-real/train.py's TinyModel that runs MICRO micro-batches, so a single
step's dump.json grows with MICRO (about 48 KB each). The candidate differs in one GELU
(approximate='tanh', train.py line 64), as the committed fixtures do.

Usage: PYTHONPATH=<msprobe>/python:<einops> /usr/bin/python3 make_real_dumps.py OUT MICRO
writes OUT/{baseline,candidate}/step0/rank0/{dump,stack,construct}.json.
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.normpath(os.path.join(HERE, "..", "..", "tests", "fixtures", "msprobe-real"))


def side(variant, out, micro):
    sys.path.insert(0, FIXTURES)
    import torch
    import torch.nn.functional as F
    import train  # the fixture's TinyModel (it imports msprobe itself)

    train.seed_all(seed=1234, mode=True)
    torch.set_num_threads(1)
    with open(os.path.join(FIXTURES, "configs", "statistics_L1.json")) as f:
        cfg = json.load(f)
    cfg["dump_path"] = os.path.join(out, variant)
    os.makedirs(cfg["dump_path"], exist_ok=True)
    config = os.path.join(out, variant + "_config.json")
    with open(config, "w") as f:
        json.dump(cfg, f)
    model = train.TinyModel(approximate="tanh" if variant == "candidate" else "none")
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    g = torch.Generator().manual_seed(0)
    debugger = train.PrecisionDebugger(config_path=config)
    debugger.start(model, rank_id=0)
    for _ in range(micro):
        x, y = torch.randn(2, 5, 8, generator=g), torch.randint(0, 4, (2, 5), generator=g)
        loss = F.cross_entropy(model(x).reshape(-1, 4), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
    debugger.stop()
    debugger.step()


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "--side":
        return side(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    out, micro = os.path.abspath(sys.argv[1]), int(sys.argv[2])
    # The two sides at once (msprobe dumps at a few MB per minute on one core).
    runs = [subprocess.Popen([sys.executable, __file__, "--side", variant, out, str(micro)], stdout=subprocess.DEVNULL)
            for variant in ("baseline", "candidate")]
    for run in runs:
        if run.wait() != 0:
            sys.exit(f"making the dumps failed (exit {run.returncode})")


if __name__ == "__main__":
    main()
