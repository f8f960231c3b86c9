#!/usr/bin/env node
// The lab's eight steps, already written: you write the breaker's rules in breaker.js.
//
// Calls the flaky server at $CB_SERVER (default http://127.0.0.1:8110) and writes the lab's four
// files into $CB_DIR (default ./cb), each in the form docs/CONTRACTS.md gives. Node's standard
// library only: no npm packages.
'use strict';
const fs = require('fs');
const http = require('http');
const path = require('path');
const { Breaker, classify } = require('./breaker');

const SERVER = new URL(process.env.CB_SERVER || 'http://127.0.0.1:8110');
const OUT = process.env.CB_DIR || 'cb';
const TIMEOUT_MS = 2000; // a breaker is blind to a server that never answers without a timeout

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

// The server's own count of the lab's requests (GET /count), or null.
async function count() {
  const { status, body } = await get('/count');
  try { return status === 200 ? Number.parseInt(JSON.parse(body).count, 10) : null; } catch { return null; }
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
  if (!b.allow()) return 'refused';
  const { status } = await get(urlPath);
  b.record(classify(status));
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
  const b = new Breaker();
  console.log(`step 1: the server at ${SERVER.origin}: /count -> ${await count()}`);
  if (last === 1) return;
  await step(2, '3 x /fast', b, '/fast', 3);
  writeState('state.json', b);
  if (last === 2) return;
  await step(3, '5 x /always500', b, '/always500', 5);
  writeState('state.json', b);
  if (last === 3) return;

  const before = await count();
  let blocked = 0;
  let slowestMs = 0;
  for (let i = 0; i < 10; i++) {
    const t0 = process.hrtime.bigint();
    if ((await call(b, '/always500')) === 'refused') blocked++;
    slowestMs = Math.max(slowestMs, Number(process.hrtime.bigint() - t0) / 1e6);
  }
  const after = await count();
  const line = `before=${before} after=${after} blocked=${blocked} max_ms=${slowestMs.toFixed(3)}`;
  write('fastfail.txt', line + '\n');
  console.log(`step 4: 10 x /always500: ${line}`);
  if (last === 4) return;

  await new Promise((resolve) => setTimeout(resolve, b.waitInOpenMs + 50));
  await step(5, `waited ${b.waitInOpenMs} ms, 1 x /fast`, b, '/fast', 1);
  writeState('state.json', b);
  if (last === 5) return;
  let trials = 0;
  while (b.state !== 'CLOSED' && trials < 10) { await call(b, '/fast'); trials++; }
  console.log(`step 6: ${trials} x /fast -> ${b.state}`);
  writeState('state.json', b);
  if (last === 6) return;

  const fresh = new Breaker();
  await step(7, 'a new breaker, 10 x /bad', fresh, '/bad', 10);
  writeState('ignore4xx.json', fresh);
  if (last === 7) return;
  write('transitions.log', b.transitions.map((l) => l + '\n').join(''));
  console.log(`step 8: transitions.log: ${b.transitions.length} line(s)`);
}

main().catch((e) => { console.error(`lab.js: ${e.message}`); process.exit(1); });
