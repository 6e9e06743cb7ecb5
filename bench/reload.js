// bench:reload — issue 35's reload test as a benchmark: JSON-RPC calls offered at 1,000 a second
// by the clock (bench/open-load.js, a process of its own) and 100 open newHeads subscriptions
// through `rpcctl serve` (2 gateway workers) in front of anvil, while SIGHUP reloads switch its
// config 20 times between two versions that differ in upstreams, method routing, integrity,
// plans, limits and log level (as test/reload.test.ts does). A third of the calls is eth_chainId
// (the gateway's cache answers it), the rest eth_blockNumber and eth_getBalance (anvil does).
//
// Reported per round and as medians: the rate answered against the rate offered, failed calls,
// calls not sent (the service a second behind), latency from when each call was due, the longest
// wait for any answer, dropped sockets and sockets notified after the last reload, serve's CPU per
// call. The references, in the same rounds, order rotating: the same load for as long with no
// reload (what this machine answers now; the ratio is what reloads cost), and a minimal node:http
// + undici proxy in front of the same anvil (what any Node proxy gets on this machine now).
//
// BENCH_ROUNDS (3), BENCH_RATE (1000), BENCH_RELOADS (20), BENCH_RELOAD_EVERY_MS (500: reloads
// start at most this often, so the reload leg lasts long enough to measure a rate), BENCH_SOCKETS
// (100), BENCH_WORKERS (2).
import { fork, spawn } from 'node:child_process';
import { loadavg } from 'node:os';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import { median, startFixture } from './load.js';
import { startServe } from './serve.js';

const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const rate = Number(process.env.BENCH_RATE ?? 1000);
const reloads = Number(process.env.BENCH_RELOADS ?? 20);
const reloadEveryMs = Number(process.env.BENCH_RELOAD_EVERY_MS ?? 500);
const socketCount = Number(process.env.BENCH_SOCKETS ?? 100);
const workers = Number(process.env.BENCH_WORKERS ?? 2);

const { PID_FILE, readReloadRecord } = await import('../dist/cli/serve/control.js');
const { ApiClient } = await import('../dist/client/index.js');

function cpuSeconds(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}
const load1 = () => loadavg().map((l) => l.toFixed(2)).join(' ');

async function startAnvil() {
  const bin = new URL('../node_modules/.bin/anvil', import.meta.url).pathname;
  // Its own process group: the npm bin is a wrapper around the real binary, and both must go.
  const child = spawn(bin, ['--host', '127.0.0.1', '--port', '0', '--accounts', '1', '--block-time', '1'], { stdio: ['ignore', 'pipe', 'inherit'], detached: true });
  let out = '';
  const url = await new Promise((resolve, reject) => {
    child.stdout.on('data', (d) => {
      out += d;
      const m = /Listening on (\S+)/.exec(out);
      if (m) resolve(`http://${m[1]}`);
    });
    child.once('exit', (code) => reject(new Error(`anvil exited with ${code}:\n${out}`)));
  });
  child.stdout.resume();
  const account = /\(0\) (0x[0-9a-fA-F]{40})/.exec(out)?.[1];
  return { url, account, stop: () => process.kill(-child.pid, 'SIGKILL') };
}

/** bench/open-load.js in a process of its own. */
function startLoad() {
  const child = fork(new URL('./open-load.js', import.meta.url).pathname, [], { execArgv: [], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const ask = (message, answer) => new Promise((resolve, reject) => {
    const onMessage = (m) => {
      if (m.type !== answer) return;
      child.off('message', onMessage);
      resolve(m);
    };
    child.on('message', onMessage);
    child.once('exit', (code) => reject(new Error(`the load generator exited with ${code}`)));
    child.send(message);
  });
  return {
    start: (o) => ask({ type: 'start', ...o }, 'started'),
    stop: () => ask({ type: 'stop' }, 'stats'),
  };
}

const anvil = await startAnvil();
const other = anvil.url.replace('127.0.0.1', 'localhost');

/** The two configs the reloads switch between (test/reload.test.ts's `version`). */
function version(v) {
  const b = v === 'b';
  return {
    api: { host: '127.0.0.1', port: 0 },
    gateway: { host: '127.0.0.1', port: 0, workers, ws: { max_sockets_per_endpoint: 500, max_subscriptions_per_socket: b ? 20 : 10 }, max_lag_blocks: b ? 7 : 5 },
    limits: { api_rps_per_ip: b ? 100_001 : 100_000, api_rpm_per_account: 100_000 },
    metrics: { listen: '127.0.0.1:0' },
    log: { level: b ? 'warn' : 'info' },
    shutdown: { drain_s: 0 },
    plans: [{ id: 1, slug: 'pro', name: 'Pro', included_credits: 1_000_000_000, rps_limit: b ? 100_001 : 100_000, endpoints_limit: 10 }],
    networks: [{
      slug: 'anvil', name: 'Anvil', family: 'evm',
      environments: [{ slug: 'local', upstreams: b ? [anvil.url, other] : [anvil.url], ws_upstreams: [anvil.url.replace('http', 'ws')] }],
      ...(b ? { integrity: [{ methods: ['eth_chainId'], k: 2, m: 2 }], upstream_methods: { [other]: { deny: ['eth_getBalance'] } } } : {}),
    }],
  };
}

const serve = await startServe(version('a'));
const configFile = join(serve.dataDir, 'config.json');
const proxy = await startFixture('min-proxy.js', [anvil.url]);

/** SIGHUP to serve (its serve.pid), then its outcome from reload.json, as `rpcctl admin reload` does. */
async function reloadTo(v) {
  writeFileSync(`${configFile}.tmp`, JSON.stringify(version(v)));
  renameSync(`${configFile}.tmp`, configFile);
  const pid = Number(readFileSync(join(serve.dataDir, PID_FILE), 'utf8').trim());
  const before = readReloadRecord(serve.dataDir);
  const seen = before?.pid === pid ? before.seq : 0;
  const t0 = performance.now();
  process.kill(pid, 'SIGHUP');
  for (;;) {
    const record = readReloadRecord(serve.dataDir);
    if (record?.pid === pid && record.seq > seen) {
      if (!record.ok) throw new Error(`reload refused: ${record.reason}`);
      return performance.now() - t0;
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}

const { user_id } = serve.admin('accounts', 'create', '--plan', 'pro');
const key = serve.admin('keys', 'create', '--account', String(user_id));
const client = new ApiClient({ baseUrl: serve.api, apiKey: key.api_key, secret: key.secret });
const { endpoint } = await client.createEndpoint({ name: 'bench', network_slug: 'anvil', env_slug: 'local' });
await client.close();
const path = `/${endpoint.uuid}`;
const callsTo = (p) => [
  { path: p, method: 'eth_blockNumber', params: [] },
  { path: p, method: 'eth_chainId', params: [] },
  { path: p, method: 'eth_getBalance', params: [anvil.account, 'latest'] },
];

// The subscriptions, open for the whole run: any close is a dropped socket.
const sockets = [];
let dropped = 0;
const notified = new Map();
await Promise.all(Array.from({ length: socketCount }, async () => {
  const ws = new WebSocket(`${serve.gateway.replace('http', 'ws')}${path}`);
  sockets.push(ws);
  await new Promise((resolve, reject) => { ws.once('open', resolve); ws.once('error', reject); });
  const subscribed = new Promise((resolve) => ws.once('message', resolve));
  ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_subscribe', params: ['newHeads'] }));
  await subscribed;
  ws.on('message', () => notified.set(ws, (notified.get(ws) ?? 0) + 1));
  ws.on('close', () => { dropped++; });
}));

/** How many sockets get a new head within 30 s from now. */
async function socketsNotified() {
  const before = new Map(notified);
  const got = () => sockets.filter((ws) => (notified.get(ws) ?? 0) > (before.get(ws) ?? 0)).length;
  const until = Date.now() + 30_000;
  while (got() < sockets.length && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
  return got();
}

/** One leg: the load for `seconds`, or through the reloads when `withReloads`; what it got. */
async function leg({ target, withReloads, seconds, cpuPid }) {
  const gen = startLoad();
  const cpu0 = cpuPid ? cpuSeconds(cpuPid) : 0;
  const dropped0 = dropped;
  const t0 = performance.now();
  await gen.start({ origin: new URL(target.url).origin, rate, connections: 256, calls: callsTo(target.path) });
  const reloadMs = [];
  if (withReloads) {
    for (let i = 0; i < reloads; i++) {
      const next = t0 + (i + 1) * reloadEveryMs;
      reloadMs.push(await reloadTo(i % 2 === 0 ? 'b' : 'a'));
      if (performance.now() < next) await new Promise((r) => setTimeout(r, next - performance.now()));
    }
  } else {
    await new Promise((r) => setTimeout(r, seconds * 1000));
  }
  const s = await gen.stop();
  s.cpuSeconds = cpuPid ? cpuSeconds(cpuPid) - cpu0 : NaN;
  s.cpuUs = s.cpuSeconds * 1e6 / Math.max(1, s.ok);
  s.reloadMs = median(reloadMs.length ? reloadMs : [NaN]);
  s.elapsed = (performance.now() - t0) / 1000;
  if (withReloads) s.notified = await socketsNotified();
  s.dropped = dropped - dropped0;
  return s;
}

const show = (s) => `answered ${s.okRate.toFixed(0).padStart(5)}/s of ${rate}/s (${(s.okRate / rate * 100).toFixed(1).padStart(5)} %)  `
  + `${s.failed} failed  ${String(s.skipped).padStart(6)} not sent  p50 ${s.p50.toFixed(0).padStart(5)} ms  p99 ${s.p99.toFixed(0).padStart(5)} ms  `
  + `longest wait ${s.maxAnswerGapMs.toFixed(0).padStart(5)} ms` + (Number.isNaN(s.cpuUs) ? '' : `  serve cpu ${s.cpuUs.toFixed(0)} us/call`);

const gatewayTarget = { url: serve.gateway, path };
const proxyTarget = { url: proxy.url, path: '/' };
const results = { reloads: [], steady: [], proxy: [] };
console.log(`bench:reload  ${rate}/s offered, ${reloads} reloads (one at most every ${reloadEveryMs} ms), ${socketCount} sockets, ${workers} gateway workers; load average ${load1()}`);
try {
  // Warm-up, not counted: the first seconds of load compile the gateway's paths and open the connections.
  await leg({ target: gatewayTarget, seconds: 5 });
  await leg({ target: proxyTarget, seconds: 3 });
  for (let r = 0; r < rounds; r++) {
    // The reload leg first sets the legs' length; then the references, in an order that rotates.
    const withReloads = await leg({ target: gatewayTarget, withReloads: true, cpuPid: serve.child.pid });
    results.reloads.push(withReloads);
    const seconds = withReloads.elapsed;
    const refs = r % 2 === 0 ? ['steady', 'proxy'] : ['proxy', 'steady'];
    for (const which of refs) {
      results[which].push(await leg(which === 'steady'
        ? { target: gatewayTarget, seconds, cpuPid: serve.child.pid }
        : { target: proxyTarget, seconds, cpuPid: proxy.process.pid }));
    }
    console.log(`round ${r + 1} (${seconds.toFixed(1)} s a leg, load average ${load1()})`);
    // What the reloads cost serve beyond the calls: its CPU in the reload leg less the calls at the no-reload leg's price.
    withReloads.cpuPerReload = (withReloads.cpuSeconds - withReloads.ok * results.steady.at(-1).cpuUs / 1e6) / reloads;
    console.log(`  ${reloads} reloads   ${show(withReloads)}  ${withReloads.dropped} dropped, ${withReloads.notified}/${socketCount} notified after; `
      + `a reload took ${withReloads.reloadMs.toFixed(0)} ms (median), about ${(withReloads.cpuPerReload * 1000).toFixed(0)} ms of serve's CPU`);
    console.log(`  no reload    ${show(results.steady.at(-1))}`);
    console.log(`  min proxy    ${show(results.proxy.at(-1))}`);
    for (const s of [withReloads, results.steady.at(-1), results.proxy.at(-1)]) if (s.failures.length) console.log(`  failures: ${s.failures.join(' | ')}`);
  }
  const m = (list, f) => median(list.map(f));
  const rl = m(results.reloads, (s) => s.okRate);
  const st = m(results.steady, (s) => s.okRate);
  const px = m(results.proxy, (s) => s.okRate);
  const sum = (list, f) => list.reduce((a, s) => a + f(s), 0);
  console.log('\nmedians');
  console.log(`  with ${reloads} reloads: answered ${rl.toFixed(0)}/s of ${rate}/s offered (${(rl / rate * 100).toFixed(1)} %); p99 ${m(results.reloads, (s) => s.p99).toFixed(0)} ms; longest wait ${m(results.reloads, (s) => s.maxAnswerGapMs).toFixed(0)} ms; serve cpu ${m(results.reloads, (s) => s.cpuUs).toFixed(0)} us/call`);
  console.log(`                    a reload took ${m(results.reloads, (s) => s.reloadMs).toFixed(0)} ms, about ${(m(results.reloads, (s) => s.cpuPerReload) * 1000).toFixed(0)} ms of serve's CPU`);
  console.log(`  no reload:        answered ${st.toFixed(0)}/s; p99 ${m(results.steady, (s) => s.p99).toFixed(0)} ms; longest wait ${m(results.steady, (s) => s.maxAnswerGapMs).toFixed(0)} ms; serve cpu ${m(results.steady, (s) => s.cpuUs).toFixed(0)} us/call`);
  console.log(`  minimal proxy:    answered ${px.toFixed(0)}/s; proxy cpu ${m(results.proxy, (s) => s.cpuUs).toFixed(0)} us/call`);
  console.log(`  rate with reloads / without: ${(rl / st * 100).toFixed(1)} %; gateway without reloads / minimal proxy: ${(st / px * 100).toFixed(1)} %`);
  console.log(`  all rounds: ${sum(results.reloads, (s) => s.ok)} calls answered through ${rounds * reloads} reloads, ${sum([...results.reloads, ...results.steady], (s) => s.failed)} failed, `
    + `${dropped} sockets dropped, ${Math.min(...results.reloads.map((s) => s.notified))}/${socketCount} notified after each reload leg at least; load average ${load1()}`);
} finally {
  for (const ws of sockets) ws.close(1000);
  await serve.stop();
  proxy.process.kill();
  anvil.stop();
}
