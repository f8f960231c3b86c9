// Your circuit breaker. lab.js runs the lab's steps through it; the rules are yours.
//
// Everything you write is in the three places marked YOUR PART. The numbers are the lab's.
'use strict';

// How an answer counts: 'success', 'failure' or 'ignored'. status is null when no answer came.
// YOUR PART (step 7): as shipped, everything but 200 is a failure. Which answers are the
// server's fault, and which are the caller's?
function classify(status) {
  return status === 200 ? 'success' : 'failure';
}

// The wall clock to the microsecond, for transitions.log's stamps: the grader places each among
// the server's requests, which it stamps to the microsecond. performance.now() counts in
// microseconds from performance.timeOrigin, but that origin can be tens of milliseconds off the
// wall clock on a busy machine, and Date.now() is the wall clock floored to the millisecond. So
// the offset between them is bracketed once: a Date.now() of d read between performance.now()
// readings a and b says the offset is at least d - b and less than d + 1 - a. A reading delayed
// between two calls (the process preempted) only widens its own bracket, never moves the answer;
// the readings just after and just before a tick of Date close it, to 10 us within a
// millisecond or two here, and for up to 200 ms where a busy machine leaves readings sparse.
const wallOffsetMs = (() => {
  let low = -Infinity;
  let high = Infinity;
  const until = performance.now() + 200;
  for (let a = performance.now(); a < until && high - low > 0.01; a = performance.now()) {
    const d = Date.now();
    const b = performance.now();
    low = Math.max(low, d - b);
    high = Math.min(high, d + 1 - a);
  }
  return (low + high) / 2;
})();

function wallMicros() {
  return BigInt(Math.round((wallOffsetMs + performance.now()) * 1000));
}

class Breaker {
  // settings: given by lab.js (lab-settings.json) or replay.js (each trace's own), so read them
  // from this, never write the numbers:
  //   windowSize           the last windowSize calls are judged...
  //   minimumCalls         ...once there are at least minimumCalls of them...
  //   failureRatePercent   ...and it opens when failures x 100 >= failureRatePercent x calls
  //   waitInOpenMs         OPEN refuses every call for this long, then HALF_OPEN
  //   permittedInHalfOpen  HALF_OPEN lets this many trial calls through, judged together
  constructor(clock = () => Number(process.hrtime.bigint()) / 1e6, settings = {}) {
    Object.assign(this, settings);
    this.clock = clock;             // milliseconds, monotonic (replay.js gives the trace's own times)
    this.state = 'CLOSED';
    this.window = [];               // the recent results, true for a failure
    this.transitions = [];          // transitions.log's lines, written by moveTo
    // Add what else your rules need to remember (when it opened, the trials so far, ...).
  }

  // The failures state.json reports: those in the window.
  get failures() {
    return this.window.filter((failed) => failed).length;
  }

  // Every change of state goes through here, so transitions.log has it, stamped.
  moveTo(state) {
    const us = wallMicros();
    const stamp = new Date(Number(us / 1000n)).toISOString().slice(0, 23) + String(us % 1000n).padStart(3, '0') + 'Z';
    this.transitions.push(`${stamp} ${this.state}->${state}`);
    this.state = state;
  }

  // May this call go to the server? false refuses it at once (it must not reach the server).
  // Anything else lets it through and is the call's permit: the caller gives it back to record()
  // with the call's outcome. Calls may overlap (cb-grade --conformance begins several before the
  // first ends), so a permit is how record() tells a result that comes back after the state has
  // changed (it must count nothing) from one of the state it was let through in.
  // YOUR PART (steps 4-6): as shipped, every call goes through.
  allow() {
    return true;
  }

  // The outcome of a call allow() let through: 'success', 'failure' or 'ignored', with the
  // permit allow() gave it.
  // YOUR PART (steps 3, 6, 7): as shipped, the result is remembered and nothing else happens.
  record(outcome, permit) {
    this.window = [...this.window, outcome === 'failure'].slice(-this.windowSize);
  }
}

module.exports = { Breaker, classify, wallMicros };
