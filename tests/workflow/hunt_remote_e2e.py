#!/usr/bin/python3
"""`parity hunt` with remote (SSH) sides and with two different repositories, end to end:
a real sshd on a loopback port (its own host key, key authentication, its own known_hosts),
the demo repository (examples/make-demo-repo), the real toy trainer at a few steps.

The SSH host is this same machine: the demo repository's path is handed to parity only as a
remote code_path (and the msprobe folders only as remote folders); what parity did over SSH
is checked from the ledger (every training's host) and hunt.json.

  without --yes      exit 2: the test tree's uncommitted file listed, nothing made on the host
  both sides remote, numerics/gelu-tanh   exit 1, "inputs equal, output differs" at the planted
                     file:line with the planted hunk; the remote worktrees are gone afterwards;
                     the revert of every remote injected file was verified on the host by SHA-256
                     (hunt.json "restored"); the user's tree unchanged (every file's hash, git
                     status, the index's mtime); the password (given in the config together with
                     a key, so the login is by key) nowhere in stdout, stderr, hunt.json or ledger
  both sides remote, refactor/move-helpers  exit 0, "no divergence", remote worktrees gone
  baseline local, test remote (--keep-worktrees)  the same answer; each kept remote worktree's
                     injected files equal their originals byte for byte, no probe helper left
  two repositories (a clone of the demo repository as the baseline, local)  the same answer

    hunt_remote_e2e.py PARITY_BINARY REPO_ROOT
"""
import json
import os
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hunt_e2e import PASSWORD, STEPS, fail, hunt, no_password_in, sha256, tree_state  # noqa: E402


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Sshd:
    """/usr/sbin/sshd -D on a free loopback port, as tests/run/sshd_fixture.cpp starts it."""

    def __init__(self, folder):
        self.dir = folder
        os.makedirs("/run/sshd", exist_ok=True)
        for name, comment in (("host_key", "parity-e2e-host"), ("user_key", "parity-e2e-user")):
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f",
                            os.path.join(folder, name)], check=True)
        with open(os.path.join(folder, "user_key.pub")) as f, open(os.path.join(folder, "authorized_keys"), "w") as out:
            out.write(f.read())
        self.port = free_port()
        self.log = os.path.join(folder, "sshd.log")
        config = os.path.join(folder, "sshd_config")
        with open(config, "w") as f:
            f.write(f"Port {self.port}\nListenAddress 127.0.0.1\nHostKey {folder}/host_key\n"
                    f"AuthorizedKeysFile {folder}/authorized_keys\nPidFile {folder}/sshd.pid\n"
                    "StrictModes no\nPermitRootLogin yes\nPasswordAuthentication no\n"
                    "KbdInteractiveAuthentication no\nUsePAM no\nLogLevel VERBOSE\n")
        self.known_hosts = os.path.join(folder, "known_hosts")
        with open(os.path.join(folder, "host_key.pub")) as f, open(self.known_hosts, "w") as out:
            out.write(f"[127.0.0.1]:{self.port} {f.read()}")
        self.proc = subprocess.Popen(["/usr/sbin/sshd", "-D", "-e", "-f", config, "-E", self.log])
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.05)
        fail("sshd did not start: " + open(self.log).read())

    def ssh_block(self):
        return {"host": "127.0.0.1", "username": "root", "port": self.port, "password": PASSWORD,
                "identity_file": os.path.join(self.dir, "user_key"), "known_hosts": self.known_hosts}

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=10)


def write_config(dest, name, baseline, test):
    """baseline/test: (mode, code_path, ref, ssh or None); the dump folders are the run's own."""
    dumps = os.path.join(dest, "msprobe", name)
    script = ("bash scripts/run_train.sh --module toy --config toy_small --training.steps {steps} --debug.seed=42 "
              "--debug.deterministic --training.dataset_path=data/corpus.txt --dump.dir {dump} --dump.level mix "
              "--dump.mode statistics --dump.step 0")
    config = {"msprobe": {"baseline_data_dir": os.path.join(dumps, "baseline"),
                          "test_data_dir": os.path.join(dumps, "test")},
              "debug": {"max_iterations": 3, "tolerance": 0}}
    for key, (mode, code_path, ref, ssh) in (("baseline", baseline), ("test", test)):
        side = {"mode": mode, "code_path": code_path, "ref": ref,
                "run_script": script.format(steps=STEPS, dump=config["msprobe"][f"{key}_data_dir"])}
        if ssh:
            side["ssh"] = ssh
        config[key] = side
    path = os.path.join(dest, f"config-{name}.json")
    with open(path, "w") as f:
        json.dump(config, f, indent=2)
    return path


def user_state(repo):
    return tree_state(repo), os.stat(os.path.join(repo, ".git", "index")).st_mtime_ns


def worktrees_of(repo):
    out = subprocess.run(["git", "-C", repo, "worktree", "list", "--porcelain"], capture_output=True, text=True,
                         check=True).stdout
    return [line[9:] for line in out.splitlines() if line.startswith("worktree ")]


def check_located(label, code, out, err, truth):
    planted = truth["branches"]["numerics/gelu-tanh"]["planted_change"]
    if code != 1 or out.get("verdict") != "inputs equal, output differs":
        fail(f"{label}: exit {code}, verdict {out.get('verdict')!r}: {out.get('explanation') or out.get('error')}\n{err}")
    located = out["located"]
    if (located["file"], located["line"]) != (planted["file"], planted["line"]):
        fail(f"{label}: located {located['file']}:{located['line']}, planted {planted['file']}:{planted['line']}")
    hunk = [line[1:].strip() for line in located["hunk"]["lines"]]
    if hunk != [planted["before"], planted["after"]]:
        fail(f"{label}: hunk {located['hunk']['lines']} is not the planted change")


def write_policy(config_home, port):
    """The test user's policy.json with the loopback sshd added, as XDG_CONFIG_HOME for parity."""
    base = os.path.join(os.environ.get("XDG_CONFIG_HOME", ""), "parity", "policy.json")
    policy = {"folders": []}
    if os.path.isfile(base):
        with open(base) as f:
            policy = json.load(f)
    policy["ssh_hosts"] = [{"host": "127.0.0.1", "port": port, "user": "root"}]
    os.makedirs(os.path.join(config_home, "parity"))
    fd = os.open(os.path.join(config_home, "parity", "policy.json"), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump(policy, f)
    os.environ["XDG_CONFIG_HOME"] = config_home


def load_hunt(report):
    with open(os.path.join(report, "hunt", "hunt.json")) as f:
        return json.load(f)["hunt"]


def check_ssh_was_used(label, report, host_desc, sides):
    with open(os.path.join(report, "manifest.json")) as f:
        ledger = json.load(f)
    hosts = {e.get("side"): e.get("command", {}).get("host") for e in ledger["entries"]
             if e["tool"] == "run_training"}
    for side in sides:
        if hosts.get(side) != host_desc:
            fail(f"{label}: the {side} training did not run over SSH on {host_desc}: {hosts}")


def check_remote_restored(label, loop, remote_sides):
    """Every injected file of a remote side: restored on the host and checked there by SHA-256."""
    originals = {}
    for it in loop["iterations"]:
        for side, injected in it["injected"].items():
            for f in injected["files"]:
                originals[(side, f["path"])] = f["sha256_original"]
    checked = 0
    for r in loop["restored"]:
        remote = r.get("remote")
        if not remote:
            continue
        if "sha256sum on the host" not in remote.get("verified", ""):
            fail(f"{label}: remote revert not verified: {r}")
        for f in remote["files"]:
            side = next(s for s, w in loop["worktrees"].items() if w == r["worktree"])
            if f["sha256"] != originals.get((side, f["path"])):
                fail(f"{label}: {remote['worktree']}/{f['path']} restored to {f['sha256']}, "
                     f"original {originals.get((side, f['path']))}")
            checked += 1
    sides = {s for s, w in loop["worktrees"].items()
             for r in loop["restored"] if r.get("remote") and r["worktree"] == w}
    if sides != set(remote_sides) or checked < len(remote_sides):
        fail(f"{label}: remote reverts recorded for {sides}, expected {remote_sides} ({checked} files)")
    return checked


def main():
    parity, root = sys.argv[1], sys.argv[2]
    # The test's own `git status` must not refresh the user's index either: its mtime is checked.
    os.environ["GIT_OPTIONAL_LOCKS"] = "0"
    started = time.time()
    with tempfile.TemporaryDirectory(prefix="parity-hunt-remote-e2e-") as dest:
        subprocess.run([os.path.join(root, "examples", "make-demo-repo"), dest, "--steps", str(STEPS)], check=True,
                       capture_output=True)
        with open(os.path.join(dest, "ground_truth.json")) as f:
            truth = json.load(f)
        repo = truth["repo"]  # on the "remote" host: only ever given to parity as a remote path
        sshd_dir = os.path.join(dest, "sshd")
        os.makedirs(sshd_dir)
        sshd = Sshd(sshd_dir)
        host_desc = f"root@127.0.0.1:{sshd.port}"
        # The user's policy names the SSH host (a host in a config file alone is not consent);
        # the rest of the test suite's policy is kept.
        write_policy(os.path.join(dest, "config"), sshd.port)
        try:
            before = user_state(repo)
            remote = lambda ref: ("remote", repo, ref, sshd.ssh_block())

            # Without --yes the test tree's uncommitted infra change is listed and nothing is made.
            config = write_config(dest, "consent", remote("main"), remote("numerics/gelu-tanh"))
            p = subprocess.run([parity, "hunt", "--config", config, "--report-dir", os.path.join(dest, "report-consent")],
                               capture_output=True, text=True, timeout=300)
            refused = json.loads(p.stdout).get("error", {})
            if p.returncode != 2 or "--yes" not in refused.get("hint", "") or \
                    "scripts/run_train.sh" not in json.dumps(refused.get("evidence")):
                fail(f"consent: exit {p.returncode}, {p.stdout}\n{p.stderr}")
            if worktrees_of(repo) != [repo] or PASSWORD in p.stdout + p.stderr:
                fail(f"consent: worktrees made before consent: {worktrees_of(repo)}")
            print(f"consent: refused without --yes: {refused['message'][:100]}")

            # Both sides remote: the planted line; the remote worktrees go; reverts verified there.
            report = os.path.join(dest, "report-remote")
            code, out, err = hunt(parity, write_config(dest, "remote", remote("main"), remote("numerics/gelu-tanh")), report)
            check_located("remote", code, out, err, truth)
            loop = load_hunt(report)
            check_ssh_was_used("remote", report, host_desc, ["baseline", "candidate"])
            restored = check_remote_restored("remote", loop, ["baseline", "candidate"])
            if set(loop["remote_worktrees"]) != {"baseline", "candidate"}:
                fail(f"remote: remote worktrees {loop['remote_worktrees']}")
            for side, w in loop["remote_worktrees"].items():
                if w["host"] != host_desc or os.path.exists(w["path"]):
                    fail(f"remote: the {side} remote worktree {w} is left")
            if worktrees_of(repo) != [repo]:
                fail(f"remote: worktrees left registered in the user's repository: {worktrees_of(repo)}")
            fetched = loop["fetched"]
            if not all(any(f["local"].endswith("dump.json") for f in fetched[s]) for s in ("baseline", "candidate")):
                fail(f"remote: no dump.json fetched: {fetched}")
            if loop["shadow"]["origin"]["test"]["host"] != host_desc:
                fail(f"remote: the shadow's origin is not the SSH host: {loop['shadow']}")
            no_password_in(report)
            print(f"remote: {out['verdict']} at {out['located']['file']}:{out['located']['line']}, {restored} remote "
                  f"file(s) restored and checked on the host ({time.time() - started:.0f} s)")

            report = os.path.join(dest, "report-remote-refactor")
            code, out, err = hunt(parity, write_config(dest, "refactor", remote("main"), remote("refactor/move-helpers")),
                                  report)
            if code != 0 or out.get("verdict") != "no divergence":
                fail(f"refactor: exit {code}, verdict {out.get('verdict')!r}\n{err}")
            if worktrees_of(repo) != [repo]:
                fail(f"refactor: worktrees left: {worktrees_of(repo)}")
            no_password_in(report)
            print(f"refactor (remote): {out['verdict']} ({time.time() - started:.0f} s)")

            # Mixed: the baseline here, the test over SSH; the kept remote worktree checked by bytes.
            report = os.path.join(dest, "report-mixed")
            local_clone = os.path.join(dest, "local-clone")
            subprocess.run(["git", "clone", "-q", "--no-local", repo, local_clone], check=True)
            code, out, err = hunt(parity, write_config(dest, "mixed", ("local", local_clone, "origin/main", None),
                                                       remote("numerics/gelu-tanh")), report, "--keep-worktrees")
            check_located("mixed", code, out, err, truth)
            loop = load_hunt(report)
            check_ssh_was_used("mixed", report, host_desc, ["candidate"])
            check_remote_restored("mixed", loop, ["candidate"])
            kept = loop["remote_worktrees"]["candidate"]["path"]
            for it in loop["iterations"]:
                for f in it["injected"]["candidate"]["files"]:
                    if sha256(os.path.join(kept, f["path"])) != f["sha256_original"]:
                        fail(f"mixed: {kept}/{f['path']} differs from its original")
            if os.path.exists(os.path.join(kept, "_parity_probe.py")):
                fail(f"mixed: the probe helper is left in {kept}")
            subprocess.run(["git", "-C", repo, "worktree", "remove", "--force", kept], check=True)
            no_password_in(report)
            print(f"mixed: {out['verdict']} ({time.time() - started:.0f} s)")

            # Two repositories, both local: a clone of the demo repository as the baseline.
            report = os.path.join(dest, "report-two-repos")
            code, out, err = hunt(parity, write_config(dest, "two", ("local", local_clone, "origin/main", None),
                                                       ("local", repo, "numerics/gelu-tanh", None)), report)
            check_located("two repositories", code, out, err, truth)
            if "shadow" not in load_hunt(report):
                fail("two repositories: no shadow repository recorded")
            print(f"two repositories: {out['verdict']} ({time.time() - started:.0f} s)")

            after = user_state(repo)
            if after != before:
                (files0, *git0), mtime0 = before
                (files1, *git1), mtime1 = after
                changed = sorted(k for k in set(files0) | set(files1) if files0.get(k) != files1.get(k))
                fail(f"the user's tree changed: files {changed}, git {git0} -> {git1}, index mtime {mtime0} -> {mtime1}")
        finally:
            sshd.stop()
    print("ok")


if __name__ == "__main__":
    main()
