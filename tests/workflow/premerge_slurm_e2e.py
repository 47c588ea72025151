#!/usr/bin/python3
"""`parity premerge` with executor slurm on a REAL one-node Slurm cluster on loopback.

    premerge_slurm_e2e.py PARITY_BINARY SOURCE_DIR [STEPS]

Starts the test cluster (tests/run/slurm_cluster.py: munged, MariaDB + slurmdbd, slurmctld,
slurmd with 8 CPUs as consumable resources), writes the user's Slurm settings
(XDG_CONFIG_HOME/parity/slurm.json), builds the demo repository and checks, decided by hand
before running:
  1. the demo's 2-config matrix (toy_small, toy_tp2) on numerics/gelu-tanh gives, on Slurm,
     the verdicts it gives locally: toy_small FAIL (GELU's tanh approximation moves the loss
     at step 1), toy_tp2 PASS (the branch changes only FeedForward.forward's tp_degree 1
     line; TP=2 runs _row_parallel_forward, whose gelu call it leaves alone), overall FAIL,
     exit 1 both times;
  2. on Slurm the six trainings (two configs x the baseline twice for gate 1 and the
     candidate) overlap in time: from sacct, the latest start is before the earliest end;
  3. the batch script was shown before the first submission, and every job id is in the
     outcome, the ledger and the HTML report;
  4. a job started by one `parity call` (wait false) is followed to its end by another
     `parity call` process (the job is the scheduler's, recorded by id);
  5. `parity bisect --jobs 2` on bisect/history (13 first-parent commits, 6 fails with an
     ImportError, 8 is the GELU change) with executor slurm: the culprit is commit 8, in the
     rounds the search's rule gives whatever runs the trainings ({4, 8}, {5, 6}, {7}, as
     bisect_e2e.py checks locally); every training is a Slurm job (2 for the good side + 5
     probes = 7 ids, each probe naming its own), sacct has commit 6's job FAILED and the
     others COMPLETED, the two trainings of round {4, 8} overlap in time, and bisect.md lists
     the ids;
  6. `parity hunt` (PrecisionComparer's config, both sides "executor": "slurm") on
     numerics/gelu-tanh at 3 steps ends as it does locally (hunt_e2e.py): exit 1, "inputs
     equal, output differs" at the planted file:line of ground_truth.json with the planted
     hunk; every training it started (the two runs, the probe reruns) is a Slurm job in the
     ledger ("slurm job <id> via local"), at least four of them, each COMPLETED in sacct.
The cluster is stopped whatever happens.
"""
import json
import os
import subprocess
import sys
import tempfile

parity, source = sys.argv[1], sys.argv[2]
steps = int(sys.argv[3]) if len(sys.argv) > 3 else 20
cluster_script = os.path.join(source, "tests/run/slurm_cluster.py")
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


def premerge(dest, repo, name, executor, env):
    config = os.path.join(dest, f"premerge-{name}.json")
    c = {
        "repo": repo, "report_dir": os.path.join(dest, "reports", name), "baseline": "main",
        "candidate": "numerics/gelu-tanh", "model": "toy", "configs": ["toy_small", "toy_tp2"],
        "steps": steps, "dataset_path": "data/corpus.txt",
        "compare": {"preset": "premerge", "tolerance_abs": 0},
        "confirm": {"classes": "proposed", "environment_anomalies": True},
        "executor": executor,
    }
    with open(config, "w") as f:
        json.dump(c, f, indent=2)
    r = subprocess.run([parity, "premerge", "--config", config], env=env, capture_output=True, text=True, timeout=1500)
    with open(os.path.join(dest, f"premerge-{name}.err"), "w") as f:
        f.write(r.stderr)
    try:
        out = json.loads(r.stdout)
    except ValueError:
        out = {"unparsable": r.stdout}
    return r.returncode, out, r.stderr


def sacct(job, env):
    r = subprocess.run(["sacct", "-n", "-P", "-X", "-j", job, "-o", "JobIDRaw,State,Start,End"], env=env,
                       capture_output=True, text=True, timeout=60)
    parts = r.stdout.strip().split("|")
    return parts if len(parts) == 4 else None


def check_bisect(dest, demo, repo, env):
    truth = json.load(open(os.path.join(demo, "ground_truth.json")))["bisect"]
    config = os.path.join(dest, "premerge-bisect.json")
    with open(config, "w") as f:
        json.dump({"repo": repo, "report_dir": os.path.join(dest, "reports", "bisect"), "baseline": "main",
                   "candidate": "bisect/history", "model": "toy", "configs": ["toy_small"], "steps": steps,
                   "dataset_path": "data/corpus.txt", "compare": {"preset": "premerge", "tolerance_abs": 0},
                   "confirm": {"classes": "proposed", "environment_anomalies": True}, "executor": "slurm"}, f)
    r = subprocess.run([parity, "bisect", "--config", config, "--jobs", "2"], env=env, capture_output=True, text=True,
                       timeout=1500)
    try:
        out = json.loads(r.stdout)
    except ValueError:
        check(False, f"parity bisect on Slurm printed JSON (exit {r.returncode}): {r.stdout[-1000:]}{r.stderr[-2000:]}")
        return
    culprit = (out.get("culprit") or {}).get("commit")
    check(r.returncode == 1 and culprit == truth["culprit"],
          f"bisect on Slurm: exit 1, culprit {truth['culprit'][:12]} (got {r.returncode}, {culprit}: "
          f"{out.get('explanation')}){'' if r.returncode == 1 else r.stderr[-2000:]}")
    index = {c["commit"]: c["index"] for c in out.get("commits", [])}
    rounds = {}
    for p in out.get("probes", []):
        rounds.setdefault(p["round"], []).append(p)
    got = sorted(sorted(index.get(p["commit"]) for p in ps) for ps in rounds.values())
    check(got == sorted([[4, 8], [5, 6], [7]]), f"bisect on Slurm: rounds {{4, 8}}, {{5, 6}}, {{7}} (got {got})")
    jobs = out.get("jobs", [])
    probe_jobs = [p.get("slurm_job", "") for p in out.get("probes", [])]
    check(len(jobs) == 7 and all(j.isdigit() for j in jobs) and jobs[2:] == probe_jobs,
          f"bisect on Slurm: 7 job ids, the probes' own after the good side's two: {jobs} / {probe_jobs}")
    states = {}
    for p in out.get("probes", []):
        row = sacct(p.get("slurm_job", "?"), env)
        states[index.get(p["commit"])] = row
    expected = {i: ("FAILED" if i == 6 else "COMPLETED") for i in (4, 5, 6, 7, 8)}
    check({i: (v[1] if v else None) for i, v in states.items()} == expected,
          f"sacct: commit 6's probe FAILED (ImportError), the others COMPLETED: {states}")
    for ps in rounds.values():
        rows = [states.get(index.get(p["commit"])) for p in ps]
        # (a round with commit 6 may not: its job fails at the import, seconds after it starts)
        if len(rows) == 2 and all(rows) and all(v[1] == "COMPLETED" for v in rows):
            check(max(v[2] for v in rows) < min(v[3] for v in rows),
                  f"bisect on Slurm: the round's two probes overlap in time: {rows}")
    md_path = out.get("outputs", {}).get("markdown", "")
    md = open(md_path, encoding="utf-8").read() if md_path and os.path.exists(md_path) else ""
    check(md and all(j in md for j in jobs), f"bisect.md lists the Slurm job ids ({md_path})")


def check_hunt(dest, demo, repo, env):
    truth = json.load(open(os.path.join(demo, "ground_truth.json")))["branches"]["numerics/gelu-tanh"]
    planted = truth["planted_change"]
    dumps = os.path.join(dest, "hunt-dumps")
    script = ("bash scripts/run_train.sh --module toy --config toy_small --training.steps 3 --debug.seed=42 "
              "--debug.deterministic --training.dataset_path=data/corpus.txt --dump.dir {dump} --dump.level mix "
              "--dump.mode statistics --dump.step 0")
    side = lambda ref, name: {"mode": "local", "code_path": repo, "ref": ref, "executor": "slurm",
                              "run_script": script.format(dump=os.path.join(dumps, name))}
    config = os.path.join(dest, "hunt-slurm.json")
    with open(config, "w") as f:
        json.dump({"baseline": side("main", "baseline"), "test": side("numerics/gelu-tanh", "test"),
                   "msprobe": {"baseline_data_dir": os.path.join(dumps, "baseline"),
                               "test_data_dir": os.path.join(dumps, "test"), "parse_code_dir": "/toy_trainer/",
                               "compare_output_dir": ""},
                   "debug": {"max_iterations": 3, "tolerance": 0, "trace_threshold": 0.001}}, f, indent=2)
    report = os.path.join(dest, "reports", "hunt")
    r = subprocess.run([parity, "hunt", "--config", config, "--report-dir", report, "--yes"], env=env,
                       capture_output=True, text=True, timeout=1500)
    try:
        out = json.loads(r.stdout)
    except ValueError:
        check(False, f"parity hunt on Slurm printed JSON (exit {r.returncode}): {r.stdout[-1000:]}{r.stderr[-2000:]}")
        return
    located = out.get("located") or {}
    check(r.returncode == 1 and out.get("verdict") == "inputs equal, output differs",
          f"hunt on Slurm: exit 1, inputs equal, output differs (got {r.returncode}, {out.get('verdict')}: "
          f"{out.get('explanation') or out.get('error')}){'' if r.returncode == 1 else r.stderr[-2000:]}")
    check((located.get("file"), located.get("line")) == (planted["file"], planted["line"]),
          f"hunt on Slurm: located {located.get('file')}:{located.get('line')}, planted {planted['file']}:{planted['line']}")
    hunk = [line[1:].strip() for line in (located.get("hunk") or {}).get("lines", [])]
    check(hunk == [planted["before"], planted["after"]], f"hunt on Slurm: the hunk is the planted change: {hunk}")
    manifest = json.load(open(os.path.join(report, "manifest.json")))
    hosts = [e.get("command", {}).get("host", "") for e in manifest["entries"] if e.get("tool") == "run_training"]
    ids = [h[len("slurm job "):-len(" via local")] for h in hosts if h.startswith("slurm job ") and h.endswith(" via local")]
    check(len(hosts) >= 4 and len(ids) == len(hosts) and all(i.isdigit() for i in ids),
          f"hunt on Slurm: every training is a Slurm job in the ledger, at least four: {hosts}")
    states = {i: (sacct(i, env) or [None, None])[1] for i in ids}
    check(states and all(v == "COMPLETED" for v in states.values()), f"hunt on Slurm: sacct has each COMPLETED: {states}")


def main():
    dest = tempfile.mkdtemp(prefix="parity-slurm-e2e.")
    cluster = os.path.join(dest, "cluster")
    os.makedirs(cluster)
    started = subprocess.run(["/usr/bin/python3", cluster_script, "start", cluster, "--cpus", "8"],
                             capture_output=True, text=True, timeout=300)
    if started.returncode != 0:
        print("FAIL the test Slurm cluster did not start:\n" + started.stdout + started.stderr)
        return 1
    try:
        env = dict(os.environ, SLURM_CONF=os.path.join(cluster, "slurm.conf"), XDG_CONFIG_HOME=os.path.join(dest, "xdg"))
        os.makedirs(os.path.join(dest, "xdg", "parity"))
        with open(os.path.join(dest, "xdg", "parity", "policy.json"), "w") as f:  # the test user's folders
            json.dump({"folders": [{"path": dest, "write": True}],  # and the command of check 4
                       "commands": [{"argv": ["bash", "-c", "sleep 3; echo finished"]}]}, f)
        with open(os.path.join(dest, "xdg", "parity", "slurm.json"), "w") as f:
            json.dump({"partition": "debug", "cpus_per_task": 1, "time_limit": "30", "poll_interval_s": 0.5}, f)
        demo = os.path.join(dest, "demo")
        subprocess.run([os.path.join(source, "examples/make-demo-repo"), demo, "--steps", str(steps)], check=True,
                       capture_output=True, timeout=120)
        repo = os.path.join(demo, "toy-trainer")

        code_slurm, slurm, err_slurm = premerge(dest, repo, "slurm", "slurm", env)
        code_local, local, _ = premerge(dest, repo, "local", "local", env)
        verdicts = lambda o: {c["config"]: c["verdict"] for c in o.get("cases", [])}
        check(code_slurm == 1 and slurm.get("verdict") == "FAIL", f"slurm premerge: FAIL, exit 1 (got {code_slurm}, "
              f"{slurm.get('verdict')}: {json.dumps(slurm.get('error', ''))[:2000]})")
        check(code_local == 1 and local.get("verdict") == "FAIL", f"local premerge: FAIL, exit 1 (got {code_local})")
        check(verdicts(slurm) == verdicts(local) == {"toy_small": "FAIL", "toy_tp2": "PASS"},
              f"same verdicts per config on Slurm and locally: {verdicts(slurm)} vs {verdicts(local)}")

        jobs = slurm.get("jobs", [])
        check(len(jobs) == 8 and all(j.isdigit() for j in jobs), f"eight Slurm job ids in the outcome: {jobs}")
        # Plan order: every config's initial checkpoint, then per config baseline, baseline_r2
        # (gate 1) and candidate.
        trains = jobs[2:]
        rows = {}
        for j in trains:
            r = subprocess.run(["sacct", "-n", "-P", "-X", "-j", j, "-o", "JobIDRaw,State,Start,End"], env=env,
                               capture_output=True, text=True, timeout=60)
            parts = r.stdout.strip().split("|")
            if len(parts) == 4:
                rows[j] = parts
        print("sacct of the six trainings:\n  " + "\n  ".join("|".join(v) for v in rows.values()))
        starts = [v[2] for v in rows.values()]
        ends = [v[3] for v in rows.values()]
        check(len(rows) == 6 and all(v[1] == "COMPLETED" for v in rows.values()), "sacct: six trainings COMPLETED")
        check(len(rows) == 6 and max(starts) < min(ends),
              f"the six trainings overlap in time (latest start {max(starts, default='?')} < earliest end "
              f"{min(ends, default='?')})")

        check("batch script of toy_small initial checkpoint" in err_slurm and "#SBATCH --partition=debug" in err_slurm,
              "the batch script was shown before the first submission")
        first_submit = err_slurm.find("started job")
        check(0 <= err_slurm.find("#SBATCH --partition=debug") < first_submit,
              "... before anything was submitted")
        manifest = json.load(open(os.path.join(dest, "reports", "slurm", "manifest.json")))
        hosts = [e.get("command", {}).get("host", "") for e in manifest["entries"] if e.get("tool") == "run_training"]
        check(sorted(hosts) == sorted(f"slurm job {j} via local" for j in jobs), f"ledger hosts name the job ids: {hosts}")
        html_path = slurm.get("outputs", {}).get("html", "")
        html = open(html_path, encoding="utf-8").read() if html_path and os.path.exists(html_path) else ""
        check(html and all(f"slurm job {j} via local" in html for j in jobs), f"the HTML report names every job id ({html_path})")

        # A job outlives the parity process that submitted it.
        wt = os.path.join(dest, "restart-wt")
        subprocess.run(["git", "-C", repo, "worktree", "add", "--detach", wt, "main"], check=True, capture_output=True)
        report = os.path.join(dest, "reports", "restart")
        args = {"executor": "slurm", "worktree": wt, "launcher": "argv",
                "argv": ["bash", "-c", "sleep 3; echo finished"], "side": "baseline", "config": "restart",
                "wait": False, "probe_env": False}
        first = subprocess.run([parity, "call", "run_training", json.dumps(args), "--report-dir", report], env=env,
                               capture_output=True, text=True, timeout=120)
        job = json.loads(first.stdout).get("job", {}) if first.returncode == 0 else {}
        check(job.get("status") == "running" and job.get("slurm", {}).get("job_id"),
              f"parity call start (wait false) returns a running Slurm job: {first.stdout[-500:]}{first.stderr[-500:]}")
        second = subprocess.run([parity, "call", "run_training", json.dumps({"action": "wait", "job_id": job.get("id", "?")}),
                                 "--report-dir", report], env=env, capture_output=True, text=True, timeout=300)
        done = json.loads(second.stdout).get("job", {}) if second.stdout.strip().startswith("{") else {}
        check(done.get("status") == "ok" and done.get("slurm", {}).get("state") == "COMPLETED",
              f"another parity process follows it to its end: {second.stdout[-800:]}{second.stderr[-300:]}")

        check_bisect(dest, demo, repo, env)
        check_hunt(dest, demo, repo, env)
    finally:
        subprocess.run(["/usr/bin/python3", cluster_script, "stop", cluster], capture_output=True, timeout=300)
    if failures:
        print(f"{len(failures)} check(s) failed; kept {dest}")
        return 1
    subprocess.run(["rm", "-rf", dest])
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
