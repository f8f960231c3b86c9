"""Your circuit breaker. lab.py runs the lab's steps through it; the rules are yours.

Everything you write is in the three places marked YOUR PART. The numbers are the lab's: lab.py
reads them from lab-settings.json and gives them to the Breaker.
"""
import time
from datetime import datetime, timezone


def classify(status):
    """How an answer counts: "success", "failure" or "ignored". status is None when no answer came.

    YOUR PART (step 7): as shipped, everything but 200 is a failure. Which answers are the
    server's fault, and which are the caller's?
    """
    return "success" if status == 200 else "failure"


def monotonic_ms():
    return time.monotonic() * 1000.0


class Breaker:
    # The settings, given by lab.py (lab-settings.json) or replay.py (each trace's own): read
    # them from self, never write the numbers.
    window_size = None             # the last window_size calls are judged...
    minimum_calls = None           # ...once there are at least minimum_calls of them...
    failure_rate_percent = None    # ...and it opens when failures x 100 >= failure_rate_percent x calls
    wait_in_open_ms = None         # OPEN refuses every call for this long, then HALF_OPEN
    permitted_in_half_open = None  # HALF_OPEN lets this many trial calls through, judged together

    def __init__(self, clock=monotonic_ms, settings=None):
        self.clock = clock      # milliseconds, monotonic (replay.py gives the trace's own times)
        for name, value in (settings or {}).items():
            setattr(self, name, value)
        self.state = "CLOSED"
        self.window = []        # the recent results, True for a failure
        self.transitions = []   # transitions.log's lines, written by move_to
        # Add what else your rules need to remember (when it opened, the trials so far, ...).

    @property
    def failures(self):
        """The failures state.json reports: those in the window."""
        return sum(self.window)

    def move_to(self, state):
        """Every change of state goes through here, so transitions.log has it, stamped."""
        stamp = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")  # to the microsecond
        self.transitions.append(f"{stamp} {self.state}->{state}")
        self.state = state

    def allow(self):
        """May this call go to the server? False refuses it at once (it must not reach the server).
        Anything else lets it through and is the call's permit: the caller gives it back to
        record() with the call's outcome. Calls may overlap (cb-grade --conformance begins several
        before the first ends), so a permit is how record() tells a result that comes back after
        the state has changed (it must count nothing) from one of the state it was let through in.

        YOUR PART (steps 4-6): as shipped, every call goes through.
        """
        return True

    def record(self, outcome, permit=None):
        """The outcome of a call allow() let through: "success", "failure" or "ignored", with
        the permit allow() gave it.

        YOUR PART (steps 3, 6, 7): as shipped, the result is remembered and nothing else happens.
        """
        self.window = (self.window + [outcome == "failure"])[-self.window_size:]
