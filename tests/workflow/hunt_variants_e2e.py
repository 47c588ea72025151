#!/usr/bin/python3
"""`parity hunt` end to end on the toy trainer's second model (`--module llama`,
toy_trainer/llama.py: RMSNorm with `+ self.eps`, a SwiGLU MLP, a three-term residual sum,
a per-channel table built in __init__), with real trainings (Debian's PyTorch), real git
worktrees, the toy's msprobe-format dumps and real probe injection.

The expected answers, written from the code before parity ran:

  numerics/reassociated-sum  `(x + a) + b` -> `x + (a + b)` in ParallelBlock.forward: the API
        sequence is the same, so the first add pairs with the first add
        (Tensor.__add__.2.forward, after RMSNorm's two); its tensor inputs differ while every
        earlier output is equal: cause "operands", at the changed line, which is the hunk. The
        probes at that line see x, a and b equal and its result different: exit 1,
        "inputs equal, output differs".
  numerics/table-dtype  the channel table built in float16 in TinyLlama.__init__: the first
        dumped op to see it is `1.0 + self.channel_scale` (Tensor.__radd__.0.forward) in
        forward, whose line did not change: cause "operands" (a float16 input after equal
        earlier outputs), the hunk is found by tracing self.channel_scale to register_buffer
        and `table = ...` (the changed line). The probes at forward's line see
        self.channel_scale already differ, the stack's functions are compared: exit 1, the
        first divergent probe is self.channel_scale, and the sentence says the line did not
        change and names the traced hunk.
  numerics/silu-unfused  F.silu(g) written as g * torch.sigmoid(g): the candidate calls
        Torch.sigmoid where the baseline calls Functional.silu (a changed API sequence):
        cause "unmatched" at the new line, in the hunk. The rewritten statement's probes have
        no counterparts (other names: `gate`), so SwiGLU.forward is compared at its entry and
        return. At the dumped step (0) silu(g) and g * sigmoid(g) give the same float32 values
        (the logs first differ at step 2, in the grad norm), so no probe differs but the dump
        folder in main's argv, which is not a divergence: exit 2, "inconclusive", with the
        substitution (Functional.silu.0 -> Torch.sigmoid.0 + Tensor.__mul__.5) and its hunk
        named, and the advice to dump the step where the logs first differ.
  refactor/move-helpers in md5 mode, run by a script that passes no torchtitan flags (so no
        TensorBoard: the logs' printed digits cannot decide), both sides identical code:
        the dumps are compared and nothing diverges: exit 0, "no divergence".

    hunt_variants_e2e.py PARITY_BINARY REPO_ROOT
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hunt_e2e import STEPS, add_branch, fail, hunt, tree_state, write_config  # noqa: E402

LLAMA = "toy_trainer/llama.py"
LLAMA_SCRIPT = ("bash scripts/run_train.sh --module llama --config llama_small --training.steps {steps} "
                "--debug.seed=42 --debug.deterministic --training.dataset_path=data/corpus.txt --dump.dir {dump} "
                "--dump.level L1 --dump.mode statistics --dump.step 0")

SUM_BEFORE = "        return (x + a) + b\n"
SUM_AFTER = "        return x + (a + b)\n"
TABLE_BEFORE = "        table = 1.0 / (args.table_base ** (torch.arange(0, args.dim, dtype=torch.float32) / args.dim))\n"
TABLE_AFTER = TABLE_BEFORE.replace("torch.float32", "torch.float16")
SILU_BEFORE = "        return self.w2(F.silu(self.w1(x)) * self.w3(x))\n"
SILU_AFTER = "        gate = self.w1(x)\n        return self.w2(gate * torch.sigmoid(gate) * self.w3(x))\n"


def line_of(text, code):
    return text.split("\n").index(code.rstrip("\n")) + 1


def hunt_variant(parity, dest, name, branch, script=LLAMA_SCRIPT):
    report = os.path.join(dest, "report-" + name)
    code, out, err = hunt(parity, write_config(dest, name, branch, script=script), report)
    if "error" in out:
        fail(f"{name}: exit {code}, error {json.dumps(out['error'], indent=1)}\n{err[-3000:]}")
    with open(os.path.join(report, "hunt", "hunt.json")) as f:
        doc = json.load(f)
    return code, out, err, doc


def expect(name, cond, message, out, err):
    if not cond:
        fail(f"{name}: {message}\nverdict {out.get('verdict')!r}: {out.get('explanation')}\n"
             f"{json.dumps(out.get('located'), indent=1)}\n{err[-3000:]}")


def check_hunk(name, where, file, start, found_by, out, err):
    hunk = where.get("hunk") or {}
    expect(name, (hunk.get("file"), hunk.get("new_start")) == (file, start),
           f"the hunk named is {hunk.get('file')}:{hunk.get('new_start')}, expected {file}:{start}", out, err)
    if found_by:
        expect(name, where.get("hunk_found_by") == found_by, f"hunk found by {where.get('hunk_found_by')}", out, err)


def check_reassociated(parity, dest, text):
    line = line_of(text, SUM_AFTER)
    code, out, err, doc = hunt_variant(parity, dest, "sum", "numerics/reassociated-sum")
    where = out.get("located", {})
    expect("sum", code == 1 and out["verdict"] == "inputs equal, output differs", f"exit {code}", out, err)
    expect("sum", (where["api"], where["file"], where["line"]) == ("Tensor.__add__.2.forward", LLAMA, line),
           "not the first block's first add at the changed line", out, err)
    expect("sum", where.get("cause", {}).get("kind") == "operands", "msprobe's cause is not 'operands'", out, err)
    expect("sum", where.get("in_changed_hunk") is True, "the line is not in the changed hunk", out, err)
    check_hunk("sum", where, LLAMA, line, None, out, err)
    evidence = doc["first_divergence"]["cause"]["evidence"]
    expect("sum", evidence["upstream_identical"] is True and len(evidence["differing_inputs"]) == 2,
           f"evidence {evidence}", out, err)
    print(f"sum: {out['verdict']} at {where['file']}:{where['line']} ({where['api']}, {where['cause']['kind']})")


def check_table(parity, dest, text):
    table_line = line_of(text, TABLE_AFTER)
    forward_line = line_of(text, "        h = self.tok_embeddings(tokens) * (1.0 + self.channel_scale)\n")
    code, out, err, doc = hunt_variant(parity, dest, "table", "numerics/table-dtype")
    where = out.get("located", {})
    expect("table", code == 1 and out["verdict"] == "first divergent probe", f"exit {code}", out, err)
    expect("table", (where["api"], where["file"], where["line"]) == ("Tensor.__radd__.0.forward", LLAMA, forward_line),
           "not the add of the table at forward's line", out, err)
    expect("table", where.get("cause", {}).get("kind") == "operands", "msprobe's cause is not 'operands'", out, err)
    expect("table", where.get("in_changed_hunk") is False, "forward's line is not in a hunk", out, err)
    check_hunk("table", where, LLAMA, table_line, "value trace", out, err)
    expect("table", "channel_scale" in where.get("name", "") or "channel_scale" in out["explanation"],
           "the explanation does not name self.channel_scale", out, err)
    expect("table", "float16" in out["explanation"], "the explanation does not say float16", out, err)
    expect("table", "did not change" in out["explanation"], "the explanation does not say the line is unchanged",
           out, err)
    print(f"table: {out['verdict']}: {out['explanation'][:200]}")


def check_silu(parity, dest, text):
    first_new = line_of(text, SILU_AFTER.split("\n")[0])
    sigmoid_line = first_new + 1
    code, out, err, doc = hunt_variant(parity, dest, "silu", "numerics/silu-unfused")
    where = out.get("located", {})
    expect("silu", code == 2 and out["verdict"] == "inconclusive", f"exit {code}", out, err)
    expect("silu", (where["api"], where["file"], where["line"]) == ("Torch.sigmoid.0.forward", LLAMA, sigmoid_line),
           "not the candidate's sigmoid at the new line", out, err)
    expect("silu", where.get("cause", {}).get("kind") == "unmatched", "msprobe's cause is not 'unmatched'", out, err)
    check_hunk("silu", where, LLAMA, first_new, None, out, err)
    alignment = doc["first_divergence"].get("alignment", {})
    expect("silu", alignment.get("baseline") == ["Functional.silu.0.forward"] and "Torch.sigmoid.0.forward" in
           alignment.get("candidate", []), f"the alignment does not pair silu with sigmoid: {alignment}", out, err)
    iterations = doc["hunt"]["iterations"]
    expect("silu", [it["iteration"] for it in iterations] == [1, 2] and "rewrote the statement" in
           json.dumps(iterations[0].get("notes", [])), "no note says why the statement's probes decide nothing",
           out, err)
    for words in ("equal on both sides", "Functional.silu.0.forward", "the line is in the change " + LLAMA):
        expect("silu", words in out["explanation"], f"the explanation does not say {words!r}", out, err)
    expect("silu", "argv" not in out["explanation"], "a dump folder argument is taken for a divergence", out, err)
    print(f"silu: {out['verdict']}: {out['explanation'][:200]}")


def check_md5_identical(parity, dest):
    """No torchtitan flag on the command line: parity cannot add TensorBoard, the printed
    digits cannot decide, and the md5 dumps must."""
    launcher = os.path.join(dest, "train_llama_md5.sh")
    with open(launcher, "w") as f:
        f.write("#!/bin/bash\n# the user's fixed launcher: every flag is in here\nset -eu\n"
                "exec bash scripts/run_train.sh " + LLAMA_SCRIPT.split("run_train.sh ", 1)[1]
                .replace("{steps}", str(STEPS)).replace("{dump}", '"$1"').replace("statistics", "md5") + "\n")
    # A launcher that is not one of parity's presets runs only when the user's policy says so.
    dumps = os.path.join(dest, "msprobe", "md5")
    policy = {"commands": [{"argv": ["bash", launcher, os.path.join(dumps, side)]} for side in ("baseline", "test")]}
    config_home = os.path.join(dest, "xdg")
    os.makedirs(os.path.join(config_home, "parity"))
    with open(os.path.join(config_home, "parity", "policy.json"), "w") as f:
        json.dump(policy, f)
    os.environ["XDG_CONFIG_HOME"] = config_home
    try:
        code, out, err, doc = hunt_variant(parity, dest, "md5", "refactor/move-helpers",
                                           script="bash " + launcher + " {dump}")
    finally:
        del os.environ["XDG_CONFIG_HOME"]
    expect("md5", code == 0 and out["verdict"] == "no divergence", f"exit {code}", out, err)
    expect("md5", doc["hunt"]["compare"]["verdict"] != "PASS", "the logs decided: the dumps were not compared",
           out, err)
    expect("md5", doc.get("first_diff", {}).get("found") is False or "dumps" in out["explanation"],
           "the explanation does not say the dumps show no divergence", out, err)
    with open(os.path.join(dest, "msprobe", "md5", "baseline", "step0", "rank0", "dump.json")) as f:
        leaves = json.dumps(json.load(f))
    expect("md5", '"md5"' in leaves, "the dump has no md5 values", out, err)
    print(f"md5: {out['verdict']}: {out['explanation'][:200]}")


def main():
    parity, root = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory(prefix="parity-hunt-variants-") as dest:
        subprocess.run([os.path.join(root, "examples", "make-demo-repo"), dest, "--steps", str(STEPS)], check=True,
                       capture_output=True)
        with open(os.path.join(dest, "ground_truth.json")) as f:
            repo = json.load(f)["repo"]
        sum_text = add_branch(repo, "numerics/reassociated-sum", LLAMA, SUM_BEFORE, SUM_AFTER,
                              "llama: add the two branches first")
        table_text = add_branch(repo, "numerics/table-dtype", LLAMA, TABLE_BEFORE, TABLE_AFTER,
                                "llama: build the channel table in half precision")
        silu_text = add_branch(repo, "numerics/silu-unfused", LLAMA, SILU_BEFORE, SILU_AFTER,
                               "llama: write SiLU out")
        before = tree_state(repo)
        only = sys.argv[3:]  # a subset by name, for debugging
        for name, check in (("sum", lambda: check_reassociated(parity, dest, sum_text)),
                            ("table", lambda: check_table(parity, dest, table_text)),
                            ("silu", lambda: check_silu(parity, dest, silu_text)),
                            ("md5", lambda: check_md5_identical(parity, dest))):
            if not only or name in only:
                check()
        if tree_state(repo) != before:
            fail("the user's working tree changed")
    print("ok")


if __name__ == "__main__":
    main()
