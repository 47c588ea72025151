#!/usr/bin/python3
"""Gate 1, the calibrated verdict, gate 3 (resume equivalence) and the baseline cache, end to
end: `parity premerge` on a git repository of the real toy trainer (examples/toy-trainer),
real PyTorch runs. The trainer of the test repository appends one line per training process
to $TOY_RUN_COUNTER, so the test counts the processes each premerge really started.

Branches (each decided by hand before parity ran):
  main               the toy trainer                                  (deterministic)
  noop               + a comment                                      -> PASS, gate 1 PASS
  forgets-optimizer  resume does not restore the optimizer state      -> toy_debug PASS, resume FAIL
  noisy              the global grad-norm reduction (clipping) and the MLP's partial sums
                     are summed in an order drawn from the wall clock: real run-to-run noise
  noisy-noop         noisy + a comment                                -> gate 1 FAIL (error);
                                                                         with noise.repeats 3: PASS
  noisy-planted      noisy + label smoothing 0.01 in the loss         -> with noise.repeats 3: FAIL

usage: determinism_e2e.py PARITY_BINARY SOURCE_DIR
"""
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile

parity, source = sys.argv[1], sys.argv[2]
tmp = tempfile.mkdtemp(prefix="parity-determinism-e2e-")
repo = os.path.join(tmp, "repo")
counter = os.path.join(tmp, "runs.txt")
env = dict(os.environ, XDG_CACHE_HOME=os.path.join(tmp, "xdg"),
           GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com", GIT_COMMITTER_NAME="t",
           GIT_COMMITTER_EMAIL="t@example.com")
env.pop("CUBLAS_WORKSPACE_CONFIG", None)
# The test user's policy: its temp folder, and the variables it passes to the trainings
# (the process counter, and the extra variable that must miss the cache).
os.makedirs(os.path.join(tmp, "config", "parity"))
with open(os.path.join(tmp, "config", "parity", "policy.json"), "w") as f:
    json.dump({"folders": [{"path": tmp, "write": True}], "env": {"set": ["TOY_RUN_COUNTER", "TOY_EXTRA"]}}, f)
env["XDG_CONFIG_HOME"] = os.path.join(tmp, "config")
failures = []


def check(cond, what, evidence=None):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)
        if evidence is not None:
            print("     " + (evidence if isinstance(evidence, str) else json.dumps(evidence, indent=1))[:4000])
    return cond


def git(*args):
    subprocess.run(["git", "-C", repo] + list(args), check=True, capture_output=True, env=env)


def edit(path, old, new):
    full = os.path.join(repo, path)
    text = open(full).read()
    assert old in text, (path, old)
    open(full, "w").write(text.replace(old, new, 1))


def branch(name, base, changes, message):
    git("checkout", "-q", "-b", name, base)
    for path, old, new in changes:
        edit(path, old, new)
    git("commit", "-q", "-am", message)
    git("checkout", "-q", "main")


def runs():
    return len(open(counter).read().splitlines()) if os.path.exists(counter) else 0


def premerge(name, baseline, candidate, extra=None, args=(), env_extra=None, configs=None):
    config = {
        "repo": repo, "report_dir": os.path.join(tmp, "reports", name),
        "baseline": baseline, "candidate": candidate, "model": "toy",
        "configs": configs or ["toy_debug"], "steps": 6, "dataset_path": "data/corpus.txt",
        "env": {"TOY_RUN_COUNTER": counter},
        "compare": {"preset": "premerge", "tolerance_abs": 0},
        "confirm": {"classes": "proposed", "environment_anomalies": True},
    }
    config.update(extra or {})
    path = os.path.join(tmp, name + ".json")
    json.dump(config, open(path, "w"), indent=1)
    before = runs()
    p = subprocess.run([parity, "premerge", "--config", path] + list(args), capture_output=True, text=True,
                       env=dict(env, **(env_extra or {})), timeout=1200)
    try:
        out = json.loads(p.stdout)
    except ValueError:
        out = {"unparsed": p.stdout}
    print(f"== premerge {name}: {baseline} vs {candidate}: exit {p.returncode}, {runs() - before} training process(es)")
    return p.returncode, out, runs() - before, p.stderr, config["report_dir"]


def report(report_dir, case):
    return json.load(open(os.path.join(report_dir, case, "report.json")))


def ledger(report_dir):
    return json.load(open(os.path.join(report_dir, "manifest.json")))["entries"]


NOISY_CLIP = '''        grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.training.max_norm)
'''
NOISY_CLIP_NEW = '''        # The global grad-norm reduction in an order drawn from the wall clock (as an
        # all-reduce whose order varies from run to run), then clipping by it.
        import random, time
        grads = [p.grad for p in model.parameters() if p.grad is not None]
        order = list(range(len(grads)))
        random.Random(time.time_ns()).shuffle(order)
        grad_norm = torch.zeros((), dtype=torch.float32)
        for i in order:
            grad_norm = grad_norm + grads[i].pow(2).sum()
        grad_norm = grad_norm.sqrt()
        for g in grads:
            g.mul_(torch.clamp(cfg.training.max_norm / (grad_norm + 1e-6), max=1.0))
'''
NOISY_MLP = '''        return self.w2(F.gelu(self.w1(x)))
'''
NOISY_MLP_NEW = '''        import random, time
        h = F.gelu(self.w1(x))
        hs, ws = h.chunk(16, dim=-1), self.w2.weight.chunk(16, dim=1)
        order = list(range(16))
        random.Random(time.time_ns()).shuffle(order)
        out = None
        for i in order:
            part = F.linear(hs[i], ws[i])
            out = part if out is None else torch.add(out, part)
        return torch.add(out, self.w2.bias)
'''

try:
    shutil.copytree(os.path.join(source, "examples", "toy-trainer"), repo,
                    ignore=shutil.ignore_patterns("outputs", "__pycache__"))
    subprocess.run(["git", "init", "-q", "-b", "main", repo], check=True, env=env)
    edit("toy_trainer/train.py", "    install_tee_prefix()\n",
         "    if os.environ.get(\"TOY_RUN_COUNTER\"):  # the test counts training processes\n"
         "        with open(os.environ[\"TOY_RUN_COUNTER\"], \"a\") as f:\n"
         "            f.write(\" \".join(argv) + \"\\n\")\n"
         "    install_tee_prefix()\n")
    git("add", "-A")
    git("commit", "-q", "-m", "toy trainer")
    branch("noop", "main", [("toy_trainer/model.py", "class Attention(nn.Module):\n",
                             "# attention first, then the MLP\nclass Attention(nn.Module):\n")], "comment")
    branch("forgets-optimizer", "main",
           [("toy_trainer/checkpoint.py",
             "            _restore_optimizer(self.optimizer, self.model, {k: v for k, v in tensors.items() if k.startswith(\"optimizer.\")})\n",
             "            pass  # the optimizer state is read but never put back\n")], "resume: skip the optimizer")
    branch("noisy", "main", [("toy_trainer/train.py", NOISY_CLIP, NOISY_CLIP_NEW),
                             ("toy_trainer/model.py", NOISY_MLP, NOISY_MLP_NEW)], "non-deterministic reductions")
    branch("noisy-noop", "noisy", [("toy_trainer/model.py", "class Attention(nn.Module):\n",
                                    "# attention first, then the MLP\nclass Attention(nn.Module):\n")], "comment")
    branch("noisy-planted", "noisy",
           [("toy_trainer/model.py", "return F.cross_entropy(logits.flatten(0, 1), labels.flatten(0, 1))",
             "return F.cross_entropy(logits.flatten(0, 1), labels.flatten(0, 1), label_smoothing=0.01)")], "smoothing")

    # 1. A deterministic trainer passes gate 1: two baseline runs, bitwise equal.
    code, out, n, err, det = premerge("det", "main", "noop")
    d = out.get("determinism", [{}])[0]
    check(code == 0 and out.get("verdict") == "PASS", "deterministic no-op: PASS", out)
    check(d.get("gate1") == "PASS" and "determinism verified" in d.get("reason", ""), "gate 1 PASS: determinism verified", d)
    check(n == 4, f"4 training processes (checkpoint, 2 baseline, candidate): {n}")
    g1 = report(det, "toy_debug.gate1")
    check(g1["mode"] == "bitwise" and g1["verdict"] == "PASS" and g1["metrics"]["loss"]["bitwise_equal"],
          "toy_debug.gate1/report.json: bitwise PASS", g1.get("verdict_reason"))
    html = open(out["outputs"]["html"], encoding="utf-8").read()
    check("toy_debug.gate1" in html, "the report shows gate 1's case")
    check(d.get("environment", {}).get("same") is True, "every run shares the environment fingerprint", d)

    # 2. The same premerge again: the baseline comes from the cache, only the candidate trains.
    code, out2, n, err, det2 = premerge("det2", "main", "noop")
    d2 = out2.get("determinism", [{}])[0]
    check(code == 0 and n == 2, f"second premerge: PASS with 2 processes (checkpoint, candidate): exit {code}, {n}", err[-3000:])
    check(d2.get("from_cache") == 2 and d2.get("gate1") == "PASS", "both baseline runs from the cache, gate 1 PASS", d2)
    a, b = report(det, "toy_debug"), report(det2, "toy_debug")
    stats = ["steps_compared", "max_abs", "max_abs_step", "mean_abs", "max_rel", "bitwise_equal"]
    check(a["verdict"] == b["verdict"] and a["verdict_reason"] == b["verdict_reason"] and
          all(a["metrics"][m][s] == b["metrics"][m][s] for m in a["metrics"] for s in stats),
          "the cached premerge gives the same report", [a["verdict_reason"], b["verdict_reason"]])
    cached = [e for e in ledger(det2) if e.get("outcome", {}).get("from_cache")]
    check(len(cached) == 2 and all(e["command"]["cwd"] and e["git"]["commit"] == out2["baseline_commit"] for e in cached),
          "the ledger records both reused runs, with their command, marked from_cache", cached)
    listed = json.loads(subprocess.run([parity, "cache", "list"], capture_output=True, text=True, env=env).stdout)
    check(len(listed["entries"]) == 1 and listed["entries"][0]["runs"] == 2 and
          listed["dir"] == os.path.join(tmp, "xdg", "parity"), "parity cache list: one entry of 2 runs", listed)
    plan = subprocess.run([parity, "reproduce", det2, "--print"], capture_output=True, text=True, env=env)
    check(plan.returncode == 0 and "baseline_r2_toy_debug" in plan.stdout + plan.stderr and
          "--training.steps=6" in plan.stdout + plan.stderr,
          "parity reproduce plans the reused baseline runs as trainings", plan.stdout[-2000:] + plan.stderr[-2000:])

    # 3. --no-cache trains everything again.
    code, out3, n, err, _ = premerge("nocache", "main", "noop", args=["--no-cache"])
    check(code == 0 and n == 4 and out3["determinism"][0]["from_cache"] == 0, f"--no-cache: 4 processes, none from the cache: {n}")

    # 4. What the key holds: a changed class-B file, a changed run variable, a changed
    #    environment variable each miss; the same change twice hits.
    with open(os.path.join(repo, "scripts", "run_train.sh"), "a") as f:
        f.write("# a local infra tweak (class B)\n")
    code, _, n, err, _ = premerge("classb", "main", "noop")
    check(code == 0 and n == 4, f"a changed class-B file misses the cache: {n} processes", err[-2000:])
    code, _, n, err, _ = premerge("classb2", "main", "noop")
    check(code == 0 and n == 2, f"the same class-B file again hits: {n} processes", err[-2000:])
    code, _, n, err, _ = premerge("envvar", "main", "noop", extra={"env": {"TOY_RUN_COUNTER": counter, "TOY_EXTRA": "1"}})
    check(code == 0 and n == 4, f"a changed run variable (env) misses: {n} processes", err[-2000:])
    code, _, n, err, _ = premerge("fingerprint", "main", "noop", env_extra={"CUBLAS_WORKSPACE_CONFIG": ":16:8"})
    check(code == 0 and n == 4, f"a changed environment (fingerprint) misses: {n} processes", err[-2000:])

    # 5. Run-to-run noise: gate 1 stops the run and names the evidence.
    code, out, n, err, noisy = premerge("noisy", "noisy", "noisy-noop")
    e = out.get("error", {})
    text = json.dumps(e)
    check(code == 2 and "gate 1" in e.get("message", "") and "first differs at step" in e.get("message", ""),
          "noisy baseline: gate 1 fails as an error naming the metric and step", out)
    check("environment_fingerprints" in text and "determinism_flags" in text and "--debug.deterministic" in text,
          "the error carries the fingerprints and the determinism flags", e)
    check(report(noisy, "toy_debug.gate1")["verdict"] == "FAIL", "toy_debug.gate1/report.json records the FAIL")
    # A failed run leaves nothing in the way of the next one: its worktrees are removed, and
    # the error's hint says so.
    check("were removed" in e.get("hint", "") and not os.path.exists(repo + "-baseline") and
          not os.path.exists(repo + "-candidate"), "the failed premerge removed its worktrees", e.get("hint"))

    # 6. Calibrated: 3 baseline runs, the no-op within their noise, the planted change beyond it.
    code, out, n, err, cal = premerge("calibrated", "noisy", "noisy-noop", extra={"noise": {"repeats": 3}})
    check(code == 0 and out.get("verdict") == "PASS", "noise.repeats 3: the no-op candidate PASSes", out)
    r = report(cal, "toy_debug") if os.path.exists(os.path.join(cal, "toy_debug", "report.json")) else {}
    check(r.get("mode") == "calibrated" and r.get("noise", {}).get("runs") == 3 and
          not r["noise"]["bitwise_identical"], "report.json: calibrated against 3 runs that differ", r.get("noise"))
    with open(os.path.join(cal, "toy_debug", "diff_summary.csv")) as f:
        header = next(csv.reader(f))
    check("loss_noise_envelope" in header and "grad_norm_noise_envelope" in header, "the CSV has the envelopes", header)
    check(n == 5, f"5 processes (checkpoint, 3 baseline, candidate): {n}")
    code, out, n, err, planted = premerge("planted", "noisy", "noisy-planted", extra={"noise": {"repeats": 3}})
    case = (out.get("cases") or [{}])[0]
    check(code == 1 and case.get("verdict") == "FAIL" and "beyond the noise" in case.get("reason", ""),
          "noise.repeats 3: the planted change still FAILs, beyond the noise", out)

    # 7. Gate 3: a correct resume is equivalent; one that forgets the optimizer state is not.
    resume = [{"name": "toy_debug", "resume_at": 3}]
    code, out, n, err, _ = premerge("resume", "main", "noop", configs=resume)
    verdicts = {c["config"]: c["verdict"] for c in out.get("cases", [])}
    check(code == 0 and verdicts == {"toy_debug": "PASS", "toy_debug.resume3": "PASS"},
          "correct resume: toy_debug.resume3 PASS", out)
    code, out, n, err, _ = premerge("resume-bad", "main", "forgets-optimizer", configs=resume)
    verdicts = {c["config"]: c["verdict"] for c in out.get("cases", [])}
    check(code == 1 and verdicts == {"toy_debug": "PASS", "toy_debug.resume3": "FAIL"},
          "a resume that forgets the optimizer state: toy_debug PASS, toy_debug.resume3 FAIL", out)
finally:
    if failures:
        print(f"{len(failures)} check(s) failed; files kept in {tmp}")
    else:
        shutil.rmtree(tmp, ignore_errors=True)
sys.exit(1 if failures else 0)
