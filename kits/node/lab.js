#!/usr/bin/env node
// The lab's eight steps, already written: you write the breaker's rules in breaker.js.
//
// Calls the flaky server at $CB_SERVER (default: the one lab-settings.json names) and writes the
// lab's four files into $CB_DIR (default ./cb), each in the form docs/CONTRACTS.md gives. The
// server's paths and the files' names come from lab-settings.json too. Node's standard library
// only: no npm packages.
'use strict';
const fs = require('fs');
const http = require('http');
const path = require('path');
const { Breaker, classify } = require('./breaker');

const OUT = process.env.CB_DIR || 'cb';

// The lab's numbers, from lab-settings.json beside this file (cb-lab init writes it: the
// handout's numbers, or your own if your course gives each student a variant).
function loadSettings() {
  const file = path.join(__dirname, 'lab-settings.json');
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    console.error(`lab.js: ${file}: ${e.message} (cb-lab init writes it)`);
    process.exit(1);
  }
}
const LAB = loadSettings();
const SERVER = new URL(process.env.CB_SERVER || LAB.server);
// The server's paths, and the files the lab writes, as lab-settings.json names them.
const { count_path: COUNT, fast_path: FAST, fail_path: FAIL, bad_path: BAD } = LAB;
const { state_file: STATE, fastfail_file: FASTFAIL, ignore_file: IGNORE, transitions_file: LOG } = LAB;
// The breaker's settings; the script's counts (LAB.fast, ...) are what the steps send.
const SETTINGS = {
  windowSize: LAB.window_size,
  minimumCalls: LAB.minimum_calls,
  failureRatePercent: LAB.failure_rate_percent,
  waitInOpenMs: LAB.wait_in_open_ms,
  permittedInHalfOpen: LAB.permitted_in_half_open,
};
const TIMEOUT_MS = LAB.call_timeout_ms; // a breaker is blind to a server that never answers without a timeout

// GET a path: { status, body }, with status null when no answer came (refused, reset, timed out).
function get(urlPath) {
  return new Promise((resolve) => {
    let done = false;
    const finish = (status, body) => { if (!done) { done = true; resolve({ status, body }); } };
    const req = http.get({ host: SERVER.hostname, port: SERVER.port || 80, path: urlPath, agent: false,
                           timeout: TIMEOUT_MS }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => { body += chunk; });
      res.on('end', () => finish(res.statusCode, body));
      res.on('error', () => finish(null, ''));
    });
    req.on('timeout', () => { req.destroy(); finish(null, ''); });
    req.on('error', () => finish(null, ''));
  });
}

// The server's own count of the lab's requests (GET COUNT). Without it there is nothing to
// measure step 4 by: the lab stops, saying why.
async function count() {
  const { status, body } = await get(COUNT);
  let n = null;
  try { n = status === 200 ? Number.parseInt(JSON.parse(body).count, 10) : null; } catch { n = null; }
  if (n === null || Number.isNaN(n)) {
    console.error(`lab.js: the server at ${SERVER.origin} did not answer ${COUNT}: start it (flaky-server), or set CB_SERVER to where it runs`);
    process.exit(1);
  }
  return n;
}

// Whole or not at all: a temporary file renamed over the old one.
function write(name, text) {
  const file = path.join(OUT, name);
  fs.writeFileSync(file + '.tmp', text);
  fs.renameSync(file + '.tmp', file);
}

function writeState(name, b) {
  write(name, JSON.stringify({ state: b.state, failures: b.failures, window_size: b.windowSize,
                               permitted_in_half_open: b.permittedInHalfOpen }) + '\n');
}

// One call through the breaker: 'refused' (it never reached the server), or the status.
async function call(b, urlPath) {
  const permit = b.allow();
  if (!permit) return 'refused';
  const { status } = await get(urlPath);
  b.record(classify(status), permit);
  return status === null ? 'no answer' : status;
}

async function step(n, title, b, urlPath, times) {
  const results = [];
  for (let i = 0; i < times; i++) results.push(await call(b, urlPath));
  console.log(`step ${n}: ${title}: ${results.join(' ')} -> ${b.state}`);
}

// --until N: stop after step N, leaving the files as they are then (check them with
// cb-grade --step N). Without it, all eight steps.
function until() {
  const args = process.argv.slice(2);
  if (args.length === 0) return 8;
  const n = Number(args[1]);
  if (args.length === 2 && args[0] === '--until' && Number.isInteger(n) && n >= 1 && n <= 8) return n;
  console.error('lab.js: usage: lab.js [--until N], N a step from 1 to 8');
  process.exit(2);
}

async function main() {
  const last = until();
  fs.mkdirSync(OUT, { recursive: true });
  const b = new Breaker(undefined, SETTINGS);
  console.log(`step 1: the server at ${SERVER.origin}: ${COUNT} -> ${await count()} (${LAB.numbers})`);
  if (last === 1) return;
  await step(2, `${LAB.fast} x ${FAST}`, b, FAST, LAB.fast);
  writeState(STATE, b);
  if (last === 2) return;
  await step(3, `${LAB.burst} x ${FAIL}`, b, FAIL, LAB.burst);
  writeState(STATE, b);
  if (last === 3) return;

  const before = await count();
  let blocked = 0;
  let slowestMs = 0;
  for (let i = 0; i < LAB.blocked; i++) {
    const t0 = process.hrtime.bigint();
    if ((await call(b, FAIL)) === 'refused') blocked++;
    slowestMs = Math.max(slowestMs, Number(process.hrtime.bigint() - t0) / 1e6);
  }
  const after = await count();
  const line = `before=${before} after=${after} blocked=${blocked} max_ms=${slowestMs.toFixed(3)}`;
  write(FASTFAIL, line + '\n');
  console.log(`step 4: ${LAB.blocked} x ${FAIL}: ${line}`);
  if (last === 4) return;

  await new Promise((resolve) => setTimeout(resolve, b.waitInOpenMs + 50));
  await step(5, `waited ${b.waitInOpenMs} ms, 1 x ${FAST}`, b, FAST, 1);
  writeState(STATE, b);
  if (last === 5) return;
  let trials = 0;
  while (b.state !== 'CLOSED' && trials < LAB.trials_max) { await call(b, FAST); trials++; }
  console.log(`step 6: ${trials} x ${FAST} -> ${b.state}`);
  writeState(STATE, b);
  if (last === 6) return;

  const fresh = new Breaker(undefined, SETTINGS);
  await step(7, `a new breaker, ${LAB.bad} x ${BAD}`, fresh, BAD, LAB.bad);
  writeState(IGNORE, fresh);
  if (last === 7) return;
  write(LOG, b.transitions.map((l) => l + '\n').join(''));
  console.log(`step 8: ${LOG}: ${b.transitions.length} line(s)`);
}

main().catch((e) => { console.error(`lab.js: ${e.message}`); process.exit(1); });
