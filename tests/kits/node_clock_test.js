// The Node kit's wall clock (kits/node/breaker.js, and the reference rules' copy beside this
// test), measured on clocks this test drives: performance.now() a microsecond per reading,
// Date.now() the true wall clock floored to the millisecond, and the process now and then
// preempted for 3 ms between two readings, as on a busy machine. Every stamp must be within
// 10 us of the true wall clock: a preempted reading must not pull the offset (taking the largest
// Date.now() - performance.now() made every stamp of a run as late as the longest preemption).
//   node node_clock_test.js BREAKER.JS...
'use strict';
const assert = require('assert');
const path = require('path');

const trueOffsetMs = 1796302575278.5266 - 1000;
let t = 1000; // what performance.now() reads, in ms
let dateReads = 0;
let perfReads = 0;
performance.now = () => {
  perfReads += 1;
  if (perfReads % 1009 === 0) t += 3; // preempted before this reading
  t += 0.001;
  return t;
};
Date.now = () => {
  dateReads += 1;
  if (dateReads % 997 === 0) t += 3; // preempted between the last reading and this one
  return Math.floor(t + trueOffsetMs);
};

for (const file of process.argv.slice(2)) {
  const { wallMicros } = require(path.resolve(file));
  for (let i = 0; i < 5; i++) {
    const stamp = Number(wallMicros());
    const truth = (t + trueOffsetMs) * 1000; // t as wallMicros read it
    assert.ok(Math.abs(stamp - truth) <= 10, `${file}: a stamp ${(stamp - truth).toFixed(1)} us off the wall clock`);
    t += 0.5;
  }
  console.log(`${file}: stamps within 10 us of the wall clock`);
}
