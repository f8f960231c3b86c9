#!/usr/bin/env python3
"""The lab's eight steps, already written: you write the breaker's rules in breaker.py.

Calls the flaky server at $CB_SERVER (default: the one lab-settings.json names) and writes the
lab's four files into $CB_DIR (default ./cb), each in the form docs/CONTRACTS.md gives. The
server's paths and the files' names come from lab-settings.json too. Standard library only.
"""
import json
import os
import sys
import time
import urllib.error
import urllib.request

from breaker import Breaker, classify

OUT = os.environ.get("CB_DIR", "cb")


def load_settings():
    """The lab's numbers, from lab-settings.json beside this file (cb-lab init writes it: the
    handout's numbers, or your own if your course gives each student a variant)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lab-settings.json")
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"lab.py: {path}: {e} (cb-lab init writes it)")


LAB = load_settings()
# The breaker's settings; the script's counts (LAB["fast"], ...) are what the steps send.
SETTINGS = {k: LAB[k] for k in ("window_size", "minimum_calls", "failure_rate_percent", "wait_in_open_ms",
                                "permitted_in_half_open")}
TIMEOUT_S = LAB["call_timeout_ms"] / 1000  # a breaker is blind to a server that never answers without a timeout
SERVER = (os.environ.get("CB_SERVER") or LAB["server"]).rstrip("/")
# The server's paths, and the files the lab writes, as lab-settings.json names them.
COUNT, FAST, FAIL, BAD = LAB["count_path"], LAB["fast_path"], LAB["fail_path"], LAB["bad_path"]
STATE, FASTFAIL, IGNORE, LOG = LAB["state_file"], LAB["fastfail_file"], LAB["ignore_file"], LAB["transitions_file"]


def get(path):
    """GET path; the HTTP status, or None when no answer came (refused, reset, timed out)."""
    try:
        with urllib.request.urlopen(SERVER + path, timeout=TIMEOUT_S) as r:
            r.read()
            return r.status
    except urllib.error.HTTPError as e:
        return e.code
    except (OSError, ValueError):
        return None


def count():
    """The server's own count of the lab's requests (GET COUNT). Without it there is nothing to
    measure step 4 by: the lab stops, saying why."""
    try:
        with urllib.request.urlopen(SERVER + COUNT, timeout=TIMEOUT_S) as r:
            return int(json.loads(r.read())["count"])
    except (OSError, ValueError, KeyError, TypeError):
        sys.exit(f"lab.py: the server at {SERVER} did not answer {COUNT}: "
                 "start it (flaky-server), or set CB_SERVER to where it runs")


def write(name, text):
    """Whole or not at all: a temporary file renamed over the old one."""
    path = os.path.join(OUT, name)
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)


def write_state(name, b):
    write(name, json.dumps({"state": b.state, "failures": b.failures, "window_size": b.window_size,
                            "permitted_in_half_open": b.permitted_in_half_open}) + "\n")


def call(b, path):
    """One call through the breaker: 'refused' (it never reached the server), or the status."""
    permit = b.allow()
    if not permit:
        return "refused"
    status = get(path)
    b.record(classify(status), permit)
    return status if status is not None else "no answer"


def step(n, title, b, path=None, times=0):
    results = [call(b, path) for _ in range(times)]
    print(f"step {n}: {title}: {results if results else ''} -> {b.state}")


def until():
    """--until N: stop after step N, leaving the files as they are then (check them with
    cb-grade --step N). Without it, all eight steps."""
    args = sys.argv[1:]
    if not args:
        return 8
    if len(args) == 2 and args[0] == "--until" and args[1].isdigit() and 1 <= int(args[1]) <= 8:
        return int(args[1])
    sys.exit("lab.py: usage: lab.py [--until N], N a step from 1 to 8")


def main():
    last = until()
    os.makedirs(OUT, exist_ok=True)
    b = Breaker(settings=SETTINGS)
    print(f"step 1: the server at {SERVER}: {COUNT} -> {count()} ({LAB['numbers']})")
    if last == 1:
        return
    step(2, f"{LAB['fast']} x {FAST}", b, FAST, LAB["fast"])
    write_state(STATE, b)
    if last == 2:
        return
    step(3, f"{LAB['burst']} x {FAIL}", b, FAIL, LAB["burst"])
    write_state(STATE, b)
    if last == 3:
        return

    before = count()
    blocked, slowest_ms = 0, 0.0
    for _ in range(LAB["blocked"]):
        t0 = time.perf_counter()
        if call(b, FAIL) == "refused":
            blocked += 1
        slowest_ms = max(slowest_ms, (time.perf_counter() - t0) * 1000)
    after = count()
    write(FASTFAIL, f"before={before} after={after} blocked={blocked} max_ms={slowest_ms:.3f}\n")
    print(f"step 4: {LAB['blocked']} x {FAIL}: before={before} after={after} blocked={blocked} max_ms={slowest_ms:.3f}")
    if last == 4:
        return

    time.sleep(b.wait_in_open_ms / 1000 + 0.05)
    step(5, f"waited {b.wait_in_open_ms} ms, 1 x {FAST}", b, FAST, 1)
    write_state(STATE, b)
    if last == 5:
        return
    trials = 0
    while b.state != "CLOSED" and trials < LAB["trials_max"]:
        call(b, FAST)
        trials += 1
    print(f"step 6: {trials} x {FAST} -> {b.state}")
    write_state(STATE, b)
    if last == 6:
        return

    fresh = Breaker(settings=SETTINGS)
    step(7, f"a new breaker, {LAB['bad']} x {BAD}", fresh, BAD, LAB["bad"])
    write_state(IGNORE, fresh)
    if last == 7:
        return
    write(LOG, "".join(line + "\n" for line in b.transitions))
    print(f"step 8: {LOG}: {len(b.transitions)} line(s)")


if __name__ == "__main__":
    main()
