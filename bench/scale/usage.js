// bench:scale, usage part — reads that cost what they return, and the usage flush.
// Builds a store in a temp data dir with 4.5M usage rows for one account (1,000 endpoints x 90
// days x 50 methods) and 4.5k for another (1 endpoint), plus an account with 100 endpoints,
// then prints, each as a ratio measured in the same run (interleaved rounds, medians):
//   account usage (days=90) at 4.5M rows vs 4.5k rows; gateway p99 during that call vs idle;
//   signed GET /v1/endpoints (100 endpoints) vs unsigned GET /v1/openapi.json;
//   flush cost per counter at 50k counters vs 1k; the first flush of a UTC day vs a normal one.
// BENCH_SCALE_SMALL=1 shrinks the big data set 100x (10 endpoints) for a quick check.
//
// The rows are written in bulk rather than through 4.5M gateway requests, but they are what
// the flush writes: usage_daily rows, and the account roll-up built from them by the same
// GROUP BY that migration 0018 uses (test/usage-rollups.test.ts holds the two equal).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { signatureHeaders } from '../../dist/client/index.js';
import { parseConfig } from '../../dist/config/index.js';
import { createAccount, createApiKey, Store } from '../../dist/store/index.js';
import { UsageMeter } from '../../dist/gateway/meter.js';
import { load, median, startFixture } from '../load.js';
import { startServe } from '../serve.js';

const small = process.env.BENCH_SCALE_SMALL === '1';
const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
const seconds = Number(process.env.BENCH_SECONDS ?? 2);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 16);
const DAYS = 90;
const METHODS = 50;
const BIG_ENDPOINTS = small ? 10 : 1000;
const LIST_ENDPOINTS = 100;
// One counter per endpoint x method of the big account: 50,000 (500 with BENCH_SCALE_SMALL).
const FLUSH_COUNTERS = BIG_ENDPOINTS * METHODS;
const FLUSH_SMALL = FLUSH_COUNTERS / 50;
const DAY_MS = 86_400_000;

const lines = [];
function report(label, ratio, op, aim, details) {
  const ok = op === '<=' ? ratio <= aim : ratio >= aim;
  const line = `  ${label}: ${ratio.toFixed(2)}x (aim ${op} ${aim}) ${ok ? 'ok' : 'MISSED'} — ${details}`;
  lines.push(line);
  console.log(line);
}
const log = (s) => console.log(`  · ${s}`);

const upstream = await startFixture('upstream.js');
const dataDir = mkdtempSync(join(tmpdir(), 'rpcctl-bench-usage-'));
const configInput = {
  api: { host: '127.0.0.1', port: 0 },
  gateway: { host: '127.0.0.1', port: 0, probe_interval_ms: 3_600_000 },
  limits: { api_rps_per_ip: 1_000_000_000, api_rpm_per_account: 1_000_000_000 },
  networks: [{ id: 1, slug: 'eth', name: 'Ethereum', environments: [{ id: 1, slug: 'mainnet', upstreams: [upstream.url] }],
    credits: { default: 20, methods: { eth_getBalance: 15 } } }],
  plans: [{ id: 1, slug: 'bench', name: 'Bench', included_credits: 1e12, rps_limit: 1_000_000_000, endpoints_limit: 100_000 }],
};
writeFileSync(join(dataDir, 'config.json'), JSON.stringify(configInput));

const today = new Date().toISOString().slice(0, 10);
const dayOf = (offset) => new Date(Date.parse(today) + offset * DAY_MS).toISOString().slice(0, 10);
const methodName = (m) => `method_${String(m).padStart(2, '0')}`;

// --- seed -------------------------------------------------------------------------------------
let t0 = performance.now();
const store = await Store.open({ dataDir, config: parseConfig(configInput), syncCatalog: 'always' });
const big = await createAccount(store, { planId: 1 });
const ref = await createAccount(store, { planId: 1 });
const lister = await createAccount(store, { planId: 1 });
const keys = {
  big: await createApiKey(store, { accountId: big.id }),
  ref: await createApiKey(store, { accountId: ref.id }),
  lister: await createApiKey(store, { accountId: lister.id }),
};
const raw = store.raw;
const now = new Date().toISOString();
const insertEndpoint = raw.prepare(`INSERT INTO endpoints (uuid, account_id, name, status, network_environment_id, allowed_ips, created_at, updated_at)
  VALUES (?, ?, ?, 'active', 1, '[]', ?, ?) RETURNING id`);
const endpointsOf = (account, n) => {
  const ids = [];
  for (let i = 0; i < n; i++) ids.push(insertEndpoint.get(crypto.randomUUID(), account, `e${i}`, now, now).id);
  return ids;
};
raw.exec('BEGIN');
const bigEndpoints = endpointsOf(big.id, BIG_ENDPOINTS);
const refEndpoints = endpointsOf(ref.id, 1);
endpointsOf(lister.id, LIST_ENDPOINTS);
raw.exec('COMMIT');
// Gateway traffic goes to an endpoint of its own account, so its metering touches neither data set.
const gwEndpoint = raw.prepare('SELECT uuid FROM endpoints WHERE account_id = ? LIMIT 1').get(lister.id).uuid;

const insertUsage = raw.prepare('INSERT INTO usage_daily (day, account_id, endpoint_id, method, requests, credits) VALUES (?, ?, ?, ?, ?, ?)');
let rows = 0;
for (let d = -(DAYS - 1); d <= 0; d++) {
  const day = dayOf(d);
  raw.exec('BEGIN');
  for (const [account, endpoints] of [[big.id, bigEndpoints], [ref.id, refEndpoints]]) {
    for (const e of endpoints) {
      for (let m = 0; m < METHODS; m++) {
        insertUsage.run(day, account, e, methodName(m), 1 + ((e + m) % 7), 20 * (1 + ((e + m) % 7)));
        rows++;
      }
    }
  }
  raw.exec('COMMIT');
}
raw.exec(`INSERT INTO usage_account_daily (day, account_id, method, requests, credits)
  SELECT day, account_id, method, sum(requests), sum(credits) FROM usage_daily GROUP BY day, account_id, method`);
log(`seeded ${rows.toLocaleString('en')} usage rows (${(BIG_ENDPOINTS * DAYS * METHODS).toLocaleString('en')} vs ${(DAYS * METHODS).toLocaleString('en')}), ${BIG_ENDPOINTS + 1 + LIST_ENDPOINTS} endpoints in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

// --- flush ------------------------------------------------------------------------------------
// Counters of the big account: FLUSH_COUNTERS (endpoint x method) on today's existing rows, on
// a day with no rows yet (the first flush of a UTC day), and FLUSH_SMALL on today's rows.
async function flushOnce(counters, atMs) {
  const meter = new UsageMeter(store);
  let n = 0;
  outer: for (const e of bigEndpoints) {
    for (let m = 0; m < METHODS; m++) {
      if (n++ >= counters) break outer;
      meter.record(e, big.id, methodName(m), 20, 1, atMs);
    }
  }
  // CPU time of this process (user + system: the store's writes included) as well as wall time:
  // on a shared, noisy machine the wall clock mostly measures the neighbours.
  const t = performance.now();
  const c = process.cpuUsage();
  await meter.flush();
  const cpu = process.cpuUsage(c);
  return { wall: performance.now() - t, cpu: (cpu.user + cpu.system) / 1000 };
}
const flushNormal = [];
const flushSmall = [];
const flushNewDay = [];
await flushOnce(FLUSH_COUNTERS, Date.now()); // warm-up
for (let r = 0; r < rounds; r++) {
  flushNormal.push(await flushOnce(FLUSH_COUNTERS, Date.now()));
  // A new UTC day each round, after today: never seen before, as at midnight.
  flushNewDay.push(await flushOnce(FLUSH_COUNTERS, Date.parse(today) + (r + 1) * DAY_MS + 1000));
  flushSmall.push(await flushOnce(FLUSH_SMALL, Date.now()));
}
await store.close();
const cpuOf = (xs) => median(xs.map((x) => x.cpu));
const wallOf = (xs) => median(xs.map((x) => x.wall));
const perCounter = cpuOf(flushNormal) * 1000 / FLUSH_COUNTERS;
const perCounterSmall = cpuOf(flushSmall) * 1000 / FLUSH_SMALL;

// --- serve ------------------------------------------------------------------------------------
const serve = await startServe(configInput, { dataDir });
const api = new Pool(serve.api, { connections: 4 });
const signed = (key, path) => signatureHeaders({ apiKey: key.api_key, secret: key.secret, method: 'GET', path });
async function timedGet(key, path, query = '') {
  const t = performance.now();
  const res = await api.request({ path: path + query, method: 'GET', headers: signed(key, path) });
  const body = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`GET ${path}${query}: ${res.statusCode} ${body}`);
  return performance.now() - t;
}
try {
  // Account usage, 90 days: the big account vs the small one, alternating calls.
  const usageBig = [];
  const usageRef = [];
  for (let i = 0; i < 3; i++) { await timedGet(keys.big, '/v1/account/usage', '?days=90'); await timedGet(keys.ref, '/v1/account/usage', '?days=90'); }
  for (let r = 0; r < rounds * 6; r++) {
    usageBig.push(await timedGet(keys.big, '/v1/account/usage', '?days=90'));
    usageRef.push(await timedGet(keys.ref, '/v1/account/usage', '?days=90'));
  }
  const endpointUsageBig = [];
  for (let r = 0; r < rounds; r++) endpointUsageBig.push(await timedGet(keys.big, '/v1/endpoints/usage', '?days=90'));

  // Gateway p99 idle vs while the big account's 90-day usage is asked for without pause.
  const body = '{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":["0x52908400098527886E0F7030069857D2E4169EE7","latest"]}';
  const viaGateway = () => load({ url: serve.gateway, path: `/${gwEndpoint}`, method: 'POST', body, headers: () => ({ 'content-type': 'application/json' }), seconds, connections, expectStatus: 200 });
  await viaGateway();
  const idle = [];
  const busy = [];
  let usageCallsDuringLoad = 0;
  for (let r = 0; r < rounds; r++) {
    idle.push(await viaGateway());
    let stop = false;
    const hammer = (async () => { while (!stop) { await timedGet(keys.big, '/v1/account/usage', '?days=90'); usageCallsDuringLoad++; } })();
    busy.push(await viaGateway());
    stop = true;
    await hammer;
  }

  // Signed GET /v1/endpoints with 100 endpoints vs the unsigned openapi.json of the same process.
  let cached = { second: -1, headers: {} };
  const listHeaders = () => {
    const second = Math.floor(Date.now() / 1000);
    if (cached.second !== second) cached = { second, headers: signatureHeaders({ apiKey: keys.lister.api_key, secret: keys.lister.secret, method: 'GET', path: '/v1/endpoints', timestamp: second }) };
    return cached.headers;
  };
  const openapi = () => load({ url: serve.api, path: '/v1/openapi.json', seconds, connections: 32, expectStatus: 200 });
  const listing = () => load({ url: serve.api, path: '/v1/endpoints', headers: listHeaders, seconds, connections: 32, expectStatus: 200 });
  await openapi();
  await listing();
  const base = [];
  const list = [];
  for (let r = 0; r < rounds; r++) {
    base.push(await openapi());
    list.push(await listing());
  }
  const failures = [...idle, ...busy, ...base, ...list].reduce((n, x) => n + x.errors + x.unexpected, 0);

  console.log('\nusage (bench/scale/usage.js)');
  report(`account usage days=90, ${(BIG_ENDPOINTS * DAYS * METHODS).toLocaleString('en')} rows vs ${(DAYS * METHODS).toLocaleString('en')}`,
    median(usageBig) / median(usageRef), '<=', 2,
    `median ${median(usageBig).toFixed(1)} ms vs ${median(usageRef).toFixed(1)} ms (issue: 6.1 s vs 11 ms); /v1/endpoints/usage days=90 on the big account ${median(endpointUsageBig).toFixed(1)} ms`);
  report('gateway p99 during account usage calls vs idle', median(busy.map((x) => x.p99)) / median(idle.map((x) => x.p99)), '<=', 1.5,
    `p99 ${median(busy.map((x) => x.p99)).toFixed(2)} ms vs ${median(idle.map((x) => x.p99)).toFixed(2)} ms, ${median(busy.map((x) => x.rps)).toFixed(0)} vs ${median(idle.map((x) => x.rps)).toFixed(0)} req/s, ${usageCallsDuringLoad} usage calls during load`);
  report(`signed GET /v1/endpoints (${LIST_ENDPOINTS} endpoints) vs unsigned openapi.json`, median(list.map((x) => x.rps)) / median(base.map((x) => x.rps)), '>=', 0.6,
    `${median(list.map((x) => x.rps)).toFixed(0)} vs ${median(base.map((x) => x.rps)).toFixed(0)} req/s (issue: 0.09x)`);
  report(`usage flush per counter, ${FLUSH_COUNTERS.toLocaleString('en')} counters vs ${FLUSH_SMALL.toLocaleString('en')}`, perCounter / perCounterSmall, '<=', 1.5,
    `${perCounter.toFixed(2)} vs ${perCounterSmall.toFixed(2)} CPU-µs per counter, one transaction each; ${cpuOf(flushNormal).toFixed(0)} CPU-ms, ${wallOf(flushNormal).toFixed(0)} ms wall per flush (issue: ~8.5 µs, 423 ms at 50k)`);
  report(`first usage flush of a UTC day vs a normal flush, ${FLUSH_COUNTERS.toLocaleString('en')} counters`, cpuOf(flushNewDay) / cpuOf(flushNormal), '<=', 1.5,
    `${cpuOf(flushNewDay).toFixed(0)} vs ${cpuOf(flushNormal).toFixed(0)} CPU-ms, ${wallOf(flushNewDay).toFixed(0)} vs ${wallOf(flushNormal).toFixed(0)} ms wall (issue: 673 ms at 10k)`);
  if (failures) console.log(`  WARNING: ${failures} requests failed or had an unexpected status`);
} finally {
  await api.close();
  await serve.stop();
  upstream.process.kill();
}
