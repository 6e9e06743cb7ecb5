// bench:metrics — what metrics cost the gateway's hot path: the same JSON-RPC load through two
// `rpcctl serve` processes that differ only in `metrics.enabled`, in front of the same fast
// upstream, in alternating rounds; medians and the on/off ratio. Besides throughput (which on a
// shared machine moves with everyone else's load) it reports the serve process's own CPU time
// per request, from /proc, which is what metrics add to.
import { EventEmitter } from 'node:events';
import { readFileSync } from 'node:fs';
import { fmt, load, median, startFixture } from './load.js';
import { startServe } from './serve.js';

const rounds = Number(process.env.BENCH_ROUNDS ?? 6);
const seconds = Number(process.env.BENCH_SECONDS ?? 4);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 32);

/** User + system CPU seconds of a process so far. */
function cpuSeconds(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ 100)
}

/**
 * The metrics work of one request in isolation, in this process: the gateway's request hook
 * (a 'finish' listener, two label lookups, two counter increments) and the upstream latency
 * observation (two clock reads, one histogram). Less at the mercy of a busy machine than load.
 */
async function hookCostUs() {
  const { Metrics } = await import('../dist/metrics/index.js');
  const { gatewayMetrics } = await import('../dist/gateway/metrics.js');
  const { observeRequests } = await import('../dist/gateway/observe.js');
  const gm = gatewayMetrics(new Metrics({ processMetrics: false }));
  const ep = { id: 1, accountId: 1, paused: false, env: { id: 1, slug: 'mainnet', network: { slug: 'eth' } } };
  const registry = { get: () => ep };
  const server = new EventEmitter();
  observeRequests(server, registry, gm);
  const latency = gm.upstreamLatency.labels({ network: 'eth', env: 'mainnet', upstream: 'http://127.0.0.1:1' });
  const req = { url: '/00000000-0000-4000-8000-000000000000' };
  const once = () => {
    const res = new EventEmitter();
    res.req = req;
    res.statusCode = 200;
    server.emit('request', req, res);
    const t0 = performance.now();
    latency.observe((performance.now() - t0) / 1000);
    res.emit('finish');
  };
  const bare = () => {
    const res = new EventEmitter();
    res.req = req;
    res.statusCode = 200;
    res.emit('finish');
  };
  const time = (fn, n) => { const t = performance.now(); for (let i = 0; i < n; i++) fn(); return (performance.now() - t) * 1000 / n; };
  time(once, 200_000); time(bare, 200_000);
  const with_ = [], without = [];
  for (let r = 0; r < 7; r++) { with_.push(time(once, 200_000)); without.push(time(bare, 200_000)); }
  return median(with_) - median(without);
}

const METRICS_TOKEN = 'bench-metrics-token-0123456789';
const upstream = await startFixture('upstream.js');
const config = (enabled) => ({
  api: { host: '127.0.0.1', port: 0 },
  gateway: { host: '127.0.0.1', port: 0, probe_interval_ms: 3_600_000 },
  limits: { api_rps_per_ip: 1_000_000, api_rpm_per_account: 1_000_000 },
  // Scraped on the API listener with a token: no metrics listener port to find or share.
  metrics: { enabled, listen: false, token: METRICS_TOKEN },
  networks: [{ id: 1, slug: 'eth', name: 'Ethereum', environments: [{ id: 1, slug: 'mainnet', upstreams: [upstream.url] }],
    credits: { default: 20, methods: { eth_getBalance: 15 } } }],
  plans: [{ id: 1, slug: 'bench', name: 'Bench', included_credits: 1e12, rps_limit: 1_000_000_000, endpoints_limit: 10 }],
});
const [on, off] = await Promise.all([startServe(config(true)), startServe(config(false))]);
try {
  const { ApiClient } = await import('../dist/client/index.js');
  const target = async (serve) => {
    const { user_id } = serve.admin('accounts', 'create', '--plan', 'bench');
    const key = serve.admin('keys', 'create', '--account', String(user_id));
    const client = new ApiClient({ baseUrl: serve.api, apiKey: key.api_key, secret: key.secret });
    const { endpoint } = await client.createEndpoint({ name: 'bench', network_environment_id: 1 });
    await client.close();
    return endpoint.uuid;
  };
  const [onUuid, offUuid] = [await target(on), await target(off)];
  const body = '{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":["0x52908400098527886E0F7030069857D2E4169EE7","latest"]}';
  const headers = () => ({ 'content-type': 'application/json' });
  const run = async (serve, uuid, s) => {
    const cpu0 = cpuSeconds(serve.child.pid);
    const r = await load({ url: serve.gateway, path: `/${uuid}`, method: 'POST', body, headers, seconds: s, connections, expectStatus: 200 });
    r.cpuUs = (cpuSeconds(serve.child.pid) - cpu0) * 1e6 / r.requests;
    return r;
  };
  const show = (r) => `${fmt(r)}  cpu ${r.cpuUs.toFixed(1).padStart(6)} us/req`;

  await run(off, offUuid, 1);
  await run(on, onUuid, 1);
  const results = { on: [], off: [] };
  for (let r = 0; r < rounds; r++) {
    // Alternate which goes first, so drift on the shared machine hits both alike.
    const order = r % 2 === 0 ? ['off', 'on'] : ['on', 'off'];
    for (const which of order) {
      const res = which === 'on' ? await run(on, onUuid, seconds) : await run(off, offUuid, seconds);
      results[which].push(res);
      console.log(`round ${r + 1}: metrics ${which.padEnd(3)} ${show(res)}`);
    }
  }
  const summary = (rs) => ({ rps: median(rs.map((r) => r.rps)), p50: median(rs.map((r) => r.p50)), p99: median(rs.map((r) => r.p99)), cpuUs: median(rs.map((r) => r.cpuUs)), errors: 0, unexpected: 0 });
  const a = summary(results.on);
  const b = summary(results.off);
  console.log('\nmedians');
  console.log(`  metrics off  ${show(b)}`);
  console.log(`  metrics on   ${show(a)}`);
  const cpuPaired = results.on.map((r, i) => r.cpuUs / results.off[i].cpuUs);
  console.log(`  CPU per request on/off, medians: ${(a.cpuUs / b.cpuUs * 100).toFixed(1)} %; median of per-round ratios: ${(median(cpuPaired) * 100).toFixed(1)} % (aim <= 103 %)`);
  const paired = results.on.map((r, i) => r.rps / results.off[i].rps);
  console.log(`  throughput on/off, medians: ${(a.rps / b.rps * 100).toFixed(1)} %; median of per-round ratios: ${(median(paired) * 100).toFixed(1)} % (aim >= 97 %)`);
  console.log(`  p99 on/off: ${(a.p99 / b.p99).toFixed(2)}x`);
  const hook = await hookCostUs();
  console.log(`  metrics work per request in isolation: ${hook.toFixed(2)} us, ${(hook / b.cpuUs * 100).toFixed(2)} % of the gateway's CPU per request with metrics off`);
  const scrape = await fetch(`${on.api}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } }).then((r) => r.text());
  const requests = scrape.split('\n').filter((l) => l.startsWith('rpcctl_gateway_requests_total'));
  console.log(`  /metrics after the run: ${requests.join('; ')}`);
} finally {
  await Promise.all([on.stop(), off.stop()]);
  upstream.process.kill();
}
