// The reference rules for the Node kit (not shipped in it): kit + this file scores 8/8.
'use strict';

function classify(status) {
  if (status === null || status >= 500) return 'failure';
  if (status >= 400 && status < 500) return 'ignored'; // the caller's mistake, not the server's
  return 'success';
}

// The wall clock to the microsecond, for transitions.log's stamps: the grader places each among
// the server's requests, which it stamps to the microsecond. Not Date: its milliseconds can be a
// few behind the wall clock (measured here: up to 6 ms), while performance.timeOrigin is the
// wall clock read once at start, to the microsecond, and performance.now() counts from it.
function wallMicros() {
  return BigInt(Math.round((performance.timeOrigin + performance.now()) * 1000));
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
