// bench:cluster — multi-instance mode on this machine: gateway throughput with 1, 2 and 3
// `rpcctl serve` processes on one PostgreSQL and one Redis; the cost of the shared Redis RPS
// window against the in-memory one (ratio, same run, alternating rounds); and outbox
// throughput with 3 delivery workers against 1. Needs PostgreSQL and Redis:
// RPCCTL_BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test) and
// RPCCTL_BENCH_REDIS_URL (default redis://127.0.0.1:6379). Every figure is relative to a
// reference measured in the same run: the machine is shared and small.
import { spawn, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { fmt, load, median, startFixture } from './load.js';

const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const seconds = Number(process.env.BENCH_SECONDS ?? 3);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 24);
const deliveries = Number(process.env.BENCH_DELIVERIES ?? 1500);
const dbUrl = process.env.RPCCTL_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const redisUrl = process.env.RPCCTL_BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const bin = new URL('../bin/rpcctl.js', import.meta.url).pathname;
const masterKey = randomBytes(32).toString('hex');

async function sql(statement) {
  const c = new pg.Client({ connectionString: dbUrl });
  await c.connect();
  try { return await c.query(statement); } finally { await c.end(); }
}

const schema = `bench_${randomBytes(5).toString('hex')}`;
await sql(`CREATE SCHEMA ${schema}`);
const u = new URL(dbUrl);
u.searchParams.set('options', `-c search_path=${schema}`);
const schemaUrl = u.toString();

const dir = mkdtempSync(join(tmpdir(), 'rpcctl-bench-cluster-'));
const upstream = await startFixture('upstream.js');
// A fast webhook receiver in its own process, so the bench's load does not slow it.
const receiverSrc = join(dir, 'receiver.mjs');
writeFileSync(receiverSrc, `import { createServer } from 'node:http';
const s = createServer((req, res) => { req.resume(); req.on('end', () => res.writeHead(200).end('ok')); });
s.listen(0, '127.0.0.1', () => console.log('listening ' + s.address().port));`);
const receiver = await new Promise((resolve, reject) => {
  const p = spawn(process.execPath, [receiverSrc], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  p.stdout.on('data', (d) => { out += d; const m = /listening (\d+)/.exec(out); if (m) resolve({ url: `http://127.0.0.1:${m[1]}/hooks`, process: p }); });
  p.once('exit', (code) => reject(new Error(`receiver exited ${code}`)));
});

const configFile = join(dir, 'config.json');
writeFileSync(configFile, JSON.stringify({
  api: { host: '127.0.0.1', port: 0 },
  gateway: { host: '127.0.0.1', port: 0, probe_interval_ms: 3_600_000 },
  limits: { api_rps_per_ip: 1_000_000, api_rpm_per_account: 1_000_000 },
  webhooks: { allow_private_urls: true },
  redis: { key_prefix: `bench-${randomBytes(4).toString('hex')}:` },
  networks: [{ id: 1, slug: 'eth', name: 'Ethereum', environments: [{ id: 1, slug: 'mainnet', upstreams: [upstream.url] }], credits: { default: 20, methods: {} } }],
  plans: [{ id: 1, slug: 'bench', name: 'Bench', included_credits: 1e12, rps_limit: 1_000_000_000, endpoints_limit: 10, webhook_address_slots: 10 }],
}));

const env = { ...process.env, RPCCTL_MASTER_KEY: masterKey, RPCCTL_DATABASE_URL: '', RPCCTL_REDIS_URL: '' };
async function serve({ redis = true } = {}) {
  const dataDir = mkdtempSync(join(dir, 'i-'));
  const args = [bin, 'serve', '--config', configFile, '--data-dir', dataDir, '--database', schemaUrl, ...(redis ? ['--redis', redisUrl] : [])];
  const p = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env });
  let out = '';
  const urls = await new Promise((resolve, reject) => {
    const onData = (d) => {
      out += d;
      const api = /api\s+(http:\/\/\S+)/.exec(out);
      const gateway = /gateway\s+(http:\/\/\S+)/.exec(out);
      if (api && gateway && /instance/.test(out)) resolve({ api: api[1], gateway: gateway[1] });
    };
    p.stdout.on('data', onData);
    p.stderr.on('data', onData);
    p.once('exit', (code) => reject(new Error(`serve exited with ${code}:\n${out}`)));
  });
  return { ...urls, process: p, stop: () => new Promise((r) => { p.once('exit', r); p.kill('SIGTERM'); }) };
}
const admin = (...args) => JSON.parse(execFileSync(process.execPath, [bin, 'admin', ...args, '--json', '--data-dir', dir, '--database', schemaUrl], { encoding: 'utf8', env }));

const running = [];
try {
  running.push(await serve(), await serve(), await serve());
  const { user_id } = admin('accounts', 'create', '--plan', 'bench');
  const key = admin('keys', 'create', '--account', String(user_id));
  const { ApiClient, AddressWatchClient } = await import('../dist/client/index.js');
  const client = new ApiClient({ baseUrl: running[0].api, apiKey: key.api_key, secret: key.secret });
  const { endpoint } = await client.createEndpoint({ name: 'bench', network_environment_id: 1 });

  const body = '{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":["0x52908400098527886E0F7030069857D2E4169EE7","latest"]}';
  const headers = () => ({ 'content-type': 'application/json' });
  const loadOn = async (gateways, s) => {
    const per = Math.max(1, Math.floor(connections / gateways.length));
    const rs = await Promise.all(gateways.map((g) => load({ url: g, path: `/${endpoint.uuid}`, method: 'POST', body, headers, seconds: s, connections: per, expectStatus: 200 })));
    return { rps: rs.reduce((a, r) => a + r.rps, 0), p50: median(rs.map((r) => r.p50)), p99: Math.max(...rs.map((r) => r.p99)), errors: rs.reduce((a, r) => a + r.errors, 0), unexpected: rs.reduce((a, r) => a + r.unexpected, 0) };
  };
  const summary = (rs) => ({ rps: median(rs.map((r) => r.rps)), p50: median(rs.map((r) => r.p50)), p99: median(rs.map((r) => r.p99)), errors: rs.reduce((a, r) => a + r.errors, 0), unexpected: rs.reduce((a, r) => a + r.unexpected, 0) });

  // 1. Throughput over 1, 2, 3 instances (all on the shared Redis window), alternating.
  const gws = running.map((r) => r.gateway);
  await loadOn(gws, 1);
  const byN = { 1: [], 2: [], 3: [] };
  for (let r = 0; r < rounds; r++) {
    for (const n of [1, 2, 3]) {
      const res = await loadOn(gws.slice(0, n), seconds);
      byN[n].push(res);
      console.log(`round ${r + 1}: ${n} instance(s)  ${fmt(res)}`);
    }
  }
  const s1 = summary(byN[1]);
  console.log('\ngateway throughput, medians (one machine, 2 cores shared with the load generator)');
  for (const n of [1, 2, 3]) {
    const s = summary(byN[n]);
    console.log(`  ${n} instance(s)  ${fmt(s)}   x${(s.rps / s1.rps).toFixed(2)} of 1 instance`);
  }

  // 2. The Redis window against the in-memory one: one instance each, same endpoint, alternating.
  const memory = await serve({ redis: false });
  running.push(memory);
  const viaRedis = [];
  const viaMemory = [];
  await loadOn([memory.gateway], 1);
  for (let r = 0; r < rounds; r++) {
    viaRedis.push(await loadOn([running[0].gateway], seconds));
    viaMemory.push(await loadOn([memory.gateway], seconds));
  }
  const sr = summary(viaRedis);
  const sm = summary(viaMemory);
  console.log('\nRPS window: Redis (shared) vs in memory (one instance each)');
  console.log(`  in memory  ${fmt(sm)}`);
  console.log(`  Redis      ${fmt(sr)}`);
  console.log(`  p50 Redis/memory ${(sr.p50 / sm.p50).toFixed(2)}x, throughput Redis/memory ${(sr.rps / sm.rps * 100).toFixed(1)} %`);
  await memory.stop();
  running.pop();

  // 3. Outbox: time to deliver N queued deliveries with 3 workers (3 instances) vs 1.
  const watch = new AddressWatchClient(client);
  await watch.setWebhook({ url: receiver.url, enabled: true, events: { block: false } });
  await client.close();
  const enqueue = async (tag) => {
    await sql(`INSERT INTO ${schema}.webhook_deliveries (webhook_id, account_id, event_id, type, network, body, credits, bill_method, is_test, status, attempts, next_attempt_at, created_at)
      SELECT '${tag}_' || g, ${user_id}, NULL, 'payment', 'eth', '{"n":' || g || '}', 0, 'webhook:payment', 1, 'pending', 0, 0, now()::text FROM generate_series(1, ${deliveries}) g`);
    await sql(`NOTIFY rpcctl_outbox`);
  };
  const drained = async (tag) => {
    const t0 = performance.now();
    for (;;) {
      const { rows } = await sql(`SELECT count(*)::int AS n FROM ${schema}.webhook_deliveries WHERE webhook_id LIKE '${tag}_%' AND status = 'delivered'`);
      if (rows[0].n >= deliveries) return (performance.now() - t0) / 1000;
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  const outbox = { 1: [], 3: [] };
  for (let r = 0; r < rounds; r++) {
    for (const n of [3, 1]) {
      // Workers beyond n stop claiming: stop those instances for the 1-worker round.
      const extra = n === 1 ? running.splice(1) : [];
      await Promise.all(extra.map((x) => x.stop()));
      const tag = `r${r}n${n}`;
      const done = drained(tag);
      await enqueue(tag);
      const secs = await done;
      outbox[n].push(deliveries / secs);
      console.log(`round ${r + 1}: outbox with ${n} worker(s): ${(deliveries / secs).toFixed(0)} deliveries/s`);
      if (n === 1) running.push(await serve(), await serve());
    }
  }
  const o1 = median(outbox[1]);
  const o3 = median(outbox[3]);
  console.log('\noutbox throughput, medians');
  console.log(`  1 worker   ${o1.toFixed(0)} deliveries/s`);
  console.log(`  3 workers  ${o3.toFixed(0)} deliveries/s  (x${(o3 / o1).toFixed(2)})`);
  const dup = await sql(`SELECT count(*)::int AS n FROM ${schema}.webhook_deliveries WHERE status <> 'delivered'`);
  console.log(`  deliveries not delivered at the end: ${dup.rows[0].n}`);
} finally {
  await Promise.all(running.map((r) => r.stop()));
  upstream.process.kill();
  receiver.process.kill();
  await sql(`DROP SCHEMA ${schema} CASCADE`).catch(() => {});
  rmSync(dir, { recursive: true, force: true });
}
