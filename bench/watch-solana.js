// bench:watch-solana — does the block-centric Solana scanner keep up with mainnet's 2.5 slots/s
// while 10,000 addresses are watched? A real `rpcctl serve` follows a synthetic Solana node
// (JSON-RPC: getSlot, getBlocks, getBlock with `encoding: json`, `transactionDetails: full`)
// that produces a slot every 400 ms, one in ten skipped, each block BENCH_SOLANA_TXS
// transactions (SOL transfers, and every fifth an SPL transfer with its token balances), a
// few of them paying watched wallets. Figures, as ratios against a reference measured in the
// same run (the node's own production), medians of interleaved rounds:
//   steady rounds: slots followed per slot produced (1.00 = keeping up) and the lag left;
//   burst rounds:  a backlog of BENCH_SOLANA_BURST slots appears at once; the slots/s the
//                  scanner drains it at, against 2.5 slots/s (the headroom);
//   RPC calls per slot, by method (they do not grow with the watched addresses).
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { getAddressDecoder, getBase58Decoder } from '@solana/kit';
import { ApiClient } from '../dist/client/index.js';
import { median } from './load.js';
import { startServe } from './serve.js';

const TXS = Number(process.env.BENCH_SOLANA_TXS ?? 1500);
const WATCHED = Number(process.env.BENCH_SOLANA_WATCHED ?? 10_000);
const ROUNDS = Number(process.env.BENCH_SOLANA_ROUNDS ?? 3);
const STEADY_S = Number(process.env.BENCH_SOLANA_STEADY_S ?? 12);
const BURST = Number(process.env.BENCH_SOLANA_BURST ?? 100);
const SLOT_MS = 400;
const USDC = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';

const b58addr = getAddressDecoder();
const b58 = getBase58Decoder();
const addressPool = Array.from({ length: 20_000 }, () => b58addr.decode(randomBytes(32)));
const sigPool = Array.from({ length: 4096 }, () => b58.decode(randomBytes(64)));
const watched = Array.from({ length: WATCHED }, () => b58addr.decode(randomBytes(32)));
const pick = (pool) => pool[Math.floor(Math.random() * pool.length)];

// ---------------------------------------------------------------- the synthetic node
const blocks = new Map(); // slot -> { text, hash, parentSlot, parentHash, sigs }
let processed = 100; // the open slot
let lastProduced = { slot: 99, hash: b58.decode(randomBytes(32)) };
const calls = new Map();
const produced = [];

function blockJson(slot) {
  const txs = [];
  for (let i = 0; i < TXS; i++) {
    const payer = pick(addressPool);
    // Three watched wallets paid per slot in SOL, one in USDC: hits to record.
    const to = i < 3 ? pick(watched) : pick(addressPool);
    const sig = sigPool[(slot * TXS + i) % sigPool.length];
    if (i % 5 === 3) {
      const owner = i === 3 ? pick(watched) : pick(addressPool);
      const src = pick(addressPool);
      const dst = pick(addressPool);
      txs.push({
        transaction: { signatures: [sig], message: { accountKeys: [payer, src, dst, USDC, 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA'] } },
        meta: {
          err: null, fee: 5000, preBalances: [1_000_000_000, 2_039_280, 2_039_280, 1, 1], postBalances: [999_995_000, 2_039_280, 2_039_280, 1, 1],
          preTokenBalances: [{ accountIndex: 1, mint: USDC, owner: payer, uiTokenAmount: { amount: '90000000', decimals: 6 } }, { accountIndex: 2, mint: USDC, owner, uiTokenAmount: { amount: '0', decimals: 6 } }],
          postTokenBalances: [{ accountIndex: 1, mint: USDC, owner: payer, uiTokenAmount: { amount: '65000000', decimals: 6 } }, { accountIndex: 2, mint: USDC, owner, uiTokenAmount: { amount: '25000000', decimals: 6 } }],
          loadedAddresses: { writable: [], readonly: [] },
        },
      });
    } else {
      txs.push({
        transaction: { signatures: [sig], message: { accountKeys: [payer, to, '11111111111111111111111111111111'] } },
        meta: { err: null, fee: 5000, preBalances: [5_000_000_000, 0, 1], postBalances: [3_999_995_000, 1_000_000_000, 1], preTokenBalances: [], postTokenBalances: [], loadedAddresses: { writable: [], readonly: [] } },
      });
    }
  }
  return txs;
}

function produce() {
  const slot = processed;
  // One slot in ten has no block.
  if (Math.random() >= 0.1) {
    const hash = b58.decode(randomBytes(32));
    const txs = blockJson(slot);
    const head = { blockhash: hash, previousBlockhash: lastProduced.hash, parentSlot: lastProduced.slot, blockHeight: slot, blockTime: Math.floor(Date.now() / 1000) };
    blocks.set(slot, { head, text: JSON.stringify({ ...head, transactions: txs }), sigs: txs.map((t) => t.transaction.signatures[0]) });
    lastProduced = { slot, hash };
  }
  produced.push(slot);
  processed = slot + 1;
}

function answer(call) {
  const p = call.params ?? [];
  calls.set(call.method, (calls.get(call.method) ?? 0) + 1);
  const ok = (result) => JSON.stringify({ jsonrpc: '2.0', id: call.id, result });
  const fail = (code, message) => JSON.stringify({ jsonrpc: '2.0', id: call.id, error: { code, message } });
  const confirmed = lastProduced.slot;
  switch (call.method) {
    case 'getHealth': return ok('ok');
    case 'getVersion': return ok({ 'solana-core': 'bench' });
    case 'getSlot': return ok(p[0]?.commitment === 'finalized' ? confirmed - 32 : confirmed);
    case 'getBlocks': {
      const out = [];
      for (let s = p[0]; s <= Math.min(p[1], confirmed); s++) if (blocks.has(s)) out.push(s);
      return ok(out);
    }
    case 'getBlock': {
      const b = blocks.get(p[0]);
      if (!b) return p[0] <= confirmed ? fail(-32007, `Slot ${p[0]} was skipped, or missing due to ledger jump to recent snapshot`) : fail(-32004, `Block not available for slot ${p[0]}`);
      const details = p[1]?.transactionDetails ?? 'full';
      if (details === 'full') return `{"jsonrpc":"2.0","id":${JSON.stringify(call.id)},"result":${b.text}}`;
      return ok(details === 'signatures' ? { ...b.head, signatures: b.sigs } : b.head);
    }
    default: return fail(-32601, 'Method not found');
  }
}

const node = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const call = JSON.parse(Buffer.concat(chunks).toString());
    res.writeHead(200, { 'content-type': 'application/json' }).end(Array.isArray(call) ? `[${call.map(answer).join(',')}]` : answer(call));
  });
});
const nodeUrl = await new Promise((r) => node.listen(0, '127.0.0.1', () => r(`http://127.0.0.1:${node.address().port}`)));
for (let i = 0; i < 5; i++) produce();
const clock = setInterval(produce, SLOT_MS);

// ---------------------------------------------------------------- rpcctl serve and 10,000 watches
console.log('bench:watch-solana');
const serve = await startServe({
  api: { host: '127.0.0.1', port: 0 },
  gateway: { host: '127.0.0.1', port: 0 },
  limits: { api_rps_per_ip: 1_000_000, api_rpm_per_account: 1_000_000 },
  networks: [{
    slug: 'solana', name: 'Solana', family: 'solana', tokens: [{ symbol: 'USDC', address: USDC, decimals: 6 }],
    environments: [{ slug: 'mainnet', upstreams: [nodeUrl], confirmations: 1 }],
  }],
});
const db = new DatabaseSync(join(serve.dataDir, 'rpcctl.db'));
db.exec('PRAGMA busy_timeout = 5000');
const cursor = () => Number(db.prepare('SELECT next_height AS n FROM scanner_cursors').get()?.n ?? 0);
const events = () => Number(db.prepare(`SELECT count(*) AS n FROM watch_events WHERE type != 'block'`).get().n);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
try {
  const { user_id } = serve.admin('accounts', 'create', '--plan', 'pro');
  const key = serve.admin('keys', 'create', '--account', String(user_id));
  const client = new ApiClient({ baseUrl: serve.api, apiKey: key.api_key, secret: key.secret });
  const t0 = performance.now();
  let next = 0;
  await Promise.all(Array.from({ length: 32 }, async () => {
    while (next < watched.length) {
      const address = watched[next++];
      await client.request('POST', '/v1/address-watch/addresses', { body: { network_slug: 'solana', address } });
    }
  }));
  await client.close();
  console.log(`  ${WATCHED.toLocaleString('en')} watched addresses added in ${((performance.now() - t0) / 1000).toFixed(1)} s; blocks of ${TXS.toLocaleString('en')} transactions (${(blocks.get(lastProduced.slot).text.length / 1e6).toFixed(2)} MB as getBlock answers them), 10% of slots skipped`);
  // Let the scanner reach the head before measuring.
  while (lastProduced.slot - cursor() > 2) await sleep(100);

  const steady = [];
  const bursts = [];
  const callsBefore = new Map(calls);
  const slotsBefore = cursor();
  for (let round = 0; round < ROUNDS; round++) {
    // Steady: from caught up, the node at 2.5 slots/s; followed against produced in the same seconds.
    while (lastProduced.slot - cursor() > 1) await sleep(20);
    const c0 = cursor();
    const p0 = processed;
    await sleep(STEADY_S * 1000);
    steady.push({ ratio: (cursor() - c0) / (processed - p0), lag: lastProduced.slot - cursor() + 1 });
    // Burst: a backlog appears at once (as after a node's hiccup); how fast is it drained?
    const b0 = cursor();
    for (let i = 0; i < BURST; i++) produce();
    const target = lastProduced.slot;
    const t1 = performance.now();
    while (cursor() <= target) await sleep(20);
    const secs = (performance.now() - t1) / 1000;
    // Slots the clock added meanwhile count too: the scanner passed them as well.
    bursts.push((cursor() - b0) / secs);
  }
  const slots = cursor() - slotsBefore;
  const perSlot = [...calls].map(([m, n]) => [m, (n - (callsBefore.get(m) ?? 0)) / slots]).filter(([, n]) => n > 0);
  const s = { ratio: median(steady.map((x) => x.ratio)), lag: median(steady.map((x) => x.lag)) };
  const drain = median(bursts);
  console.log(`  steady (${ROUNDS} rounds of ${STEADY_S} s at ${(1000 / SLOT_MS).toFixed(1)} slots/s, medians): slots followed / slots produced ${s.ratio.toFixed(2)}, lag at the round's end ${s.lag} slot(s)`);
  console.log(`  burst (${ROUNDS} rounds of ${BURST} slots at once, median): drained at ${drain.toFixed(1)} slots/s = ${(drain / (1000 / SLOT_MS)).toFixed(1)}x the chain's 2.5 slots/s`);
  console.log(`  RPC calls per slot passed (${slots} slots): ${perSlot.map(([m, n]) => `${m} ${n.toFixed(2)}`).join(', ')}; total ${perSlot.reduce((a, [, n]) => a + n, 0).toFixed(2)}`);
  console.log(`  events recorded: ${events()} (about 4 per produced slot)`);
  console.log('  address-centric for comparison: getSignaturesForAddress per watched wallet and token account each round, 20,000+ calls to cover one slot for 10,000 wallets');
} finally {
  clearInterval(clock);
  db.close();
  await serve.stop();
  await new Promise((r) => { node.closeAllConnections(); node.close(r); });
}
