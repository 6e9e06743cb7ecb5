// A small closed-loop HTTP load generator: `connections` requests in flight, each one sent as
// soon as the previous answered, for `seconds`. Reports req/s and latency percentiles. With
// `rate`, at most that many requests a second (still at most `connections` in flight): processes
// compared at the same rate do the same work a second, so their CPU per request is comparable
// on a machine too busy for them to reach the same closed-loop throughput.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';

/**
 * @param {{ url: string, path: string | (() => string), method?: string, headers?: () => Record<string,string>,
 *   body?: string | (() => string), connections?: number, seconds?: number, expectStatus?: number, rate?: number }} opts
 */
export async function load(opts) {
  const origin = new URL(opts.url).origin;
  const connections = opts.connections ?? 32;
  const pool = new Pool(origin, { connections, pipelining: 1, keepAliveTimeout: 30_000 });
  const deadline = performance.now() + (opts.seconds ?? 5) * 1000;
  const latencies = [];
  let errors = 0;
  let unexpected = 0;
  const started = performance.now();
  // Open-loop pacing: tickets released at `rate` a second (never more than `connections` saved up).
  let tickets = 0;
  const waiting = [];
  const pace = opts.rate ? setInterval(() => {
    tickets = Math.min(connections, tickets + opts.rate / 100);
    while (tickets >= 1 && waiting.length > 0) {
      tickets--;
      waiting.shift()();
    }
  }, 10) : undefined;
  const ticket = () => new Promise((resolve) => waiting.push(resolve));

  async function worker() {
    while (performance.now() < deadline) {
      if (pace) {
        await ticket();
        if (performance.now() >= deadline) break;
      }
      const t0 = performance.now();
      try {
        const res = await pool.request({
          path: typeof opts.path === 'function' ? opts.path() : opts.path,
          method: opts.method ?? 'GET',
          headers: opts.headers?.(),
          body: typeof opts.body === 'function' ? opts.body() : opts.body,
        });
        await res.body.dump();
        if (opts.expectStatus !== undefined && res.statusCode !== opts.expectStatus) unexpected++;
      } catch {
        errors++;
      }
      latencies.push(performance.now() - t0);
    }
  }
  const ending = pace ? setTimeout(() => { for (const w of waiting.splice(0)) w(); }, deadline - performance.now() + 20) : undefined;
  await Promise.all(Array.from({ length: connections }, worker));
  clearInterval(pace);
  clearTimeout(ending);
  const elapsed = (performance.now() - started) / 1000;
  await pool.close();
  latencies.sort((a, b) => a - b);
  const pct = (p) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))] ?? NaN;
  return { requests: latencies.length, rps: latencies.length / elapsed, p50: pct(0.5), p99: pct(0.99), errors, unexpected };
}

/**
 * Starts a bench fixture (`fixtures/NAME`) in its own process; resolves with its URL once it
 * prints `listening PORT`.
 */
export function startFixture(name, args = []) {
  const p = spawn(process.execPath, [fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url)), ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    p.stdout.on('data', (d) => {
      out += d;
      const m = /listening (\d+)/.exec(out);
      if (m) resolve({ url: `http://127.0.0.1:${m[1]}`, process: p });
    });
    p.once('exit', (code) => reject(new Error(`${name} exited ${code}`)));
  });
}

export const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

export function fmt(r) {
  return `${r.rps.toFixed(0).padStart(7)} req/s  p50 ${r.p50.toFixed(2).padStart(6)} ms  p99 ${r.p99.toFixed(2).padStart(6)} ms` +
    (r.errors || r.unexpected ? `  (${r.errors} errors, ${r.unexpected} unexpected status)` : '');
}
