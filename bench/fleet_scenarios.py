"""The fleet's figures with real processes: bench/run-fleet-bench PART runs one part.

Every part starts a redis-server of its own on a unix socket in a temporary directory and
`cb-lab fleet-member` processes (build/release), and prints what it measured. The member prints
a JSON line per trial as it sends it ({"trial": {t_ms, generation, local, down}}) and one with
its counts at the end.
"""
import atexit
import collections
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

CB_LAB = os.path.abspath("build/release/src/cli/cb-lab")
FAKETIME = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1"


class Redis:
    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="cb-fleet-bench-")
        self.sock = os.path.join(self.dir, "redis.sock")
        self.start()

    def start(self):
        # Stopped by pid at the end even when a part fails half-way (a traceback).
        atexit.register(self.stop)
        self.proc = subprocess.Popen(
            ["redis-server", "--port", "0", "--unixsocket", self.sock, "--save", "", "--appendonly", "no",
             "--logfile", "", "--dir", self.dir], stdout=subprocess.PIPE, text=True)
        for line in self.proc.stdout:
            if "eady to accept connections" in line:
                break
        threading.Thread(target=lambda out=self.proc.stdout: [None for _ in out], daemon=True).start()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGCONT)
            self.proc.kill()
        self.proc.wait()

    def cli(self, *args):
        return subprocess.run(["redis-cli", "-s", self.sock, *args], capture_output=True, text=True).stdout

    def fcalls(self):
        for line in self.cli("INFO", "commandstats").splitlines():
            if line.startswith("cmdstat_fcall:"):
                return int(line.split("calls=")[1].split(",")[0])
        return 0

    @property
    def address(self):
        return "unix://" + self.sock


class Events:
    """The fleet's state changes as Redis publishes them, stamped on arrival (CLOCK_MONOTONIC)."""

    def __init__(self, redis, name):
        self.proc = subprocess.Popen(["redis-cli", "-s", redis.sock, "SUBSCRIBE", "{cb:%s}:events" % name],
                                     stdout=subprocess.PIPE, text=True)
        self.events = []
        self.ready = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()
        self.ready.wait(5)

    def _read(self):
        lines = []
        for line in self.proc.stdout:
            lines.append(line.strip())
            if len(lines) >= 3 and lines[-3] == "subscribe":
                self.ready.set()
            if len(lines) >= 3 and lines[-3] == "message":
                state, gen, left = lines[-1].split()
                self.events.append((time.monotonic(), state, int(gen), int(left)))

    def stop(self):
        self.proc.kill()
        self.proc.wait()


def members(n, redis, name, run_us, every_us, cooldown_us, permits=1, down_us=None, down_from_us=0,
            extra=None, env=None, start_in=False, report_us=50000, lease_us=None, degrade_us=500000):
    start_us = int(time.monotonic() * 1e6) + 700000
    procs = []
    for i in range(n):
        args = [CB_LAB, "fleet-member", "--shared", redis.address, "--name", name, "--instance", "m%d" % i,
                "--first-us", str(i * 100), "--down-from-us", str(down_from_us),
                "--down-us", str(run_us if down_us is None else down_us), "--run-us", str(run_us),
                "--every-us", str(every_us(i) if callable(every_us) else every_us), "--cooldown-us", str(cooldown_us), "--permits", str(permits),
                "--report-every-us", str(report_us), "--lease-us", str(lease_us or 3 * cooldown_us),
                "--degrade-after-us", str(degrade_us)]
        args += ["--start-in-us", "700000"] if start_in else ["--start-us", str(start_us)]
        args += (extra(i) if extra else [])
        e = dict(os.environ)
        e.update(env(i) if env else {})
        procs.append(subprocess.Popen(args, stdout=subprocess.PIPE, text=True, env=e))
    return procs, start_us / 1e6


def collect(procs):
    out = []
    for p in procs:
        text, _ = p.communicate(timeout=600)
        trials, summary = [], {}
        for line in text.splitlines():
            try:
                j = json.loads(line)
            except ValueError:
                continue
            if "trial" in j:
                trials.append(j["trial"])
            else:
                summary = j
        summary["trials"] = trials
        out.append(summary)
    return out


def per_generation(results):
    counts = collections.Counter()
    for r in results:
        for t in r["trials"]:
            if not t["local"] and t["down"]:
                counts[t["generation"]] += 1
    return counts


def worst_local(results, cooldown_ms):
    stretches = collections.Counter()
    for r in results:
        for t in r["trials"]:
            if t["local"] and t["down"]:
                stretches[int(t["t_ms"] // cooldown_ms)] += 1
    return max(stretches.values()) if stretches else 0, sum(stretches.values())


def describe(counts):
    hist = collections.Counter(counts.values())
    return "%d cool-downs, trials in each: %s" % (
        len(counts), ", ".join("%d x%d" % (k, v) for k, v in sorted(hist.items())))


def part_ops():
    print("== ops: Redis FCALLs a second against the fleet's call rate (20 processes, 75 ms interval, 5 s)")
    for rate in (1000, 10000, 100000):
        redis = Redis()
        every = int(20 * 1e6 / rate)
        before = redis.fcalls()
        procs, _ = members(20, redis, "ops", 5000000, every, 30000000, down_us=0, report_us=75000)
        results = collect(procs)
        after = redis.fcalls()
        calls = sum(r.get("calls", 0) for r in results)
        print("  asked %6d calls/s: made %8.0f calls/s; Redis ran %6.1f FCALL/s (20 / 75 ms = 266.7)" % (
            rate, calls / 5.0, (after - before) / 5.7))
        redis.stop()


def part_trials():
    print("== trials: per cool-down, N = 20, a 20 ms cool-down, the downstream down throughout")
    for m in (1, 3, 5):
        redis = Redis()
        procs, _ = members(20, redis, "trials%d" % m, 30000000, 1000, 20000, permits=m, lease_us=60000)
        counts = per_generation(collect(procs))
        print("  M = %d, Redis healthy: %s" % (m, describe(counts)))
        redis.stop()
    m = 3
    redis = Redis()
    procs, start = members(20, redis, "kill", 12000000, 1000, 20000, permits=m, lease_us=60000)
    for k in range(5):
        time.sleep(max(0.0, start + 2 + 1.5 * k - time.monotonic()))
        procs[k * 4].send_signal(signal.SIGKILL)
    print("  M = 3, five members killed (-9) one by one: %s" % describe(per_generation(collect(procs))))
    redis.stop()
    redis = Redis()
    procs, start = members(20, redis, "restart", 12000000, 1000, 20000, permits=m, lease_us=60000)
    time.sleep(max(0.0, start + 4 - time.monotonic()))
    redis.stop()
    time.sleep(0.1)
    redis.start()
    print("  M = 3, Redis restarted (state lost): %s" % describe(per_generation(collect(procs))))
    redis.stop()
    redis = Redis()
    procs, start = members(20, redis, "stop", 12000000, 1000, 20000, permits=m, lease_us=60000,
                           degrade_us=100000)
    time.sleep(max(0.0, start + 4 - time.monotonic()))
    redis.proc.send_signal(signal.SIGSTOP)
    time.sleep(0.5)
    redis.proc.send_signal(signal.SIGCONT)
    results = collect(procs)
    worst, total = worst_local(results, 20.0)
    print("  M = 3, Redis stopped 500 ms (25 cool-downs): shared %s; local rules: %d trials, at most %d "
          "in a cool-down" % (describe(per_generation(results)), total, worst))
    redis.stop()


def part_skew():
    print("== skew: time OPEN after a failed trial, minus the 200 ms cool-down (N = 10, M = 1, 8 s)")
    for label, env in (("clocks agree", None),
                       ("5 min ahead / 5 min behind",
                        # The wall clock is what differs between machines (their monotonic
                        # clocks are not comparable at all); the members never read it. Faking
                        # the monotonic clock too breaks libfaketime's own timed waits.
                        lambda i: {"LD_PRELOAD": FAKETIME, "FAKETIME": "+5m" if i % 2 == 0 else "-5m",
                                   "FAKETIME_DONT_FAKE_MONOTONIC": "1"})):
        redis = Redis()
        events = Events(redis, "skew")
        procs, _ = members(10, redis, "skew", 8000000, 2000, 200000, env=env, start_in=True)
        collect(procs)
        events.stop()
        gaps = []
        ev = events.events
        for a, b in zip(ev, ev[1:]):
            if a[1] == "o" and b[1] == "h":
                gaps.append((b[0] - a[0]) * 1000 - a[3])
        print("  %-28s %d cool-downs; OPEN longer than the cool-down by: median %.1f ms, max %.1f ms" % (
            label, len(gaps), statistics.median(gaps), max(gaps)))
        redis.stop()


def part_trip():
    print("== trip: from the fleet's trip to each process's first refusal (N = 20, a call every 1 ms)")
    for report in (50000, 100000):
        redis = Redis()
        events = Events(redis, "trip")
        # Healthy for 300 ms, then down: the window's successes hold the rate under 50% until
        # the failures outnumber them, about 300 ms later.
        procs, start = members(20, redis, "trip", 3000000, 1000, 30000000, down_from_us=300000,
                               down_us=3000000, report_us=report)
        results = collect(procs)
        events.stop()
        trip = next(e[0] for e in events.events if e[1] == "o")
        delays = [r["first_refused_us"] / 1e6 - trip for r in results if r.get("first_refused_us", -1) > 0]
        print("  interval %3d ms: every process refused within %.1f ms of the trip (median %.1f ms)" % (
            report // 1000, max(delays) * 1000, statistics.median(delays) * 1000))
        redis.stop()
    redis = Redis()
    events = Events(redis, "sparse")
    procs, _ = members(20, redis, "sparse", 12000000, 4000000, 30000000)
    collect(procs)
    events.stop()
    trips = [e for e in events.events if e[1] == "o"]
    print("  20 processes, one call every 4 s each (2 in a 10 s window alone, minimum 3): the fleet %s" % (
        "tripped" if trips else "did not trip"))
    redis.stop()


def part_quorum():
    print("== quorum: 5 processes, one with a broken path (every call fails, and it calls 10x as often), "
          "the rest healthy, 5 s")
    for q in (1, 2):
        redis = Redis()
        events = Events(redis, "quorum")
        procs, _ = members(5, redis, "quorum", 5000000, lambda i: 200 if i == 0 else 2000, 1000000, down_us=0,
                           extra=lambda i, q=q: ["--quorum", str(q)] + (["--always-fail"] if i == 0 else []))
        collect(procs)
        events.stop()
        opened = sum(1 for e in events.events if e[1] == "o")
        print("  quorum %d: the fleet opened %d times" % (q, opened))
        redis.stop()


if __name__ == "__main__":
    {"ops": part_ops, "trials": part_trials, "skew": part_skew, "trip": part_trip,
     "quorum": part_quorum}[sys.argv[1]]()
