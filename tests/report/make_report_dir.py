#!/usr/bin/python3
"""    make_report_dir.py OUT [--steps N] [--replace] [--no-compare-entry]

Builds three report directories for render_report's tests from REAL toy-trainer runs.
OUT (absent or empty) receives the demo repository (examples/make-demo-repo), detached
worktrees of main and of three demo branches, and OUT/<case>/numerical_report/ for each
case, laid out as docs/CONTRACTS.md says: the initial checkpoint, the training logs (real
runs of the toy trainer, both from that checkpoint), toy_small/report.json +
diff_summary.csv, infra_files.tar.gz, hunt/hunt.json for the failing case, and the ledger
manifest.json with the commands that were really run.

Stand-in: compare_logs and the ledger writers are other rooms' tools; until they are
usable from here this script computes report.json with the contract's fields itself
(tolerance check, printed-digits check, NaN/Inf counts) and writes the ledger entries.
The verdicts follow from the real numbers:
  refactor        refactor/move-helpers        bitwise identical           PASS
  gelu_tanh       numerics/gelu-tanh           printed loss differs, bitwise FAIL
  ulp_loss_order  ulp/loss-reduction-order     grad_norm printed with 4 decimals, coarser
                                               than the 1e-5 tolerance     INCONCLUSIVE
"""
from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MAKE_DEMO = os.path.join(ROOT, "examples", "make-demo-repo")

CASES = [  # (case, branch, tolerance per metric)
    ("refactor", "refactor/move-helpers", {"loss": 1e-4, "grad_norm": 1e-4}),
    ("gelu_tanh", "numerics/gelu-tanh", {"loss": 0.0, "grad_norm": 0.0}),  # bitwise, the skill's bar
    ("ulp_loss_order", "ulp/loss-reduction-order", {"loss": 1e-5, "grad_norm": 1e-5}),
]
CONFIG = "toy_small"
ANSI = re.compile(r"\x1b\[[0-9;]*m")
STEP = re.compile(r"step:\s*(\d+)\s+loss:\s*(\S+)\s+grad_norm:\s*(\S+)")


def now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def run(argv, cwd, env_set=None, log=None, check=True):
    env = dict(os.environ)
    env.update(env_set or {})
    start = time.time()
    proc = subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=600)
    if log:
        with open(log, "wb") as f:
            f.write(proc.stdout)
    if check and proc.returncode != 0:
        sys.exit(f"{argv} in {cwd} exited {proc.returncode}:\n{proc.stdout.decode(errors='replace')[-3000:]}")
    return proc, time.time() - start


def git(*args, cwd):
    return run(["git", *args], cwd)[0].stdout.decode().strip()


def parse_log(path):
    steps = {}
    decimals = {"loss": 0, "grad_norm": 0}
    with open(path, errors="replace") as f:
        for line in f:
            m = STEP.search(ANSI.sub("", line))
            if not m:
                continue
            step = int(m.group(1))
            values = {}
            for name, text in (("loss", m.group(2)), ("grad_norm", m.group(3))):
                values[name] = float(text)
                if "." in text:
                    decimals[name] = max(decimals[name], len(text.split(".")[1]))
            steps[step] = values
    return steps, decimals


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def compare(case, tolerances, base_log, cand_log, out_dir):
    base, base_dec = parse_log(base_log)
    cand, cand_dec = parse_log(cand_log)
    steps = sorted(set(base) & set(cand))
    metrics, exceeded, coarse = {}, False, []
    for name in ("loss", "grad_norm"):
        tol = tolerances[name]
        rows = []
        for s in steps:
            b, c = base[s][name], cand[s][name]
            d = abs(c - b)
            rows.append((s, b, c, d, d / abs(b) if b else (0.0 if d == 0 else math.inf)))
        off = [r for r in rows if r[3] > tol]
        max_abs = max(rows, key=lambda r: r[3])
        max_rel = max(rows, key=lambda r: r[4])
        nan_inf = lambda vals: {"nan": sum(math.isnan(v) for v in vals), "inf": sum(math.isinf(v) for v in vals)}
        resolution = 0.5 * 10 ** -min(base_dec[name], cand_dec[name])
        if not off and resolution > tol:
            coarse.append(f"{name} is printed with {min(base_dec[name], cand_dec[name])} decimals, "
                          f"too coarse for the tolerance {tol:g}")
        exceeded = exceeded or bool(off)
        metrics[name] = {
            "tolerance": {"abs": tol, "rel": None},
            "printed_decimals": {"baseline": base_dec[name], "candidate": cand_dec[name]},
            "steps_compared": len(rows),
            "max_abs": max_abs[3], "max_abs_step": max_abs[0] if max_abs[3] > 0 else None,
            "mean_abs": sum(r[3] for r in rows) / len(rows),
            "max_rel": max_rel[4], "max_rel_step": max_rel[0] if max_rel[4] > 0 else None,
            "mean_rel": sum(r[4] for r in rows) / len(rows),
            "first_exceeding_step": off[0][0] if off else None,
            "exceeding_count": len(off),
            "nan_inf": {"baseline": nan_inf([r[1] for r in rows]), "candidate": nan_inf([r[2] for r in rows])},
            "bitwise_equal": all(r[3] == 0 for r in rows),
            "offending": [{"step": r[0], "baseline": r[1], "candidate": r[2], "abs": r[3], "rel": r[4]} for r in off],
        }
    if exceeded:
        first = min(m["first_exceeding_step"] for m in metrics.values() if m["first_exceeding_step"] is not None)
        verdict, reason = "FAIL", f"differences beyond tolerance from step {first}: " + ", ".join(
            f"{n} max abs {m['max_abs']:.3g} at step {m['max_abs_step']}" for n, m in metrics.items() if m["exceeding_count"])
    elif coarse:
        verdict, reason = "INCONCLUSIVE", "; ".join(coarse)
    else:
        verdict, reason = "PASS", f"all {len(steps)} steps of loss and grad_norm within tolerance" + (
            " (bitwise equal)" if all(m["bitwise_equal"] for m in metrics.values()) else "")

    def side(path, decs):
        return {"path": path, "sha256": sha256(path), "format": "torchtitan", "steps": [steps[0], steps[-1]],
                "success_marker": "training success" in open(path, errors="replace").read(),
                "errors": [], "warnings": ["Peak flops undefined for: cpu, fallback to A100"]}

    report = {"schema": "parity.compare/1", "case": case, "verdict": verdict, "verdict_reason": reason,
              "preset": "premerge",
              "mode": "bitwise" if all(t == 0 for t in tolerances.values()) else "tolerance", "baseline": side(base_log, base_dec),
              "candidate": side(cand_log, cand_dec), "metrics": metrics, "csv": "diff_summary.csv"}
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "report.json"), "w") as f:
        json.dump(report, f, indent=2)
    with open(os.path.join(out_dir, "diff_summary.csv"), "w") as f:
        cols = ["step"] + [f"{m}_{k}" for m in ("loss", "grad_norm") for k in ("baseline", "candidate", "abs_diff", "rel_diff")]
        f.write(",".join(cols) + "\n")
        for s in steps:
            cells = [str(s)]
            for m in ("loss", "grad_norm"):
                b, c = base[s][m], cand[s][m]
                d = abs(c - b)
                cells += ["%.17g" % b, "%.17g" % c, "%.17g" % d, "%.17g" % (d / abs(b) if b else 0.0)]
            f.write(",".join(cells) + "\n")
    return verdict


class Ledger:
    def __init__(self, report_dir):
        self.report_dir = report_dir
        self.doc = {"schema": "parity.manifest/1", "created": now(), "report_dir": report_dir, "entries": []}

    def add(self, **entry):
        entry = {"id": "e%04d" % (len(self.doc["entries"]) + 1), "time": now(), **entry}
        self.doc["entries"].append(entry)

    def save(self):
        with open(os.path.join(self.report_dir, "manifest.json"), "w") as f:
            json.dump(self.doc, f, indent=2)


def worktree(out, repo, infra, name, ref):
    path = os.path.join(out, "wt", name)
    if not os.path.isdir(path):
        git("worktree", "add", "--detach", path, ref, cwd=repo)
        for rel in infra:  # class-B files, as audit_workspace copies them
            with open(os.path.join(repo, rel), "rb") as src, open(os.path.join(path, rel), "wb") as dst:
                dst.write(src.read())
    return path, git("rev-parse", "HEAD", cwd=path)


def frame(path, needle, function):  # a real line of a real file
    for number, line in enumerate(open(path), 1):
        if needle in line:
            return {"file": path, "line": number, "function": function, "code": line.strip()}
    sys.exit(f"{path}: no line containing {needle!r}")


def write_hunt(report_dir, repo, truth):
    gelu = truth["branches"]["numerics/gelu-tanh"]["planted_change"]
    torch_module = run(["/usr/bin/python3", "-c", "import torch.nn.modules.module as m; print(m.__file__)"],
                       ROOT)[0].stdout.decode().strip()
    os.makedirs(os.path.join(report_dir, "hunt"))
    hunk = git("diff", "-U2", "main", "numerics/gelu-tanh", "--", gelu["file"], cwd=repo)
    with open(os.path.join(report_dir, "hunt", "hunt.json"), "w") as f:
        json.dump({"case": "gelu_tanh", "first_divergent_api": "Functional.gelu.0.forward",
                   "inputs_equal": True, "found_by": "examples/make-demo-repo ground_truth.json",
                   "stack": [frame(torch_module, "return forward_call(", "_call_impl"),
                             {"file": gelu["file"], "line": gelu["line"], "function": "forward", "code": gelu["after"],
                              "user": True},
                             frame(os.path.join(repo, "toy_trainer", "model.py"), "self.feed_forward(self.ffn_norm(h))",
                                   "forward")],
                   "source_line": f"{gelu['file']}:{gelu['line']}: {gelu['after']}",
                   "git_hunk": hunk}, f, indent=2)


def build_report_dir(out, repo, truth, case, branch, tol, steps, compare_entry):
    """One report directory: one baseline/candidate pair, as the premerge workflow makes it."""
    report_dir = os.path.join(out, case, "numerical_report")
    os.makedirs(report_dir)
    ledger = Ledger(report_dir)
    python_env = {"PYTHON": "/usr/bin/python3", "PYTHONHASHSEED": "0"}
    infra = truth["infra_change"]["files"]
    ledger.add(tool="audit_workspace", action="audit", side=None, config=None,
               git={"repo": repo, "ref": "main", "commit": truth["baseline"]["commit"], "worktree": None},
               inputs={"repo": repo, "baseline": "main", "candidate": branch}, outputs={"infra": "infra_files.tar.gz"},
               outcome={"status": "ok", "message": f"{len(infra)} infra file(s) (class B)"})
    with tarfile.open(os.path.join(report_dir, "infra_files.tar.gz"), "w:gz") as tar:
        for rel in infra:
            tar.add(os.path.join(repo, rel), arcname=rel)
    probe = ["/usr/bin/python3", "-c", "import torch; print(torch.__version__)"]
    torch_version = run(probe, ROOT)[0].stdout.decode().strip()
    ledger.add(tool="probe_env", action="probe", side=None, config=None,
               command={"argv": probe, "cwd": ROOT, "env": {}, "host": "local"}, outcome={"status": "ok"},
               environment={"fingerprint": hashlib.sha256(torch_version.encode()).hexdigest(),
                            "summary": {"accelerator": "cpu", "torch": torch_version, "torch_npu": None,
                                        "cann": None, "npu_count": 0, "python": "/usr/bin/python3"}})

    base_wt, base_commit = worktree(out, repo, infra, "baseline", "main")
    cand_wt, cand_commit = worktree(out, repo, infra, case, branch)
    ckpt = os.path.join(report_dir, f"initial_ckpt_{CONFIG}")
    common = ["bash", "scripts/run_train.sh", "--module", "toy", "--config", CONFIG, "--debug.seed=42",
              "--debug.deterministic", "--training.dataset_path=data/corpus.txt"]
    gen = common + ["--training.steps", "1", "--checkpoint.enable", "--checkpoint.folder", ckpt,
                    "--checkpoint.last_save_in_hf", "--checkpoint.last_save_model_only"]
    git_base = {"repo": repo, "ref": "main", "commit": base_commit, "worktree": base_wt}
    git_cand = {"repo": repo, "ref": branch, "commit": cand_commit, "worktree": cand_wt}
    log = f"gen_ckpt_{CONFIG}_train.log"
    _, secs = run(gen, cand_wt, python_env, os.path.join(report_dir, log))
    ledger.add(tool="run_training", action="gen_ckpt", side="candidate", config=CONFIG,
               command={"argv": gen, "cwd": cand_wt, "env": python_env, "host": "local"}, git=git_cand,
               inputs={"steps": 1}, outputs={"log": log, "checkpoint": f"initial_ckpt_{CONFIG}"},
               outcome={"status": "ok", "exit_code": 0, "signal": None, "duration_s": secs, "message": "checkpoint saved"})
    train = common + [f"--training.steps={steps}", "--checkpoint.enable", "--checkpoint.load_only",
                      "--checkpoint.initial_load_path", ckpt, "--checkpoint.initial_load_in_hf"]
    logs = {}
    for side, wt, git_info in (("baseline", base_wt, git_base), ("candidate", cand_wt, git_cand)):
        logs[side] = f"{side}_{CONFIG}_train.log"
        _, secs = run(train, wt, python_env, os.path.join(report_dir, logs[side]))
        ledger.add(tool="run_training", action="train", side=side, config=CONFIG,
                   command={"argv": train, "cwd": wt, "env": python_env, "host": "local"}, git=git_info,
                   inputs={"steps": steps, "config": CONFIG}, outputs={"log": logs[side]},
                   outcome={"status": "ok", "exit_code": 0, "signal": None, "duration_s": secs,
                            "message": f"{steps} steps, training success"})
    base_log, cand_log = (os.path.join(report_dir, logs[s]) for s in ("baseline", "candidate"))
    verdict = compare(CONFIG, tol, base_log, cand_log, os.path.join(report_dir, CONFIG))
    if compare_entry:
        ledger.add(tool="compare_logs", action="compare", side="both", config=CONFIG,
                   inputs={"baseline": base_log, "candidate": cand_log, "case": CONFIG, "report_dir": report_dir,
                           "tolerance": tol["loss"]},
                   outputs={"report": f"{CONFIG}/report.json", "csv": f"{CONFIG}/diff_summary.csv"},
                   outcome={"status": "ok", "message": verdict})
    if case == "gelu_tanh":
        write_hunt(report_dir, repo, truth)
    ledger.save()
    return verdict


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--replace", action="store_true", help="delete OUT first")
    ap.add_argument("--no-compare-entry", action="store_true", help="leave compare entries out of the ledger")
    args = ap.parse_args()
    out = os.path.abspath(args.out)
    if args.replace and os.path.exists(out):
        shutil.rmtree(out)
    run([sys.executable, MAKE_DEMO, os.path.join(out, "demo")], ROOT)
    repo = os.path.join(out, "demo", "toy-trainer")
    truth = json.load(open(os.path.join(out, "demo", "ground_truth.json")))
    verdicts = {case: build_report_dir(out, repo, truth, case, branch, tol, args.steps, not args.no_compare_entry)
                for case, branch, tol in CASES}
    print(json.dumps({"repo": repo, "report_dirs": {c: os.path.join(out, c, "numerical_report") for c in verdicts},
                      "verdicts": verdicts}))


if __name__ == "__main__":
    main()
