#!/usr/bin/python3
"""`parity hunt` end to end on the demo repository (examples/make-demo-repo), with the real
toy trainer (Debian's PyTorch), real git worktrees, real msprobe-format dumps and real probe
injection, at a few steps:

  numerics/gelu-tanh   exit 1, "inputs equal, output differs" at the planted file:line of
                       ground_truth.json, the hunk is the planted change, every injected file
                       restored byte for byte (its SHA-256 equals the one recorded before
                       injection, and git sees no change but parity's infra copy), the user's
                       tree untouched, the SSH password nowhere in the output, ledger or report
  refactor/move-helpers  exit 0, "no divergence", worktrees removed
  numerics/half-roundtrip  (made here: x rounded through float16 by Tensor methods msprobe
                       does not hook) exit 1, msprobe's first divergent API has differing
                       inputs, the probes at its line say so, and the stack's functions find
                       the function whose arguments are equal and whose result differs
  numerics/norm-eps    (made here: the LayerNorm epsilon default changed in config_registry.py)
                       exit 1, "argument differs": msprobe's first LayerNorm has equal tensor
                       inputs and a differing eps, its line did not change, and the hunk named
                       is the changed default, found by tracing the value from the line
  a config with a bad field  exit 2, the error names the JSON path

    hunt_e2e.py PARITY_BINARY REPO_ROOT
"""
import hashlib
import json
import os
import subprocess
import sys
import tempfile

PASSWORD = "pw-Hunt-SECRET-7731"
STEPS = 3


def fail(message):
    print("FAIL:", message, file=sys.stderr)
    sys.exit(1)


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def tree_state(repo):
    """Every file of the user's tree (outside .git) with its hash, plus git's view of it."""
    files = {}
    for root, dirs, names in os.walk(repo):
        dirs[:] = [d for d in dirs if d != ".git"]
        for n in names:
            p = os.path.join(root, n)
            files[os.path.relpath(p, repo)] = sha256(p)
    git = lambda *a: subprocess.run(["git", "-C", repo, *a], capture_output=True, text=True, check=True).stdout
    return files, git("status", "--porcelain"), git("rev-parse", "HEAD"), git("branch", "--list")


TOY_SCRIPT = ("bash scripts/run_train.sh --module toy --config toy_small --training.steps {steps} --debug.seed=42 "
              "--debug.deterministic --training.dataset_path=data/corpus.txt --dump.dir {dump} --dump.level mix "
              "--dump.mode statistics --dump.step 0")


def write_config(dest, name, test_ref, extra_debug=None, script=TOY_SCRIPT):
    """A hunt config of main against test_ref; `script` is the run_script with {steps} and
    {dump} (each side's own dump folder) to fill in."""
    dumps = os.path.join(dest, "msprobe", name)
    config = {
        "baseline": {"mode": "local", "code_path": "toy-trainer", "ref": "main",
                     "run_script": script.format(steps=STEPS, dump=os.path.join(dumps, "baseline")),
                     "ssh": {"host": "10.170.27.151", "username": "root", "port": 22, "password": PASSWORD}},
        "test": {"mode": "local", "code_path": "toy-trainer", "ref": test_ref,
                 "run_script": script.format(steps=STEPS, dump=os.path.join(dumps, "test")),
                 "ssh": {"host": "10.170.27.151", "username": "root", "port": 22, "password": PASSWORD}},
        "msprobe": {"baseline_data_dir": os.path.join(dumps, "baseline"), "test_data_dir": os.path.join(dumps, "test"),
                    "parse_code_dir": "/toy_trainer/", "compare_output_dir": ""},
        "debug": {"max_iterations": 3, "tolerance": 0, "trace_threshold": 0.001, **(extra_debug or {})},
    }
    path = os.path.join(dest, f"config-{name}.json")
    with open(path, "w") as f:
        json.dump(config, f, indent=2)
    return path


def hunt(parity, config, report_dir, *flags):
    p = subprocess.run([parity, "hunt", "--config", config, "--report-dir", report_dir, "--yes", *flags],
                       capture_output=True, text=True, timeout=900)
    for stream in (p.stdout, p.stderr):
        if PASSWORD in stream:
            fail("the SSH password appears in parity hunt's output")
    try:
        out = json.loads(p.stdout)
    except json.JSONDecodeError:
        fail(f"parity hunt printed no JSON (exit {p.returncode}):\n{p.stdout}\n{p.stderr}")
    return p.returncode, out, p.stderr


def no_password_in(folder):
    for root, _, names in os.walk(folder):
        for n in names:
            with open(os.path.join(root, n), "rb") as f:
                if PASSWORD.encode() in f.read():
                    fail(f"the SSH password is written in {os.path.join(root, n)}")


def check_numerics(parity, dest, truth, repo):
    planted = truth["branches"]["numerics/gelu-tanh"]["planted_change"]
    report = os.path.join(dest, "report-numerics")
    code, out, err = hunt(parity, write_config(dest, "numerics", "numerics/gelu-tanh"), report, "--keep-worktrees")
    if code != 1:
        fail(f"numerics: exit {code}, expected 1 (divergence located)\n{json.dumps(out, indent=1)}\n{err}")
    if out["verdict"] != "inputs equal, output differs":
        fail(f"numerics: verdict {out['verdict']!r}: {out['explanation']}")
    located = out["located"]
    if (located["file"], located["line"]) != (planted["file"], planted["line"]):
        fail(f"numerics: located {located['file']}:{located['line']}, planted {planted['file']}:{planted['line']}")
    if located["api"] != truth["branches"]["numerics/gelu-tanh"]["first_divergent_api"]:
        fail(f"numerics: API {located['api']}")
    hunk = [line[1:].strip() for line in located["hunk"]["lines"]]
    if hunk != [planted["before"], planted["after"]]:
        fail(f"numerics: hunk {located['hunk']['lines']} is not the planted change")
    # msprobe's evidence in the sentence: the argument only the candidate passes, with its value.
    if "approximate is tanh in the candidate, absent in the baseline" not in out["explanation"]:
        fail(f"numerics: the explanation does not say which argument differs and how: {out['explanation']}")
    probe = located["probe"]
    if probe["when"] != "after" or probe["baseline"]["hash"] == probe["candidate"]["hash"]:
        fail(f"numerics: the deciding probe is not a differing output: {probe}")
    for key in ("html", "pdf"):
        if not os.path.isfile(out["outputs"].get(key, "")):
            fail(f"numerics: no {key} report: {out['outputs']}")

    with open(os.path.join(report, "hunt", "hunt.json")) as f:
        doc = json.load(f)
    loop = doc["hunt"]
    if doc["first_divergence"]["api"] != located["api"] or loop["verdict"] != out["verdict"]:
        fail("numerics: hunt.json does not hold msprobe's result and the loop's verdict")
    # Full-precision (TensorBoard) metrics: the logs differ bitwise, and each instrumented run
    # reproduces its uninstrumented run bitwise (the probes did not perturb the numerics).
    if loop["metrics_from"] != "tensorboard" or loop["compare"]["verdict"] != "FAIL":
        fail(f"numerics: metrics from {loop['metrics_from']}, compare {loop['compare']}")
    for side, check in loop["iterations"][0]["perturbation"].items():
        if check["verdict"] != "PASS":
            fail(f"numerics: perturbation check of the {side}: {check}")
    first = loop["iterations"][0]["probes"]["first_divergent"]
    if loop["iterations"][0]["probes"]["matched"] < 2 or first["when"] != "after":
        fail(f"numerics: probes {loop['iterations'][0]['probes']}")

    # Byte for byte: each injected file's SHA-256 now equals the one recorded before injection.
    checked = 0
    for it in loop["iterations"]:
        for side, injected in it["injected"].items():
            worktree = loop["worktrees"][side]
            for f in injected["files"]:
                now = sha256(os.path.join(worktree, f["path"]))
                if now != f["sha256_original"] or now == f["sha256_injected"]:
                    fail(f"numerics: {worktree}/{f['path']} not restored ({now} vs {f['sha256_original']})")
                checked += 1
    if checked < 2:
        fail(f"numerics: only {checked} injected file(s) recorded")
    for side, worktree in loop["worktrees"].items():
        for leftover in ("_parity_probe.py", ".parity_inject"):
            if os.path.exists(os.path.join(worktree, leftover)):
                fail(f"numerics: {leftover} left in {worktree}")
        status = subprocess.run(["git", "-C", worktree, "status", "--porcelain", "--untracked-files=all"],
                                capture_output=True, text=True, check=True).stdout.split("\n")
        changed = sorted(line[3:] for line in status if line.strip())
        if changed != ["scripts/run_train.sh"]:  # parity's class-B copy of the user's infra change
            fail(f"numerics: {worktree} differs from its commit beyond the infra copy: {changed}")
        inj = subprocess.run([parity, "call", "inject_prints", json.dumps({"action": "status", "worktree": worktree})],
                             capture_output=True, text=True)
        if json.loads(inj.stdout).get("injected") is not False:
            fail(f"numerics: inject_prints status in {worktree}: {inj.stdout}")
    cleanup = subprocess.run([parity, "call", "audit_workspace", json.dumps(
        {"action": "cleanup", "repo": repo, "paths": list(loop["worktrees"].values()), "report_dir": report})],
        capture_output=True, text=True)
    if cleanup.returncode != 0:
        fail(f"numerics: cleanup of the kept worktrees failed: {cleanup.stdout}{cleanup.stderr}")

    with open(os.path.join(report, "manifest.json")) as f:
        ledger = json.load(f)
    actions = [(e["tool"], e["action"]) for e in ledger["entries"]]
    for needed in [("run_training", "train"), ("compare_logs", "compare"), ("inject_prints", "inject"),
                   ("inject_prints", "revert"), ("parity hunt", "hunt")]:
        if needed not in actions:
            fail(f"numerics: the ledger has no {needed} entry: {actions}")
    no_password_in(report)
    print(f"numerics: {out['verdict']} at {located['file']}:{located['line']} ({located['api']}), "
          f"{checked} injected file(s) restored byte for byte")


HALF_BEFORE = "        return self.w2(F.gelu(self.w1(x)))\n"
HALF_AFTER = "        x = x.half().float()\n" + HALF_BEFORE


EPS_BEFORE = "    norm_eps: float = 1e-5\n"
EPS_AFTER = "    norm_eps: float = 1e-6\n"


def add_branch(repo, branch, path, before, after, message):
    """Commits one edit of main's `path` on a new branch without touching the working tree;
    returns the branch's text of the file."""
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@example.com", GIT_INDEX_FILE=os.path.join(repo, ".git", "hunt-e2e-index"))
    git = lambda *a, **kw: subprocess.run(["git", "-C", repo, *a], capture_output=True, text=True, check=True,
                                          env=env, **kw).stdout.strip()
    text = git("show", f"main:{path}") + "\n"
    if text.count(before) != 1:
        fail(f"the toy trainer's {path} changed; update the line this test edits: {before!r}")
    blob = git("hash-object", "-w", "--stdin", input=text.replace(before, after))
    git("read-tree", "main")
    git("update-index", "--cacheinfo", f"100644,{blob},{path}")
    commit = git("commit-tree", git("write-tree"), "-p", "main", "-m", message)
    git("branch", branch, commit)
    os.unlink(env["GIT_INDEX_FILE"])
    return text.replace(before, after)


def add_half_branch(repo):
    """The float16 round trip before the MLP; returns the MLP's return line on the branch."""
    text = add_branch(repo, "numerics/half-roundtrip", "toy_trainer/model.py", HALF_BEFORE, HALF_AFTER,
                      "model: round the MLP input through float16")
    return text.split("\n").index(HALF_BEFORE.rstrip("\n")) + 1


def add_eps_branch(repo):
    """The LayerNorm epsilon default changed in another file (config_registry.py's dataclass);
    returns (the default's line there, the block's line that calls attention_norm)."""
    text = add_branch(repo, "numerics/norm-eps", "toy_trainer/config_registry.py", EPS_BEFORE, EPS_AFTER,
                      "config: smaller LayerNorm epsilon")
    model = subprocess.run(["git", "-C", repo, "show", "main:toy_trainer/model.py"], capture_output=True, text=True,
                           check=True).stdout.split("\n")
    call = next(i + 1 for i, l in enumerate(model) if "self.attention_norm(x)" in l)
    return text.split("\n").index(EPS_AFTER.rstrip("\n")) + 1, call


def check_norm_eps(parity, dest, eps_line, call_line):
    """Written before running: msprobe's first divergent API is the first LayerNorm, whose
    tensor inputs are equal and whose eps argument differs; its user line (the block's call of
    attention_norm) did not change, the value is traced to config_registry.py's default; the
    probes at the line see equal inputs and a differing output: "argument differs", exit 1."""
    report = os.path.join(dest, "report-eps")
    code, out, err = hunt(parity, write_config(dest, "eps", "numerics/norm-eps"), report)
    if code != 1 or out["verdict"] != "argument differs":
        fail(f"eps: exit {code}, verdict {out.get('verdict')!r}: {out.get('explanation')}\n{err}")
    where = out["located"]
    if (where["api"], where["file"], where["line"]) != ("Functional.layer_norm.0.forward", "toy_trainer/model.py", call_line):
        fail(f"eps: located {where.get('api')} at {where.get('file')}:{where.get('line')}")
    hunk = where.get("hunk") or {}
    if (hunk.get("file"), hunk.get("new_start"), where.get("hunk_found_by")) != (
            "toy_trainer/config_registry.py", eps_line, "value trace"):
        fail(f"eps: the hunk is not the changed default: {where}")
    if "1e-06" not in out["explanation"] or "config_registry.py" not in out["explanation"]:
        fail(f"eps: the explanation does not name the value and where it is set: {out['explanation']}")
    print(f"eps: {out['verdict']}: {out['explanation'][:160]}")


def check_stack(parity, dest, return_line):
    report = os.path.join(dest, "report-half")
    code, out, err = hunt(parity, write_config(dest, "half", "numerics/half-roundtrip"), report)
    if code != 1 or out["verdict"] != "first divergent probe":
        fail(f"half: exit {code}, verdict {out.get('verdict')!r}: {out.get('explanation')}\n{err}")
    with open(os.path.join(report, "hunt", "hunt.json")) as f:
        doc = json.load(f)
    loop = doc["hunt"]
    if doc["first_divergence"]["inputs_equal"] is not False:
        fail(f"half: msprobe says the inputs of {doc['first_divergence']['api']} are equal")
    first, second = loop["iterations"]
    if first["probes"]["first_divergent"]["when"] != "before":
        fail(f"half: iteration 1 did not see differing inputs: {first['probes']['first_divergent']}")
    if not all(t.get("enclosing_function") for t in second["targets"]["candidate"]) or len(second["targets"]["candidate"]) < 3:
        fail(f"half: iteration 2 did not instrument the stack's functions: {second['targets']}")
    where = out["located"]
    if (where["when"], where["site"]) != ("return", f"toy_trainer/model.py:{return_line}"):
        fail(f"half: located {where.get('when')} at {where.get('site')}, expected FeedForward.forward's return "
             f"at toy_trainer/model.py:{return_line}")
    for it in loop["iterations"]:
        for side, check in it["perturbation"].items():
            if check["verdict"] != "PASS":
                fail(f"half: iteration {it['iteration']} perturbation check of the {side}: {check}")
    print(f"half: {out['verdict']}: {where['when']} at {where['site']} after {len(loop['iterations'])} iterations")


def check_refactor(parity, dest):
    report = os.path.join(dest, "report-refactor")
    code, out, err = hunt(parity, write_config(dest, "refactor", "refactor/move-helpers"), report)
    if code != 0 or out["verdict"] != "no divergence":
        fail(f"refactor: exit {code}, verdict {out.get('verdict')!r}, expected 0 / no divergence\n{err}")
    for side in ("baseline", "candidate"):
        if os.path.exists(os.path.join(dest, f"toy-trainer-hunt-{side}")):
            fail(f"refactor: the {side} worktree was not removed")
    no_password_in(report)
    print(f"refactor: {out['verdict']} — {out['explanation'][:120]}")


def check_bad_config(parity, dest):
    config = write_config(dest, "bad", "numerics/gelu-tanh", {"max_iteration": 3})
    report = os.path.join(dest, "report-bad")
    code, out, err = hunt(parity, config, report)
    if code != 2 or "config-bad.json.debug.max_iteration" not in out["error"]["message"]:
        fail(f"bad config: exit {code}, error {out.get('error')}")
    if os.path.exists(report):
        fail("bad config: the report directory was created")
    print(f"bad config refused: {out['error']['message']}")


def main():
    parity, root = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory(prefix="parity-hunt-e2e-") as dest:
        subprocess.run([os.path.join(root, "examples", "make-demo-repo"), dest, "--steps", str(STEPS)], check=True,
                       capture_output=True)
        with open(os.path.join(dest, "ground_truth.json")) as f:
            truth = json.load(f)
        repo = truth["repo"]
        return_line = add_half_branch(repo)
        eps_line, call_line = add_eps_branch(repo)
        before = tree_state(repo)
        check_bad_config(parity, dest)
        check_numerics(parity, dest, truth, repo)
        check_refactor(parity, dest)
        check_stack(parity, dest, return_line)
        check_norm_eps(parity, dest, eps_line, call_line)
        if tree_state(repo) != before:
            fail("the user's working tree changed")
    print("ok")


if __name__ == "__main__":
    main()
