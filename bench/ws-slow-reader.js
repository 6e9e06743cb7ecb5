// bench:ws-slow-reader — how much a WebSocket client that sends calls and never reads the
// answers grows `rpcctl serve` (RSS, MiB) before the gateway cuts it, with answers of 512 KiB.
// The upstream runs in this process, the serve apart, so the figure is the serve's own.
// BENCH_COMPARE=/path/to/other/checkout (built) adds that version, in alternating rounds.
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import { median } from './load.js';
import { startServe } from './serve.js';

const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
const calls = Number(process.env.BENCH_CALLS ?? 2000);
const compare = process.env.BENCH_COMPARE;
const rssMb = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;

const BIG = JSON.stringify('a'.repeat(512 * 1024));
const upstream = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const call = JSON.parse(Buffer.concat(chunks).toString());
    const one = (c) => `{"jsonrpc":"2.0","id":${JSON.stringify(c.id ?? null)},"result":${c.method === 'eth_big' ? BIG : '"0x1"'}}`;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(Array.isArray(call) ? `[${call.map(one).join(',')}]` : one(call));
  });
});
await new Promise((r) => upstream.listen(0, '127.0.0.1', r));
const upstreamUrl = `http://127.0.0.1:${upstream.address().port}`;

async function serveOf(root) {
  const serve = await startServe({
    api: { host: '127.0.0.1', port: 0 },
    gateway: { host: '127.0.0.1', port: 0, probe_interval_ms: 3_600_000 },
    limits: { api_rps_per_ip: 1_000_000, api_rpm_per_account: 1_000_000 },
    networks: [{ id: 1, slug: 'eth', name: 'Ethereum', environments: [{ id: 1, slug: 'mainnet', upstreams: [upstreamUrl] }] }],
    plans: [{ id: 1, slug: 'bench', name: 'Bench', included_credits: 1e15, rps_limit: 1_000_000_000, endpoints_limit: 10 }],
  }, root ? { bin: join(root, 'bin', 'rpcctl.js') } : {});
  const { user_id } = serve.admin('accounts', 'create', '--plan', 'bench');
  const key = serve.admin('keys', 'create', '--account', String(user_id));
  const { ApiClient } = await import('../dist/client/index.js');
  const client = new ApiClient({ baseUrl: serve.api, apiKey: key.api_key, secret: key.secret });
  const { endpoint } = await client.createEndpoint({ name: 'bench', network_environment_id: 1 });
  await client.close();
  // The gateway's workers learn of a new endpoint on their next registry reload.
  for (let i = 0; ; i++) {
    const r = await fetch(`${serve.gateway}/${endpoint.uuid}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}' });
    if (r.status === 200) break;
    if (i > 200) throw new Error(`the endpoint never answered (HTTP ${r.status})`);
    await new Promise((res) => setTimeout(res, 50));
  }
  return { serve, url: `${serve.gateway.replace('http', 'ws')}/${endpoint.uuid}` };
}

/** One never-reading client: sends `calls` in bursts, then the serve's peak RSS growth over 5 s. */
async function round({ serve, url }) {
  const pid = serve.child.pid;
  const base = rssMb(pid);
  let peak = base;
  const timer = setInterval(() => { peak = Math.max(peak, rssMb(pid)); }, 20);
  const ws = new WebSocket(url);
  await new Promise((resolve, reject) => { ws.once('open', resolve); ws.once('error', reject); });
  ws.pause();
  for (let id = 0; id < calls;) {
    for (let i = 0; i < 200 && id < calls; i++) ws.send(`{"jsonrpc":"2.0","id":${++id},"method":"eth_big","params":[]}`);
    await new Promise((r) => setTimeout(r, 10));
  }
  await new Promise((r) => setTimeout(r, 5000));
  clearInterval(timer);
  ws.terminate();
  return peak - base;
}

// A fresh serve for every measurement: RSS does not shrink, so a second client on the same
// process would grow it less for the room the first one left.
const a = [];
const b = [];
for (let r = 0; r < rounds; r++) {
  const order = compare && r % 2 === 1 ? [compare, undefined] : [undefined, compare];
  for (const root of order) {
    const s = await serveOf(root);
    try {
      (root === undefined ? a : b).push(await round(s));
    } finally {
      await s.serve.stop();
    }
    if (!compare) break;
  }
  console.log(`round ${r + 1}: this ${a.at(-1).toFixed(0)} MiB${compare ? `, compared ${b.at(-1).toFixed(0)} MiB` : ''}`);
}
upstream.close();
console.log(`\nserve RSS growth from one never-reading client (${calls} calls, 512 KiB answers), medians:`);
console.log(`  this checkout   ${median(a).toFixed(0)} MiB (aim < 64 MiB)`);
if (compare) console.log(`  compared        ${median(b).toFixed(0)} MiB (${compare}); this/compared ${(median(a) / median(b)).toFixed(2)}`);
