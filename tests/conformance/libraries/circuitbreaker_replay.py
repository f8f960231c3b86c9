#!/usr/bin/python3
"""Debian's python3-circuitbreaker (1.4) on the conformance protocol, as a student who built the
lab on it would put it there: the library is not changed, only its clock is the trace's.

Its settings mapped as closely as it allows:

  lab                                   circuitbreaker 1.4
  window, minimum, failure rate         failure_threshold = minimum_calls consecutive failures;
                                        no window and no rate (a success resets the count)
  wait_in_open_ms                       recovery_timeout, on a clock that reads the trace's t_ms
                                        (so the wait is exact: no seconds to round)
  permitted_in_half_open trials         no such setting: the first trial decides
  4xx neither success nor failure       a predicate that says a 4xx is "not a failure", which the
                                        library then counts as a success

What the probe must name for it (tests/conformance/conformance_cli_test.cpp): the trials judged
at once, a 4xx taken for a success, and the window it does not have.
"""
import json
import sys

import circuitbreaker
from circuitbreaker import CircuitBreaker, CircuitBreakerError

NOW = [0.0]
circuitbreaker.monotonic = lambda: NOW[0]  # milliseconds, the trace's own
NAMES = {"closed": "CLOSED", "open": "OPEN", "half_open": "HALF_OPEN"}


class Result(Exception):
    def __init__(self, status):
        super().__init__(status)
        self.status = status


def is_failure(exc_type, exc):
    return issubclass(exc_type, Result) and (exc.status is None or exc.status >= 500)


def main():
    breaker = None
    for line in sys.stdin:
        msg = json.loads(line)
        if "window" in msg:  # a new trace: a new breaker
            breaker = CircuitBreaker(failure_threshold=msg["minimum_calls"],
                                     recovery_timeout=msg["wait_in_open_ms"] or 0.001,
                                     expected_exception=is_failure)
            continue
        NOW[0] = msg["t_ms"]
        status = None if msg["result"] == "timeout" else msg["result"]

        def call():
            if status is None or status >= 400:
                raise Result(status)

        permitted = True
        try:
            breaker.decorate(call)()  # the decorated call is the one that refuses while OPEN
        except CircuitBreakerError:
            permitted = False
        except Result:
            pass
        print(json.dumps({"decision": "permitted" if permitted else "rejected",
                          "state": NAMES[breaker.state], "traces": "many"}), flush=True)


if __name__ == "__main__":
    main()
