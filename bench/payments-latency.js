// bench:payments-latency — block → `paid` webhook latency of a payment order on anvil: from the
// moment the bench first sees the block holding the payment to the `paid` webhook at a loopback
// receiver (funding, screening against the sanctions list, the transition and its delivery).
// With BENCH_REF_BIN=<another checkout>/bin/rpcctl.js (its build) the same rounds run against
// both, interleaved (one payment to each per round), each with its own defaults; medians.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { ApiClient } from '../dist/client/index.js';
import { median } from './load.js';
import { startServe } from './serve.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 12);
const REF = process.env.BENCH_REF_BIN;
const hex = (n) => `0x${randomBytes(n).toString('hex')}`;
const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];

function receiver(onBody) {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => { body += d; });
    req.on('end', () => {
      const at = performance.now();
      try { onBody(JSON.parse(body), at); } catch { /* not ours */ }
      res.writeHead(200).end('ok');
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({
    url: `http://127.0.0.1:${server.address().port}/hooks`,
    close: () => new Promise((r) => { server.closeAllConnections(); server.close(r); }),
  })));
}

const anvilBin = new URL('../node_modules/.bin/anvil', import.meta.url).pathname;
// Blocks on demand (evm_mine), so a payment's block is mined when the bench says, not on a clock.
const anvil = spawn(anvilBin, ['--host', '127.0.0.1', '--port', '0', '--no-mining', '--accounts', '2'], { stdio: ['ignore', 'pipe', 'ignore'], detached: true });
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

const config = {
  api: { host: '127.0.0.1', port: 0 },
  gateway: { host: '127.0.0.1', port: 0 },
  limits: { api_rps_per_ip: 1_000_000, api_rpm_per_account: 1_000_000 },
  webhooks: { allow_private_urls: true, timeout_ms: 5000 },
  networks: [{ slug: 'anvil', name: 'Anvil', environments: [{ slug: 'local', upstreams: [anvilUrl], confirmations: 1 }] }],
};

const paid = new Map(); // payment_id -> when its `paid` webhook arrived
const rx = await receiver((body, at) => { if (body.type === 'payment_order' && body.event === 'paid') paid.set(body.payment_id, at); });
const trees = [{ name: 'this tree', bin: undefined }, ...(REF ? [{ name: `reference (${REF})`, bin: REF }] : [])];
try {
  for (const t of trees) {
    t.serve = await startServe(config, { bin: t.bin });
    const { user_id } = t.serve.admin('accounts', 'create', '--plan', 'pro');
    const key = t.serve.admin('keys', 'create', '--account', String(user_id));
    t.client = new ApiClient({ baseUrl: t.serve.api, apiKey: key.api_key, secret: key.secret });
    t.samples = [];
  }
  const [from] = await rpc('eth_accounts');
  await rpc('evm_mine');
  for (let round = 0; round < ROUNDS + 1; round++) {
    // Alternate who goes first, so neither always pays on a freshly idle machine.
    for (const t of round % 2 ? [...trees].reverse() : trees) {
      const address = hex(20);
      const { payment: { payment_id } } = await t.client.request('POST', '/v1/payments', {
        body: { order_id: `bench-${round}-${hex(4)}`, network_slug: 'anvil', amount: '0.000000000000000001', address, webhook_url: rx.url },
      });
      // Let the scanner reach the head first (a new watch starts after it).
      await new Promise((r) => setTimeout(r, 1500));
      await rpc('eth_sendTransaction', [{ from, to: address, value: '0x1' }]);
      await rpc('evm_mine');
      const minedAt = performance.now();
      const deadline = Date.now() + 30_000;
      while (!paid.has(payment_id) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
      if (!paid.has(payment_id)) throw new Error(`${t.name}: no paid webhook for ${payment_id} within 30 s`);
      // Round 0 warms up (JIT, first scanner steps).
      if (round > 0) t.samples.push(paid.get(payment_id) - minedAt);
    }
  }
  console.log(`bench:payments-latency — block mined → \`paid\` webhook, anvil, confirmations 1, sanctions-list screening, ${ROUNDS} interleaved rounds`);
  for (const t of trees) {
    console.log(`  ${t.name}: median ${median(t.samples).toFixed(0)} ms, p90 ${pct(t.samples, 0.9).toFixed(0)} ms, min ${Math.min(...t.samples).toFixed(0)} ms, max ${Math.max(...t.samples).toFixed(0)} ms`);
  }
  if (trees.length === 2) console.log(`  ratio this/reference (medians): ${(median(trees[0].samples) / median(trees[1].samples)).toFixed(2)}`);
} finally {
  for (const t of trees) {
    await t.client?.close();
    await t.serve?.stop();
  }
  await rx.close();
  process.kill(-anvil.pid, 'SIGKILL'); // the npm bin wraps the real binary: end the group
}
