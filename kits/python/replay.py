#!/usr/bin/env python3
"""Your breaker from breaker.py, driven call by call, for cb-grade --conformance:

    cb-grade --conformance "sh replay.sh"

Already written, nothing to change: the same Breaker and classify that lab.py uses. The first
line of input is the settings, then one call per line, each answered with one line before the
next comes (the protocol is in docs/CONTRACTS.md). Time is the trace's own: the clock the
breaker reads is each call's t_ms, so a trace of minutes replays in a moment.
"""
import json
import sys

from breaker import Breaker, classify


def main():
    first = sys.stdin.readline()
    if not first:
        return  # no input, nothing to answer
    s = json.loads(first)
    now = [0.0]
    b = Breaker(clock=lambda: now[0], settings={
        "window_size": s["window"],
        "minimum_calls": s["minimum_calls"],
        "failure_rate_percent": s["failure_rate_percent"],
        "wait_in_open_ms": s["wait_in_open_ms"],
        "permitted_in_half_open": s["permitted_in_half_open"],
    })
    for line in sys.stdin:
        call = json.loads(line)
        now[0] = call["t_ms"]
        permitted = b.allow()
        if permitted:  # the call completes at t_ms with this result
            b.record(classify(None if call["result"] == "timeout" else call["result"]))
        print(json.dumps({"decision": "permitted" if permitted else "rejected", "state": b.state}), flush=True)


if __name__ == "__main__":
    main()
