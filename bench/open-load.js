// An open-loop JSON-RPC load generator, run as a process of its own (fork it): calls are sent by
// the clock, `rate` a second, whether or not earlier ones have been answered, so a slow answer
// never lowers the rate offered (a closed loop, "await the batch, then send the next", measures
// its own latency instead). Its own process: inside a test or a benchmark it would share that
// event loop and CPU, and a busy parent would throttle it.
//
// Messages (process.send): in `{ type: 'start', origin, rate, connections, maxInFlight, calls:
// [{ path, method, params }] }` (sent in turn, each with an id of its own), `{ type: 'snapshot' }`
// (answered `{ type: 'snapshot', sent, ok, failed, inFlight }`), then `{ type: 'stop' }`; out `{ type:
// 'started' }` and, once every call sent has been answered, `{ type: 'stats', ... }` (`stats()`).
//
// At most `maxInFlight` calls wait for an answer (default: one second's worth); a call due while
// that many wait is not sent and is counted as `skipped`: the service is that far behind, and a
// backlog without bound would only make the run end later (as k6's constant-arrival-rate drops
// iterations when its VUs are all busy). `sent + skipped` is what the clock offered.
import { Pool } from 'undici';

let pool;
let calls;
let rate = 1000;
let maxInFlight = 1000;
let startedAt = 0;
let stoppedAt = 0;
let lastAnswerAt = 0;
let due = 0;
let sent = 0;
let skipped = 0;
let ok = 0;
let failed = 0;
let inFlight = 0;
let peakInFlight = 0;
/** The longest time without an answer while calls waited, in ms: how long the service paused, if it did. */
let maxAnswerGapMs = 0;
/** How late the generator itself was to send a call (its own event loop busy): the worst, in ms. */
let maxSendLagMs = 0;
const failures = [];
/** Milliseconds from when each call was due to its answer. */
const latencies = [];
let timer;
let cpu0;
let settle;

function fail(what) {
  failed++;
  if (failures.length < 10) failures.push(what);
}

async function send(n, dueAt) {
  const call = calls[n % calls.length];
  const sentAt = performance.now();
  inFlight++;
  if (inFlight > peakInFlight) peakInFlight = inFlight;
  try {
    const body = `{"jsonrpc":"2.0","id":${n},"method":"${call.method}","params":${JSON.stringify(call.params)}}`;
    const res = await pool.request({ path: call.path, method: 'POST', headers: { 'content-type': 'application/json' }, body });
    const text = await res.body.text();
    let answer;
    try { answer = JSON.parse(text); } catch { /* not JSON: a failure below */ }
    // The answer to this call: a result, and this call's id (not another's).
    if (res.statusCode !== 200 || !answer || !('result' in answer) || 'error' in answer || answer.id !== n) fail(`${call.method} ${res.statusCode} ${text.slice(0, 200)}`);
    else ok++;
  } catch (err) {
    fail(`${call.method} ${err.code ?? ''} ${err.message}`.trim());
  }
  const now = performance.now();
  // From when this call was sent at the earliest: a gap with nothing waiting is no pause of the service's.
  const gap = now - Math.max(lastAnswerAt, sentAt);
  if (gap > maxAnswerGapMs) maxAnswerGapMs = gap;
  lastAnswerAt = now;
  latencies.push(now - dueAt);
  inFlight--;
  if (inFlight === 0 && settle) settle();
}

/** Sends every call due by now: the clock decides, not the answers. */
function tick() {
  const now = performance.now();
  const by = Math.floor((now - startedAt) * rate / 1000);
  if (by > due) maxSendLagMs = Math.max(maxSendLagMs, now - (startedAt + due * 1000 / rate));
  for (; due < by; due++) {
    if (inFlight >= maxInFlight) skipped++;
    else send(sent++, startedAt + due * 1000 / rate);
  }
}

function stats() {
  const sorted = latencies.sort((a, b) => a - b);
  const pct = (p) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0;
  const cpu = process.cpuUsage(cpu0);
  const seconds = (stoppedAt - startedAt) / 1000;
  return {
    type: 'stats',
    offered: rate,
    seconds,
    sent,
    skipped,
    ok,
    failed,
    failures,
    /** Calls answered with their result a second, from the first send to the last answer. */
    okRate: ok / Math.max(0.001, (lastAnswerAt - startedAt) / 1000),
    p50: pct(0.5),
    p99: pct(0.99),
    max: sorted.at(-1) ?? 0,
    maxInFlight,
    peakInFlight,
    maxSendLagMs,
    maxAnswerGapMs,
    /** The generator's own CPU seconds, user + system. */
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
  };
}

process.on('message', async (m) => {
  if (m.type === 'start') {
    calls = m.calls;
    rate = m.rate;
    maxInFlight = m.maxInFlight ?? rate;
    pool = new Pool(m.origin, { connections: m.connections ?? 256, pipelining: 1, keepAliveTimeout: 30_000 });
    cpu0 = process.cpuUsage();
    startedAt = performance.now();
    // Every 2 ms: about 2 calls at 1,000/s; a timer later than that is a busy generator (maxSendLagMs).
    timer = setInterval(tick, 2);
    process.send({ type: 'started' });
  } else if (m.type === 'snapshot') {
    process.send({ type: 'snapshot', sent, ok, failed, inFlight });
  } else if (m.type === 'stop') {
    clearInterval(timer);
    tick();
    stoppedAt = performance.now();
    if (inFlight > 0) await new Promise((r) => { settle = r; });
    await pool.close();
    process.send(stats(), () => process.exit(0));
  }
});
// The parent gone, so is the load.
process.on('disconnect', () => process.exit(0));
