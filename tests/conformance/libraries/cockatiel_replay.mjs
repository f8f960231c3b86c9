// cockatiel 4 (npm, tests/third_party) on the conformance protocol, as a student who built the
// lab on it would put it there: the library is not changed, only Date.now, the one clock it
// reads, is the trace's t_ms.
//
// Its settings mapped as closely as it allows:
//
//   lab                                 cockatiel 4
//   window of the last N counted calls  CountBreaker size: N
//   minimum_calls                       CountBreaker minimumNumberOfCalls
//   failure_rate_percent (>=)           CountBreaker threshold rate/100 (it opens on >, and
//                                       takes 0 < threshold < 1: 100% becomes 0.99)
//   wait_in_open_ms                     halfOpenAfter
//   permitted_in_half_open trials       halfOpenSampling { calls, threshold: rate/100 }: it
//                                       reopens as soon as the failures pass the threshold
//   4xx neither success nor failure     handleWhen(a 5xx or a timeout): in CLOSED an error it
//                                       does not handle is not counted; as a trial it is a
//                                       success
//
// What the probe must name for it (tests/conformance/conformance_cli_test.cpp): > for >=, the
// trials judged before all were made, and a 4xx trial taken for a success.
import * as readline from 'node:readline';
import { circuitBreaker, handleWhen, CountBreaker, CircuitState, BrokenCircuitError } from '../../third_party/cockatiel-4.0.0/dist/index.js';

let now = 0;
Date.now = () => now;
const NAMES = { [CircuitState.Closed]: 'CLOSED', [CircuitState.Open]: 'OPEN', [CircuitState.HalfOpen]: 'HALF_OPEN' };

class Outcome extends Error {
  constructor(status) {
    super(String(status));
    this.failure = status === 'timeout' || status >= 500;
  }
}

let policy = null;
const lines = readline.createInterface({ input: process.stdin, terminal: false });
for await (const line of lines) {
  const msg = JSON.parse(line);
  if ('window' in msg) {
    const rate = Math.min(msg.failure_rate_percent, 99) / 100;
    policy = circuitBreaker(handleWhen((e) => e instanceof Outcome && e.failure), {
      halfOpenAfter: msg.wait_in_open_ms,
      halfOpenSampling: { calls: msg.permitted_in_half_open, threshold: rate },
      breaker: new CountBreaker({ threshold: rate, size: msg.window, minimumNumberOfCalls: msg.minimum_calls }),
    });
    continue;
  }
  now = msg.t_ms;
  let permitted = true;
  try {
    await policy.execute(() => {
      if (msg.result === 'timeout' || msg.result >= 400) throw new Outcome(msg.result);
      return msg.result;
    });
  } catch (e) {
    if (e instanceof BrokenCircuitError) permitted = false;
  }
  const answer = { decision: permitted ? 'permitted' : 'rejected', state: NAMES[policy.state], traces: 'many' };
  process.stdout.write(JSON.stringify(answer) + '\n');
}
