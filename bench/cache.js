// bench:cache — a realistic read mix (60 % by-hash and finalized reads, 40 % head reads) through
// two gateways in front of the same node (10 ms away): one with the finality cache, one with
// `cache_max_bytes: 0`. Alternating rounds; reports upstream calls per client call and p50
// latency, cached against uncached, as ratios of medians.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { fmt, load, median, startFixture } from './load.js';
import { startServe } from './serve.js';

const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
const seconds = Number(process.env.BENCH_SECONDS ?? 4);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 16);
const delayMs = Number(process.env.BENCH_UPSTREAM_DELAY_MS ?? 10);

const node = await startFixture('chain-upstream.js', [String(delayMs)]);
const upstreamCalls = async () => Number(await (await request(node.url)).body.text());

const config = (cacheBytes) => ({
  api: { host: '127.0.0.1', port: 0 },
  gateway: { host: '127.0.0.1', port: 0, probe_interval_ms: 500, cache_max_bytes: cacheBytes },
  limits: { api_rps_per_ip: 1_000_000, api_rpm_per_account: 1_000_000 },
  networks: [{ id: 1, slug: 'eth', name: 'Ethereum', environments: [{ id: 1, slug: 'mainnet', upstreams: [node.url], confirmations: 12 }] }],
  plans: [{ id: 1, slug: 'bench', name: 'Bench', included_credits: 1e12, rps_limit: 1_000_000_000, endpoints_limit: 10 }],
});

async function gateway(serve) {
  const { user_id } = serve.admin('accounts', 'create', '--plan', 'bench');
  const key = serve.admin('keys', 'create', '--account', String(user_id));
  const { ApiClient } = await import('../dist/client/index.js');
  const client = new ApiClient({ baseUrl: serve.api, apiKey: key.api_key, secret: key.secret });
  const { endpoint } = await client.createEndpoint({ name: 'bench', network_environment_id: 1 });
  await client.close();
  return endpoint.uuid;
}

// Skewed like real traffic: recent final blocks and their transactions are asked for most.
const recent = () => 936 - Math.floor(Math.random() ** 4 * 900);
const txHash = () => `0xa${(recent() * 100 + Math.floor(Math.random() * 20)).toString(16).padStart(63, '0')}`;
const MIX = [
  [0.20, () => ['eth_getTransactionReceipt', [txHash()]]],
  [0.15, () => ['eth_getTransactionByHash', [txHash()]]],
  [0.15, () => ['eth_getBlockByNumber', [`0x${recent().toString(16)}`, false]]],
  [0.10, () => ['eth_chainId', []]],
  [0.15, () => ['eth_blockNumber', []]],
  [0.15, () => ['eth_getBalance', ['0x52908400098527886E0F7030069857D2E4169EE7', 'latest']]],
  [0.10, () => ['eth_call', [{ to: '0x1111111111111111111111111111111111111111', data: '0x70a08231' }, 'latest']]],
];
let id = 0;
function body() {
  let r = Math.random();
  for (const [p, f] of MIX) {
    if ((r -= p) <= 0) {
      const [method, params] = f();
      return JSON.stringify({ jsonrpc: '2.0', id: ++id, method, params });
    }
  }
  return '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}';
}

const cached = await startServe(config(64 * 1024 * 1024));
const plain = await startServe(config(0));
try {
  const targets = { cached: { serve: cached, uuid: await gateway(cached) }, plain: { serve: plain, uuid: await gateway(plain) } };
  await new Promise((r) => setTimeout(r, 1500)); // a probe round: finalized height known
  const run = async (name, s) => {
    const t = targets[name];
    const before = await upstreamCalls();
    const r = await load({ url: t.serve.gateway, path: `/${t.uuid}`, method: 'POST', body, headers: () => ({ 'content-type': 'application/json' }), seconds: s, connections, expectStatus: 200 });
    // Probe calls (a few per second) are in the count too, in both.
    return { ...r, upstreamPerCall: (await upstreamCalls() - before) / r.requests };
  };
  // Warm both (a long-running gateway's cache is warm; this measures that steady state).
  await run('plain', seconds);
  await run('cached', seconds);
  const res = { cached: [], plain: [] };
  for (let i = 0; i < rounds; i++) {
    for (const name of i % 2 ? ['cached', 'plain'] : ['plain', 'cached']) {
      const r = await run(name, seconds);
      res[name].push(r);
      console.log(`round ${i + 1} ${name.padEnd(6)} ${fmt(r)}  upstream calls per call ${r.upstreamPerCall.toFixed(3)}`);
    }
  }
  const m = (name, k) => median(res[name].map((r) => r[k]));
  console.log('\nmedians (mix: 60 % by-hash/finalized reads, 40 % head reads; node 10 ms away)');
  console.log(`  upstream calls per client call: cached ${m('cached', 'upstreamPerCall').toFixed(3)}, uncached ${m('plain', 'upstreamPerCall').toFixed(3)}`);
  console.log(`  upstream calls saved: ${((1 - m('cached', 'upstreamPerCall') / m('plain', 'upstreamPerCall')) * 100).toFixed(1)} %`);
  console.log(`  p50 cached/uncached: ${(m('cached', 'p50') / m('plain', 'p50')).toFixed(2)}x (${m('cached', 'p50').toFixed(2)} ms vs ${m('plain', 'p50').toFixed(2)} ms)`);
  console.log(`  throughput cached/uncached: ${(m('cached', 'rps') / m('plain', 'rps')).toFixed(2)}x`);
  await new Promise((r) => setTimeout(r, 600)); // the state file is written each probe round
  const state = JSON.parse(readFileSync(join(cached.dataDir, 'gateway-upstreams.json'), 'utf8'));
  const c = state.cache;
  console.log(`  cache: ${c.hits} hits, ${c.misses} misses of cacheable calls (hit rate ${(c.hits / (c.hits + c.misses) * 100).toFixed(1)} %), ${c.entries} answers in ${(c.bytes / 1048576).toFixed(1)} MiB`);
  if ([...res.cached, ...res.plain].some((r) => r.errors || r.unexpected)) console.log('  WARNING: some requests failed; see rounds above');
} finally {
  await Promise.all([cached.stop(), plain.stop()]);
  node.process.kill();
}
