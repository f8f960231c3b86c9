// Your breaker from breaker.js, driven call by call, for cb-grade --conformance:
//
//   cb-grade --conformance "sh replay.sh"
//
// Already written, nothing to change: the same Breaker and classify that lab.js uses. The first
// line of input is the settings, then one call per line, each answered with one line before the
// next comes; another settings line starts the next trace, on a new breaker (the protocol is in
// docs/CONTRACTS.md). Time is the trace's own: the clock the breaker reads is each call's t_ms,
// so a trace of minutes replays in a moment.
'use strict';
const readline = require('readline');
const { Breaker, classify } = require('./breaker');

let now = 0;
let b = null;
readline.createInterface({ input: process.stdin, terminal: false }).on('line', (line) => {
  const msg = JSON.parse(line);
  if ('window' in msg) {
    // A trace begins: a new breaker, nothing of the last one kept.
    now = 0;
    b = new Breaker(() => now, {
      windowSize: msg.window,
      minimumCalls: msg.minimum_calls,
      failureRatePercent: msg.failure_rate_percent,
      waitInOpenMs: msg.wait_in_open_ms,
      permittedInHalfOpen: msg.permitted_in_half_open,
    });
    return;
  }
  now = msg.t_ms;
  const permitted = b.allow();
  if (permitted) b.record(classify(msg.result === 'timeout' ? null : msg.result)); // it completes at t_ms
  // "traces": "many": the grader may send the next trace's settings after the last call, so one
  // start of node answers every trace.
  const answer = { decision: permitted ? 'permitted' : 'rejected', state: b.state, traces: 'many' };
  process.stdout.write(JSON.stringify(answer) + '\n');
});
