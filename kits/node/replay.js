// Your breaker from breaker.js, driven call by call, for cb-grade --conformance:
//
//   cb-grade --conformance "sh replay.sh"
//
// Already written, nothing to change: the same Breaker and classify that lab.js uses. The first
// line of input is the settings, then one line per call, each answered with one line; another
// settings line starts the next trace, on a new breaker (the protocol is in docs/CONTRACTS.md). A
// call is made whole ({t_ms, result}), or begins ({t_ms, begin: n}) and ends later ({t_ms, end: n,
// result}) with other calls between, as a real client's calls overlap: its permit from allow()
// goes back to record() when it ends. Time is the trace's own: the clock the breaker reads is each
// line's t_ms, so a trace of minutes replays in a moment.
'use strict';
const readline = require('readline');
const { Breaker, classify } = require('./breaker');

let now = 0;
let b = null;
let inFlight = new Map(); // a call's number -> its permit
const outcome = (msg) => classify(msg.result === 'timeout' ? null : msg.result);
// "traces": "many": the grader may send the next trace's settings after the last call, so one
// start of node answers every trace; "in_flight": calls may overlap.
const says = { traces: 'many', in_flight: true };
readline.createInterface({ input: process.stdin, terminal: false }).on('line', (line) => {
  const msg = JSON.parse(line);
  if ('window' in msg) {
    // A trace begins: a new breaker, nothing of the last one kept.
    now = 0;
    inFlight = new Map();
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
  if ('end' in msg) {
    // A call let through earlier comes back (the end of one the breaker refused counts nothing).
    const permit = inFlight.get(msg.end);
    inFlight.delete(msg.end);
    if (permit) b.record(outcome(msg), permit);
    process.stdout.write(JSON.stringify({ state: b.state, ...says }) + '\n');
    return;
  }
  const permit = b.allow();
  if (permit && 'begin' in msg) inFlight.set(msg.begin, permit);
  else if (permit) b.record(outcome(msg), permit); // it completes at t_ms
  const answer = { decision: permit ? 'permitted' : 'rejected', state: b.state, ...says };
  process.stdout.write(JSON.stringify(answer) + '\n');
});
