// The reference rules for the Node kit (not shipped in it): kit + this file scores 8/8.
'use strict';

function classify(status) {
  if (status === null || status >= 500) return 'failure';
  if (status >= 400 && status < 500) return 'ignored'; // the caller's mistake, not the server's
  return 'success';
}

// The wall clock to the microsecond, for transitions.log's stamps: the grader places each among
// the server's requests, which it stamps to the microsecond. performance.now() counts to the
// microsecond, but performance.timeOrigin, the wall clock it starts from, can be tens of
// milliseconds off on a busy machine, and Date counts in whole milliseconds (its ticks land up
// to half a millisecond either side of where performance.now() puts them). So the offset between
// the two is measured once: the largest Date.now() - performance.now() over 20 ms of readings,
// the same to a microsecond from one run to the next here (a reading delayed between the two
// calls, or taken late after a tick, only makes it smaller; 3 ms of readings fell short by up to
// a millisecond on a busy machine, enough to stamp a close before the call that caused it).
const wallOffsetMs = (() => {
  let offset = -Infinity;
  const until = performance.now() + 20;
  for (let now = performance.now(); now < until; now = performance.now()) offset = Math.max(offset, Date.now() - now);
  return offset;
})();

function wallMicros() {
  return BigInt(Math.round((wallOffsetMs + performance.now()) * 1000));
}

class Breaker {
  constructor(clock = () => Number(process.hrtime.bigint()) / 1e6, settings = {}) {
    Object.assign(this, settings);
    this.clock = clock;
    this.state = 'CLOSED';
    this.window = [];
    this.transitions = [];
    this.openedAt = 0;
    this.admitted = 0;
    this.trials = [];
  }

  get failures() {
    const list = this.state === 'HALF_OPEN' ? this.trials : this.window;
    return list.filter((failed) => failed).length;
  }

  moveTo(state) {
    const us = wallMicros();
    const stamp = new Date(Number(us / 1000n)).toISOString().slice(0, 23) + String(us % 1000n).padStart(3, '0') + 'Z';
    this.transitions.push(`${stamp} ${this.state}->${state}`);
    this.state = state;
  }

  open() {
    this.moveTo('OPEN');
    this.openedAt = this.clock();
  }

  allow() {
    if (this.state === 'OPEN') {
      if (this.clock() - this.openedAt < this.waitInOpenMs) return false;
      this.moveTo('HALF_OPEN');
      this.admitted = 0;
      this.trials = [];
    }
    if (this.state === 'HALF_OPEN') {
      if (this.admitted >= this.permittedInHalfOpen) return false;
      this.admitted++;
    }
    return true;
  }

  record(outcome) {
    if (outcome === 'ignored') {
      if (this.state === 'HALF_OPEN') this.admitted--; // the trial told nothing; another may go
      return;
    }
    const failed = outcome === 'failure';
    if (this.state === 'HALF_OPEN') {
      this.trials.push(failed);
      if (this.trials.length === this.permittedInHalfOpen) {
        const failures = this.trials.filter((f) => f).length;
        if (failures * 100 >= this.failureRatePercent * this.trials.length) {
          this.open();
        } else {
          this.moveTo('CLOSED');
          this.window = [];
        }
      }
      return;
    }
    this.window = [...this.window, failed].slice(-this.windowSize);
    const failures = this.window.filter((f) => f).length;
    if (this.window.length >= this.minimumCalls && failures * 100 >= this.failureRatePercent * this.window.length) this.open();
  }
}

module.exports = { Breaker, classify };
