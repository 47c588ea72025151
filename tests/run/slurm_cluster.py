#!/usr/bin/python3
"""A real one-node Slurm cluster on loopback, for the tests, entirely inside one folder.

  slurm_cluster.py start DIR [--cpus N]   starts munged (own key and socket), MariaDB and
                                          slurmdbd (so sacct has an accounting record),
                                          slurmctld and slurmd (node n1, N CPUs as
                                          consumable resources: several jobs run at once);
                                          prints SLURM_CONF=DIR/slurm.conf
  slurm_cluster.py stop DIR               cancels the cluster's jobs and stops every daemon
                                          it started (by the pid files in DIR); idempotent

Every port is a free ephemeral one on 127.0.0.1 and every path is under DIR, so several
clusters (other tests, other checkouts) run side by side on one machine; nothing is read
from or written to /etc/slurm, /run/munge or a system MariaDB. A daemon that does not come
up stops `start` with its log's last lines and everything already started is stopped.
"""
import os
import signal
import socket
import subprocess
import sys
import time

BINARIES = ["munged", "mungekey", "mariadb-install-db", "mariadbd", "mariadb", "slurmdbd", "sacctmgr",
            "slurmctld", "slurmd", "sbatch", "squeue", "sacct", "scontrol", "scancel", "sinfo"]
SBIN = ["/usr/sbin", "/usr/bin", "/sbin", "/bin"]
# Stopped in this order: the node first, the database last.
DAEMONS = ["slurmd", "slurmctld", "slurmdbd", "mariadbd", "munged"]


def which(name):
    for d in os.environ.get("PATH", "").split(":") + SBIN:
        p = os.path.join(d, name)
        if d and os.access(p, os.X_OK):
            return p
    return None


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def tail(path, n=25):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-n:])
    except OSError as e:
        return f"({path}: {e})"


class Failure(Exception):
    pass


def run(argv, env=None, **kw):
    r = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120, **kw)
    if r.returncode != 0:
        raise Failure(f"{' '.join(argv)} exited {r.returncode}:\n{r.stdout}{r.stderr}")
    return r.stdout


def wait_for(what, check, log, seconds=60):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if check():
            return
        time.sleep(0.2)
    raise Failure(f"{what} did not come up within {seconds} s; {log}:\n{tail(log)}")


def listening(port):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False


def start(d, cpus):
    missing = [b for b in BINARIES if not which(b)]
    if missing:
        raise Failure("missing " + ", ".join(missing) +
                      ": run scripts/install-deps (slurmctld slurmd slurmdbd slurm-client munge mariadb-server)")
    d = os.path.abspath(d)
    for sub in ["munge", "db", "state", "spool", "log", "run"]:
        os.makedirs(os.path.join(d, sub), exist_ok=True)
    host = socket.gethostname().split(".")[0]
    env = dict(os.environ, SLURM_CONF=os.path.join(d, "slurm.conf"))
    sock = os.path.join(d, "munge", "munge.sock")

    key = os.path.join(d, "munge", "munge.key")
    run([which("mungekey"), "-c", "-k", key, "-b", "1024"])
    os.chmod(key, 0o600)
    run([which("munged"), f"--key-file={key}", f"--socket={sock}", f"--pid-file={d}/run/munged.pid",
         f"--log-file={d}/log/munged.log", f"--seed-file={d}/munge/seed", "--force"])
    wait_for("munged", lambda: os.path.exists(sock), f"{d}/log/munged.log", 20)

    db_port = free_port()
    db_sock = os.path.join(d, "db", "sock")
    run([which("mariadb-install-db"), "--no-defaults", f"--datadir={d}/db/data", "--user=root",
         "--auth-root-authentication-method=normal", "--skip-test-db"])
    with open(f"{d}/log/mariadbd.out", "w") as out:
        subprocess.Popen([which("mariadbd"), "--no-defaults", f"--datadir={d}/db/data", "--user=root",
                          "--bind-address=127.0.0.1", f"--port={db_port}", f"--socket={db_sock}",
                          f"--pid-file={d}/run/mariadbd.pid", f"--log-error={d}/log/mariadbd.log",
                          "--innodb-buffer-pool-size=64M", "--innodb-lock-wait-timeout=900"],
                         stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
    wait_for("MariaDB", lambda: os.path.exists(db_sock) and listening(db_port), f"{d}/log/mariadbd.log", 60)
    sql = ("CREATE USER 'slurm'@'127.0.0.1' IDENTIFIED BY 'parity-test'; "
           "GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';")
    run([which("mariadb"), "--no-defaults", "-S", db_sock, "-uroot", "-e", sql])

    dbd_port, ctld_port, slurmd_port = free_port(), free_port(), free_port()
    with open(os.path.join(d, "slurmdbd.conf"), "w") as f:
        f.write(f"""AuthType=auth/munge
AuthInfo=socket={sock}
DbdHost={host}
DbdAddr=127.0.0.1
DbdPort={dbd_port}
SlurmUser=root
LogFile={d}/log/slurmdbd.log
PidFile={d}/run/slurmdbd.pid
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort={db_port}
StorageUser=slurm
StoragePass=parity-test
StorageLoc=slurm_acct_db
""")
    os.chmod(os.path.join(d, "slurmdbd.conf"), 0o600)
    with open(os.path.join(d, "slurm.conf"), "w") as f:
        f.write(f"""ClusterName=paritytest
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={sock}
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool/%n
SlurmctldPidFile={d}/run/slurmctld.pid
SlurmdPidFile={d}/run/slurmd.pid
SlurmctldLogFile={d}/log/slurmctld.log
SlurmdLogFile={d}/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
AccountingStoragePort={dbd_port}
AccountingStoragePass={sock}
JobCompType=jobcomp/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
ReturnToService=2
MpiDefault=none
MinJobAge=600
KillWait=5
InactiveLimit=0
NodeName=n1 NodeAddr=127.0.0.1 NodeHostname={host} CPUs={cpus} RealMemory=4000 State=UNKNOWN
PartitionName=debug Nodes=n1 Default=YES MaxTime=INFINITE State=UP
""")
    run([which("slurmdbd")], env=env)
    wait_for("slurmdbd", lambda: listening(dbd_port), f"{d}/log/slurmdbd.log", 60)
    end = time.monotonic() + 30
    while True:  # slurmdbd answers a moment after it listens
        r = subprocess.run([which("sacctmgr"), "-i", "add", "cluster", "paritytest"], env=env,
                           capture_output=True, text=True, timeout=60)
        if r.returncode == 0 or "already exists" in r.stdout + r.stderr:
            break
        if time.monotonic() > end:
            raise Failure(f"sacctmgr add cluster failed:\n{r.stdout}{r.stderr}\n{tail(d + '/log/slurmdbd.log')}")
        time.sleep(0.5)
    run([which("slurmctld"), "-f", env["SLURM_CONF"]], env=env)
    wait_for("slurmctld", lambda: listening(ctld_port), f"{d}/log/slurmctld.log", 60)
    run([which("slurmd"), "-f", env["SLURM_CONF"], "-N", "n1"], env=env)

    def idle():
        r = subprocess.run([which("sinfo"), "-h", "-n", "n1", "-o", "%T"], env=env, capture_output=True, text=True)
        return r.stdout.strip() == "idle"
    wait_for("node n1 (slurmd)", idle, f"{d}/log/slurmd.log", 90)
    print(f"SLURM_CONF={env['SLURM_CONF']}")


def alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def stop(d):
    d = os.path.abspath(d)
    conf = os.path.join(d, "slurm.conf")
    if os.path.exists(conf) and os.path.exists(f"{d}/run/slurmctld.pid") and which("scancel"):
        env = dict(os.environ, SLURM_CONF=conf)
        subprocess.run([which("scancel"), "--full", "-u", "root"], env=env, capture_output=True, timeout=30)
        end = time.monotonic() + 20
        while time.monotonic() < end:
            r = subprocess.run([which("squeue"), "-h", "-o", "%i"], env=env, capture_output=True, text=True,
                               timeout=30)
            if r.returncode != 0 or not r.stdout.strip():
                break
            time.sleep(0.3)
    for name in DAEMONS:
        path = f"{d}/run/{name}.pid"
        try:
            pid = int(open(path).read().split()[0])
        except (OSError, ValueError, IndexError):
            continue
        if pid <= 1 or not alive(pid):
            continue
        os.kill(pid, signal.SIGTERM)
        end = time.monotonic() + 15
        while alive(pid) and time.monotonic() < end:
            time.sleep(0.1)
        if alive(pid):
            os.kill(pid, signal.SIGKILL)


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in ("start", "stop"):
        print(__doc__, file=sys.stderr)
        return 2
    cmd, d = sys.argv[1], sys.argv[2]
    cpus = 8
    if "--cpus" in sys.argv:
        cpus = int(sys.argv[sys.argv.index("--cpus") + 1])
    if cmd == "stop":
        stop(d)
        return 0
    try:
        start(d, cpus)
    except (Failure, subprocess.TimeoutExpired, OSError) as e:
        print(f"slurm_cluster.py: cannot start the test cluster: {e}", file=sys.stderr)
        stop(d)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
