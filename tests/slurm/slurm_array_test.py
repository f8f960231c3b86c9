#!/usr/bin/env python3
"""docs/TEACHING.md's Slurm array recipe on a real Slurm: Debian's slurm-wlm and munge (installed
here if missing), a one-node cluster on localhost in a folder of the test's own (its munge key and
socket, its ports, its state), the recipe's script submitted with sbatch as written, the task
holding a submission that hangs cancelled with scancel, what it left read, that task run again
the documented way, and the shards merged and verified.

Needs root (slurmd runs each task as its user, and the grader's boxes need root); where Slurm is
neither installed nor installable, it says so and is skipped (exit 77).

    slurm_array_test.py CB-GRADE CB-LAB
"""
import csv
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PROJECT = os.path.normpath(os.path.join(HERE, "..", ".."))
SKIP = int(os.environ.get("CB_TEST_SKIP_CODE", "77"))
DAEMONS = ("munged", "slurmctld", "slurmd")
CLIENTS = ("sbatch", "squeue", "scancel", "sinfo")


def skip(why):
    print(f"slurm_array_test: skipped: {why}")
    sys.exit(SKIP)


def fail(why):
    sys.exit(f"slurm_array_test: {why}")


def find(program):
    return shutil.which(program) or next(
        (p for p in (f"/usr/sbin/{program}", f"/sbin/{program}") if os.access(p, os.X_OK)), None)


def ensure_slurm():
    """Debian's packages, installed the way an instructor would if they are missing."""
    if all(find(p) for p in DAEMONS + CLIENTS):
        return
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    install = ["apt-get", "install", "-y", "-q", "--no-install-recommends", "slurm-wlm", "munge"]
    r = subprocess.run(install, env=env, capture_output=True, text=True, timeout=900)
    if r.returncode != 0:  # the package lists may be missing on a fresh machine
        subprocess.run(["apt-get", "update", "-q"], env=env, capture_output=True, timeout=900)
        r = subprocess.run(install, env=env, capture_output=True, text=True, timeout=900)
    if r.returncode != 0:
        last = (r.stderr.strip().splitlines() or ["no output"])[-1]
        skip(f"slurm-wlm and munge are not installed and cannot be: {last}")
    missing = [p for p in DAEMONS + CLIENTS if not find(p)]
    if missing:
        skip(f"installed slurm-wlm and munge, but {', '.join(missing)} is not found")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def until(what, check, seconds):
    """Asks `check` until it answers something true; its answer. Each ask reads the cluster's state."""
    give_up = time.monotonic() + seconds
    while time.monotonic() < give_up:
        got = check()
        if got:
            return got
        time.sleep(0.2)  # between two readings of the cluster's state
    fail(f"gave up after {seconds} s waiting for {what}")


class Cluster:
    """munged, slurmctld and slurmd in the foreground, each a child of this test, stopped by pid."""

    def __init__(self, root):
        self.root = root
        self.procs = []
        munge = os.path.join(root, "munge")
        os.makedirs(munge, mode=0o700)
        os.chmod(root, 0o755)  # munged wants the socket's folder searchable by everyone
        key = os.path.join(munge, "munge.key")
        with open(key, "wb") as f:
            f.write(os.urandom(1024))
        os.chmod(key, 0o400)
        self.socket = os.path.join(munge, "socket")
        self.start([find("munged"), "--foreground", "--force", f"--socket={self.socket}", f"--key-file={key}",
                    f"--log-file={munge}/log", f"--pid-file={munge}/pid", f"--seed-file={munge}/seed"], "munged")
        until("munged's socket", lambda: os.path.exists(self.socket), 30)
        for d in ("state", "spool", "log"):
            os.makedirs(os.path.join(root, d))
        self.conf = os.path.join(root, "slurm.conf")
        with open(self.conf, "w") as f:
            f.write(self.config())
        self.env = dict(os.environ, SLURM_CONF=self.conf)
        self.start([find("slurmctld"), "-D", "-f", self.conf], "slurmctld")
        self.start([find("slurmd"), "-D", "-N", "cbnode", "-f", self.conf], "slurmd")
        until("the node to be idle", lambda: self.out(["sinfo", "-h", "-n", "cbnode", "-o", "%T"]).strip() == "idle", 60)

    def config(self):
        cpus = os.cpu_count() or 1
        with open("/proc/meminfo") as f:
            total_mib = int(re.search(r"MemTotal:\s+(\d+) kB", f.read()).group(1)) // 1024
        memory = total_mib * 9 // 10
        r = self.root
        return "\n".join([
            "ClusterName=cblab",
            f"SlurmctldHost={socket.gethostname().split('.')[0]}(127.0.0.1)",
            f"SlurmctldPort={free_port()}",
            f"SlurmdPort={free_port()}",
            "AuthType=auth/munge",
            f"AuthInfo=socket={self.socket}",
            "CredType=cred/munge",
            "SlurmUser=root",
            f"StateSaveLocation={r}/state",
            f"SlurmdSpoolDir={r}/spool",
            f"SlurmctldPidFile={r}/slurmctld.pid",
            f"SlurmdPidFile={r}/slurmd.pid",
            f"SlurmctldLogFile={r}/log/slurmctld.log",
            f"SlurmdLogFile={r}/log/slurmd.log",
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "JobAcctGatherType=jobacct_gather/none",
            "AccountingStorageType=accounting_storage/none",
            "JobCompType=jobcomp/none",
            "MpiDefault=none",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_CPU_Memory",
            f"DefMemPerCPU={memory // cpus}",
            "ReturnToService=2",
            "MinJobAge=600",
            f"NodeName=cbnode NodeAddr=127.0.0.1 NodeHostname={socket.gethostname()} CPUs={cpus} "
            f"RealMemory={memory} State=UNKNOWN",
            "PartitionName=cb Nodes=cbnode Default=YES MaxTime=INFINITE State=UP",
        ]) + "\n"

    def start(self, argv, name):
        log = open(os.path.join(self.root, f"{name}.out"), "w")
        self.procs.append((name, subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)))

    def out(self, argv, cwd=None):
        r = subprocess.run(argv, cwd=cwd, env=self.env, capture_output=True, text=True, timeout=120)
        return r.stdout if r.returncode == 0 else ""

    def run(self, argv, cwd, env=None):
        r = subprocess.run(argv, cwd=cwd, env=env or self.env, capture_output=True, text=True, timeout=900)
        if r.returncode != 0:
            fail(f"{' '.join(argv)}: exit {r.returncode}\n{r.stdout[-2000:]}{r.stderr[-2000:]}")
        return r

    def state(self, job):
        """The states of an array's tasks still known to squeue: {task: state}."""
        text = self.out(["squeue", "-h", "-r", "-j", job, "-o", "%i %T"])
        return dict(line.split()[:2] for line in text.splitlines() if line.strip())

    def logs(self):
        out = []
        for name in ("slurmctld.log", "slurmd.log"):
            path = os.path.join(self.root, "log", name)
            if os.path.exists(path):
                out.append(f"--- {name}\n" + "".join(open(path).readlines()[-30:]))
        return "\n".join(out)

    def stop(self):
        for _, p in reversed(self.procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for _, p in reversed(self.procs):
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def rows(path):
    with open(path, newline="") as f:
        return {row["submission"]: row for row in csv.DictReader(f)}


def recipe():
    """TEACHING.md's Slurm script (the block under its marker) and the index its re-run names."""
    teaching = open(os.path.join(PROJECT, "docs", "TEACHING.md")).read()
    m = re.search(r"<!-- teaching-test: slurm -->\n```sh\n(.*?)```", teaching, re.S)
    if not m:
        fail("TEACHING.md: no block marked teaching-test: slurm")
    again = re.search(r"`sbatch --array=(\d+) grade\.sh`", teaching)
    if not again:
        fail("TEACHING.md: the re-run of one index (`sbatch --array=I grade.sh`) is not said")
    return m.group(1), again.group(0).strip("`")


def main():
    grade, lab = (os.path.realpath(a) for a in sys.argv[1:3])
    if os.geteuid() != 0:
        skip("needs root: slurmd runs each task as its user, and the grader's boxes need root")
    ensure_slurm()
    work = tempfile.mkdtemp(prefix="cb-slurm-")
    cluster = None
    try:
        cluster = Cluster(os.path.join(work, "cluster"))
        graded(cluster, os.path.join(work, "class"), grade, lab)
    except SystemExit:
        if cluster:
            print(cluster.logs(), file=sys.stderr)
        raise
    finally:
        if cluster:
            cluster.stop()
        shutil.rmtree(work, ignore_errors=True)


def allocation(cluster, work, env, names):
    """A task of one CPU (the machine has more): -j from the task's allocation, said in its log."""
    small = os.path.join(work, "small")
    os.makedirs(small)
    shutil.copytree(os.path.join(work, "subs", names[0]), os.path.join(small, names[0]))
    cluster.run(["sbatch", "--wait", "--cpus-per-task=1", "--mem=4G", "-o", "small.out", "--wrap",
                 "cb-grade --batch small -o small.csv || [ $? -eq 1 ]"], work, env)
    first_line = open(os.path.join(work, "small.out")).readline()
    if "(-j 4: 4 per CPU of the 1 " not in first_line:
        fail(f"a task of one CPU: expected -j 4 from its allocation, its log says: {first_line}")


def graded(cluster, work, grade, lab):
    os.makedirs(work)
    # A class with one submission that hangs until the time limit: its task is still at work when
    # it is cancelled.
    subprocess.run([sys.executable, os.path.join(PROJECT, "bench", "class", "make_class.py"), os.path.join(work, "subs"),
                    "--cb-lab", lab, "--one-each", "--kinds", "right,gt,empty,hang", "--langs", "python"],
                   check=True, stdout=subprocess.DEVNULL)
    expected = json.load(open(os.path.join(work, "subs.expected.json")))
    os.remove(os.path.join(work, "subs.expected.json"))
    teaching = open(os.path.join(PROJECT, "docs", "TEACHING.md")).read()
    rubric = re.search(r"<!-- teaching-test: rubric.json -->\n```json\n(.*?)```", teaching, re.S).group(1)
    open(os.path.join(work, "rubric.json"), "w").write(rubric)
    script, rerun = recipe()
    open(os.path.join(work, "grade.sh"), "w").write(script)
    first, last = map(int, re.search(r"^#SBATCH --array=(\d+)-(\d+)$", script, re.M).groups())
    count = last - first + 1
    names = sorted(expected)
    hang = next(n for n in names if expected[n]["kind"] == "hang")
    held = first + names.index(hang) % count  # the shard, and so the task, that grades it

    # cb-grade on the PATH of the task: sbatch hands the task the caller's environment.
    bin_dir = os.path.join(work, ".bin")
    os.makedirs(bin_dir)
    os.symlink(grade, os.path.join(bin_dir, "cb-grade"))
    env = dict(cluster.env, PATH=bin_dir + ":" + os.environ.get("PATH", "/usr/bin:/bin"))
    job = cluster.run(["sbatch", "--parsable", "grade.sh"], work, env).stdout.strip().split(";")[0]
    task = f"{job}_{held}"
    until(f"task {task} to start grading",
          lambda: cluster.state(job).get(task) == "RUNNING" and os.path.isdir(os.path.join(work, "shards", str(held))),
          300)
    cluster.run(["scancel", task], work)
    until(f"array {job} to end", lambda: not cluster.state(job), 600)

    # What the cancelled task left: its gradebook, the hanging submission in it not graded.
    cancelled = os.path.join(work, "shards", f"{held}.csv")
    if not os.path.exists(cancelled):
        fail(f"scancel left no gradebook {cancelled}: SIGTERM is to write what was graded")
    left = rows(cancelled)
    if left.get(hang, {}).get("status") != "not_graded":
        fail(f"the cancelled task's gradebook does not say {hang} is not_graded: {left}")
    # The other tasks ran whole.
    for other in range(first, last + 1):
        if other != held:
            book = rows(os.path.join(work, "shards", f"{other}.csv"))
            assert all(r["status"] in ("graded", "empty") for r in book.values()), (other, book)

    # Merged now, the class is not whole: exit 3, not the 1 of a student who failed.
    shards = [os.path.join("shards", str(i)) for i in range(first, last + 1)]
    early = subprocess.run([grade, "merge", *shards, "--rubric", "rubric.json", "--reports", "early", "-o", "early.csv"],
                           cwd=work, capture_output=True, text=True, timeout=600)
    if early.returncode != 3 or hang not in early.stderr:
        fail(f"merge of a class not whole: exit {early.returncode}, expected 3 naming {hang}\n{early.stderr[-2000:]}")

    # Run again the documented way, with the cancelled task's index. Its first line says the -j it
    # took from the task's allocation.
    again = re.sub(r"--array=\d+", f"--array={held}", rerun).split()
    rerun_job = cluster.run(again[:1] + ["--wait", "--parsable"] + again[1:], work, env).stdout.strip().split(";")[0]
    said = open(os.path.join(work, f"slurm-{rerun_job}_{held}.out")).read()
    if not re.match(r"cb-grade: \d+ submissions?, \d+ at a time \(-j \d+: ", said):
        fail(f"the re-run's log does not begin with the -j it took:\n{said[:2000]}")
    merged = subprocess.run([grade, "merge", *shards, "--rubric", "rubric.json", "--reports", "merged", "-o",
                             "merged.csv"], cwd=work, capture_output=True, text=True, timeout=600)
    if merged.returncode != 1:  # 1: some students failed; a missing shard would be another exit
        fail(f"merge: exit {merged.returncode}, expected 1 (failing students)\n{merged.stderr[-2000:]}")
    book = rows(os.path.join(work, "merged.csv"))
    assert set(book) == set(expected), book.keys()
    for name, want in expected.items():
        got = book[name]
        assert got["status"] == ("empty" if want["kind"] == "empty" else "graded"), (name, got)
        if want["kind"] != "empty":
            assert got["conformance"] == want["conformance"], (name, got)
    verified = subprocess.run([grade, "verify", "merged", "--rubric", "rubric.json", "--gradebook", "merged.csv"], cwd=work,
                              capture_output=True, text=True, timeout=600)
    if verified.returncode != 0:
        fail(f"verify: exit {verified.returncode}\n{verified.stdout[-2000:]}{verified.stderr[-2000:]}")
    allocation(cluster, work, env, names)
    print(f"slurm_array_test: {len(book)} submissions over {count} array tasks on a real Slurm; task {held} "
          f"cancelled, run again with `{' '.join(again)}`, merged and verified")


if __name__ == "__main__":
    main()
