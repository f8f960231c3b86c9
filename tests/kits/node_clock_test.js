// The Node kit's wall clock (kits/node/breaker.js, and the reference rules' copy beside this
// test), measured on clocks this test drives: Date.now() the true wall clock floored to the
// millisecond, performance.now() the time since an origin far from it. Every stamp must be
// within 10 us of the true wall clock, on a machine where the process is now and then preempted
// for 3 ms between two readings (taking the largest Date.now() - performance.now() made every
// stamp of a run as late as the longest preemption), and on one so busy that the process runs
// for 20 us in each 1.02 ms (20 ms of readings may never see a tick of Date up close).
//   node node_clock_test.js BREAKER.JS...
'use strict';
const assert = require('assert');
const path = require('path');

const trueOffsetMs = 1796302575278.5266 - 1000;
const machines = {
  'preempted now and then': { preemptEvery: 997, slice: 0 },
  'busy, in slices': { preemptEvery: 0, slice: 20 },
};

for (const [name, m] of Object.entries(machines)) {
  let t = 1000; // what performance.now() reads, in ms
  let reads = 0;
  performance.now = () => {
    reads += 1;
    if (m.preemptEvery && reads % (m.preemptEvery + 12) === 0) t += 3; // preempted before this reading
    if (m.slice && reads % m.slice === 0) t += 1; // the others' turn
    t += 0.001;
    return t;
  };
  Date.now = () => {
    reads += 1;
    if (m.preemptEvery && reads % m.preemptEvery === 0) t += 3; // preempted after the last reading
    return Math.floor(t + trueOffsetMs);
  };
  for (const file of process.argv.slice(2)) {
    const resolved = path.resolve(file);
    delete require.cache[resolved];
    const { wallMicros } = require(resolved);
    for (let i = 0; i < 5; i++) {
      const stamp = Number(wallMicros());
      const truth = (t + trueOffsetMs) * 1000; // t as wallMicros read it
      assert.ok(Math.abs(stamp - truth) <= 10, `${file}, ${name}: a stamp ${(stamp - truth).toFixed(1)} us off`);
      t += 0.5;
    }
    console.log(`${file}, ${name}: stamps within 10 us of the wall clock`);
  }
}
