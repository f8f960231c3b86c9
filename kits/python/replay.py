#!/usr/bin/env python3
"""Your breaker from breaker.py, driven call by call, for cb-grade --conformance:

    cb-grade --conformance "sh replay.sh"

Already written, nothing to change: the same Breaker and classify that lab.py uses. The first
line of input is the settings, then one line per call, each answered with one line; another
settings line starts the next trace, on a new breaker (the protocol is in docs/CONTRACTS.md). A
call is made whole ({"t_ms", "result"}), or begins ({"t_ms", "begin": n}) and ends later
({"t_ms", "end": n, "result"}) with other calls between, as a real client's calls overlap: its
permit from allow() goes back to record() when it ends. Time is the trace's own: the clock the
breaker reads is each line's t_ms, so a trace of minutes replays in a moment.
"""
import json
import sys

from breaker import Breaker, classify


def breaker_for(s):
    """A new breaker for one trace's settings line, on a clock of its own."""
    now = [0.0]
    b = Breaker(clock=lambda: now[0], settings={
        "window_size": s["window"],
        "minimum_calls": s["minimum_calls"],
        "failure_rate_percent": s["failure_rate_percent"],
        "wait_in_open_ms": s["wait_in_open_ms"],
        "permitted_in_half_open": s["permitted_in_half_open"],
    })
    return b, now


def outcome(msg):
    return classify(None if msg["result"] == "timeout" else msg["result"])


def main():
    b, now, in_flight = None, None, {}
    # "traces": "many" tells the grader it may send the next trace's settings line after the last
    # call, so one start of python answers every trace; "in_flight": that calls may overlap.
    says = {"traces": "many", "in_flight": True}
    for line in sys.stdin:
        msg = json.loads(line)
        if "window" in msg:  # a trace begins: nothing of the last one is kept
            b, now = breaker_for(msg)
            in_flight = {}
            continue
        now[0] = msg["t_ms"]
        if "end" in msg:  # a call let through earlier comes back with its result
            permit = in_flight.pop(msg["end"], None)
            if permit:  # (the end of a call the breaker refused counts nothing)
                b.record(outcome(msg), permit)
            print(json.dumps({"state": b.state, **says}), flush=True)
            continue
        permit = b.allow()
        if permit and "begin" in msg:
            in_flight[msg["begin"]] = permit
        elif permit:  # the call completes at t_ms with this result
            b.record(outcome(msg), permit)
        print(json.dumps({"decision": "permitted" if permit else "rejected", "state": b.state, **says}),
              flush=True)


if __name__ == "__main__":
    main()
