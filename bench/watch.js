// bench:watch — Address Watch figures:
//   1. matching a 2,000-transaction block against 100k watched addresses vs 10 (per-block ms);
//   2. webhook deliveries per second from `rpcctl serve` to a loopback receiver;
//   3. block-to-webhook latency on anvil mining a block every second.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { ApiClient } from '../dist/client/index.js';
import { matchEvmBlock, TRANSFER_TOPIC } from '../dist/watch/match.js';
import { WatchRegistry } from '../dist/watch/registry.js';
import { median } from './load.js';
import { startServe } from './serve.js';

const DELIVERIES = Number(process.env.BENCH_DELIVERIES ?? 5000);
const LATENCY_BLOCKS = Number(process.env.BENCH_LATENCY_BLOCKS ?? 15);
const hex = (n) => `0x${randomBytes(n).toString('hex')}`;
const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];

// ---------------------------------------------------------------- 1. matching
function registryOf(n) {
  const r = new WatchRegistry();
  const rows = [];
  for (let i = 0; i < n; i++) {
    const a = hex(20);
    rows.push({ id: i, watch_id: `w_${i}`, account_id: 1 + (i % 500), network_environment_id: 1, network_slug: 'eth', address: a, address_key: a, created_at: '' });
  }
  r.load(rows);
  return { r, addresses: rows.map((x) => x.address_key) };
}

function blockOf(watched, hitsWanted) {
  const txs = [];
  const logs = [];
  for (let i = 0; i < 2000; i++) {
    const hash = hex(32);
    // Every tenth transaction is an ERC-20 transfer with its Transfer log.
    if (i % 10 === 0) {
      const token = hex(20);
      const from = hex(20);
      const to = i < hitsWanted * 10 ? watched[i % watched.length] : hex(20);
      txs.push({ hash, from, to: token, value: '0x0' });
      logs.push({ address: token, transactionHash: hash, logIndex: `0x${i.toString(16)}`, data: `0x${(1000 + i).toString(16).padStart(64, '0')}`,
        topics: [TRANSFER_TOPIC, `0x${from.slice(2).padStart(64, '0')}`, `0x${to.slice(2).padStart(64, '0')}`] });
    } else {
      txs.push({ hash, from: hex(20), to: hex(20), value: `0x${(i * 1e12).toString(16)}` });
    }
  }
  return { txs, logs };
}

/** Both sizes built first, then timed in alternating rounds so they share the machine's noise. */
function timeMatches(sizes, rounds = 15) {
  const cases = sizes.map((n) => {
    const { r, addresses } = registryOf(n);
    return { r, block: blockOf(addresses, 5), samples: [], hits: 0 };
  });
  for (const c of cases) for (let i = 0; i < 20; i++) matchEvmBlock(c.r, 1, c.block.txs, c.block.logs); // warm up
  for (let round = 0; round < rounds; round++) {
    for (const c of cases) {
      const t0 = performance.now();
      for (let i = 0; i < 20; i++) c.hits = matchEvmBlock(c.r, 1, c.block.txs, c.block.logs).length;
      c.samples.push((performance.now() - t0) / 20);
    }
  }
  return cases.map((c) => ({ ms: median(c.samples), hits: c.hits }));
}

console.log('bench:watch');
const [small, large] = timeMatches([10, 100_000]);
console.log('  1. match a 2,000-tx block (200 ERC-20 transfers), median of 15 alternating rounds x 20 blocks:');
console.log(`       10 watched addresses       ${small.ms.toFixed(3)} ms/block (${small.hits} hits)`);
console.log(`       100,000 watched addresses  ${large.ms.toFixed(3)} ms/block (${large.hits} hits)`);
console.log(`       ratio 100k/10: ${(large.ms / small.ms).toFixed(2)}x`);

// ---------------------------------------------------------------- helpers
function receiver(onRequest) {
  const server = createServer((req, res) => {
    req.on('data', () => {});
    req.on('end', () => {
      onRequest(req);
      res.writeHead(200).end('ok');
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({
    url: `http://127.0.0.1:${server.address().port}/hooks`,
    close: () => new Promise((r) => { server.closeAllConnections(); server.close(r); }),
  })));
}

async function merchant(serve) {
  const { user_id } = serve.admin('accounts', 'create', '--plan', 'pro');
  const key = serve.admin('keys', 'create', '--account', String(user_id));
  return { userId: user_id, client: new ApiClient({ baseUrl: serve.api, apiKey: key.api_key, secret: key.secret }) };
}

const baseConfig = {
  api: { host: '127.0.0.1', port: 0 },
  gateway: { host: '127.0.0.1', port: 0 },
  limits: { api_rps_per_ip: 1_000_000, api_rpm_per_account: 1_000_000 },
  webhooks: { allow_private_urls: true, timeout_ms: 5000 },
};

// ---------------------------------------------------------------- 2. deliveries per second
{
  const serve = await startServe({
    ...baseConfig,
    networks: [{ slug: 'eth', name: 'Ethereum', environments: [{ slug: 'mainnet', upstreams: ['http://127.0.0.1:1'] }] }],
  });
  let count = 0;
  let first = 0;
  let last = 0;
  const rx = await receiver(() => {
    count++;
    if (count === 1) first = performance.now();
    last = performance.now();
  });
  try {
    const { userId, client } = await merchant(serve);
    await client.request('PUT', '/v1/address-watch/webhook', { body: { url: rx.url, enabled: true } });
    await client.close();
    // Straight into the running service's outbox, as the scanners write it.
    const db = new DatabaseSync(join(serve.dataDir, 'rpcctl.db'));
    db.exec('PRAGMA busy_timeout = 5000');
    const insert = db.prepare(`INSERT INTO webhook_deliveries (webhook_id, account_id, event_id, type, network, body, credits, bill_method, is_test, status, attempts, next_attempt_at, created_at)
      VALUES (?, ?, NULL, 'payment', 'eth', ?, 30, 'webhook:payment', 0, 'pending', 0, ?, ?)`);
    db.exec('BEGIN');
    const now = Date.now();
    for (let i = 0; i < DELIVERIES; i++) {
      insert.run(`bench_${i}`, userId, JSON.stringify({ id: String(i), watch_id: 'w_bench', network: 'eth', address: hex(20), tx_hash: hex(32), block_height: i, type: 'payment', direction: 'in' }), now, new Date(now).toISOString());
    }
    db.exec('COMMIT');
    const deadline = Date.now() + 120_000;
    while (count < DELIVERIES && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const delivered = db.prepare(`SELECT count(*) AS n FROM webhook_deliveries WHERE status = 'delivered' AND webhook_id LIKE 'bench_%'`).get().n;
    const billed = db.prepare(`SELECT coalesce(sum(credits), 0) AS c FROM usage_daily WHERE account_id = ?`).get(userId).c;
    db.close();
    const secs = (last - first) / 1000;
    console.log(`  2. deliveries to a loopback receiver: ${count} received in ${secs.toFixed(2)} s = ${(count / secs).toFixed(0)} deliveries/s (aim >= 500/s); ${delivered} marked delivered, ${billed} credits billed`);
  } finally {
    await rx.close();
    await serve.stop();
  }
}

// ---------------------------------------------------------------- 3. block-to-webhook latency
{
  const anvilBin = new URL('../node_modules/.bin/anvil', import.meta.url).pathname;
  const anvil = spawn(anvilBin, ['--host', '127.0.0.1', '--port', '0', '--block-time', '1', '--accounts', '2'], { stdio: ['ignore', 'pipe', 'ignore'], detached: true });
  const anvilUrl = await new Promise((resolve) => {
    let out = '';
    anvil.stdout.on('data', (d) => {
      out += d;
      const m = /Listening on (\S+)/.exec(out);
      if (m) resolve(`http://${m[1]}`);
    });
  });
  const rpc = async (method, params = []) => {
    const res = await fetch(anvilUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
    return (await res.json()).result;
  };
  const serve = await startServe({
    ...baseConfig,
    networks: [{ slug: 'anvil', name: 'Anvil', environments: [{ slug: 'local', upstreams: [anvilUrl], confirmations: 1 }] }],
  });
  const received = new Map();
  const rx = await receiver((req) => { received.set(Number(req.headers['x-webhook-id'].slice(4)), performance.now()); });
  const seen = new Map(); // block height -> when the bench first saw it
  let polling = true;
  const poller = (async () => {
    while (polling) {
      const h = Number(await rpc('eth_blockNumber'));
      if (!seen.has(h)) seen.set(h, performance.now());
      await new Promise((r) => setTimeout(r, 5));
    }
  })();
  try {
    const [from, to] = await rpc('eth_accounts');
    const { client } = await merchant(serve);
    await client.request('PUT', '/v1/address-watch/webhook', { body: { url: rx.url, enabled: true, events: { block: false } } });
    await client.request('POST', '/v1/address-watch/addresses', { body: { network_slug: 'anvil', address: to } });
    for (let i = 0; i < LATENCY_BLOCKS; i++) {
      await rpc('eth_sendTransaction', [{ from, to, value: '0x1' }]);
      const h = Number(await rpc('eth_blockNumber'));
      while (Number(await rpc('eth_blockNumber')) === h) await new Promise((r) => setTimeout(r, 20));
    }
    await new Promise((r) => setTimeout(r, 1500));
    const { events } = await client.request('GET', '/v1/address-watch/events', { query: { limit: 500 } });
    await client.close();
    const lat = events.filter((e) => received.has(Number(e.id)) && seen.has(e.block_height)).map((e) => received.get(Number(e.id)) - seen.get(e.block_height));
    console.log(`  3. block-to-webhook latency on anvil (1 s blocks, confirmations 1, ${lat.length} blocks): p50 ${pct(lat, 0.5).toFixed(0)} ms, p90 ${pct(lat, 0.9).toFixed(0)} ms, max ${Math.max(...lat).toFixed(0)} ms`);
  } finally {
    polling = false;
    await poller;
    await rx.close();
    await serve.stop();
    process.kill(-anvil.pid, 'SIGKILL'); // the npm bin wraps the real binary: end the group
  }
}
