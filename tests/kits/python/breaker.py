"""The reference rules for the Python kit (not shipped in it): kit + this file scores 8/8."""
import time
from datetime import datetime, timezone


def classify(status):
    if status is None or status >= 500:
        return "failure"
    if 400 <= status < 500:
        return "ignored"  # the caller's mistake, not the server's
    return "success"


class Breaker:
    window_size = minimum_calls = failure_rate_percent = wait_in_open_ms = permitted_in_half_open = None

    def __init__(self, clock=lambda: time.monotonic() * 1000.0, settings=None):
        self.clock = clock
        for name, value in (settings or {}).items():
            setattr(self, name, value)
        self.state = "CLOSED"
        self.window = []
        self.transitions = []
        self.opened_at = 0.0
        self.admitted = 0
        self.trials = []
        self.generation = 1  # a state's: a permit of another counts nothing

    @property
    def failures(self):
        return sum(self.trials) if self.state == "HALF_OPEN" else sum(self.window)

    def move_to(self, state):
        stamp = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")  # to the microsecond
        self.transitions.append(f"{stamp} {self.state}->{state}")
        self.state = state
        self.generation += 1

    def open(self):
        self.move_to("OPEN")
        self.opened_at = self.clock()

    def allow(self):
        if self.state == "OPEN":
            if self.clock() - self.opened_at < self.wait_in_open_ms:
                return False
            self.move_to("HALF_OPEN")
            self.admitted, self.trials = 0, []
        if self.state == "HALF_OPEN":
            if self.admitted >= self.permitted_in_half_open:
                return False
            self.admitted += 1
        return self.generation

    def record(self, outcome, permit=None):
        if permit is not None and permit != self.generation:
            return  # let through before the state changed: it tells nothing about this one
        if outcome == "ignored":
            if self.state == "HALF_OPEN":
                self.admitted -= 1  # the trial told nothing; another may go
            return
        failed = outcome == "failure"
        if self.state == "HALF_OPEN":
            self.trials.append(failed)
            if len(self.trials) == self.permitted_in_half_open:
                if sum(self.trials) * 100 >= self.failure_rate_percent * len(self.trials):
                    self.open()
                else:
                    self.move_to("CLOSED")
                    self.window = []
            return
        self.window = (self.window + [failed])[-self.window_size:]
        if len(self.window) >= self.minimum_calls and sum(self.window) * 100 >= self.failure_rate_percent * len(self.window):
            self.open()
