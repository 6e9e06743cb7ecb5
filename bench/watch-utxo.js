// bench:watch-utxo — the UTXO family's per-block costs, as ratios measured in the same run:
//   1. matching a Bitcoin-sized block against 10 vs 100,000 watched addresses (set lookup:
//      the ratio should stay near 1);
//   2. reading a block's JSON with exact amounts (JSON.parse with a source-text reviver)
//      against a plain JSON.parse of the same text.
import { randomBytes } from 'node:crypto';
import { WatchRegistry } from '../dist/watch/registry.js';
import { parseAmounts } from '../dist/watch/utxo/chain.js';
import { matchUtxoBlock } from '../dist/watch/utxo/match.js';
import { median } from './load.js';

const TXS = Number(process.env.BENCH_UTXO_TXS ?? 3000);
const script = () => `0014${randomBytes(20).toString('hex')}`;
const out = (hex, n) => ({ value: '0.00123456', n, scriptPubKey: { asm: '', desc: '', hex, address: `bc1q${n}`, type: 'witness_v0_keyhash' } });

function registryOf(n) {
  const r = new WatchRegistry();
  const rows = [];
  for (let i = 0; i < n; i++) {
    const s = script();
    rows.push({ id: i, watch_id: `w_${i}`, account_id: 1 + (i % 500), network_environment_id: 1, network_slug: 'bitcoin', address: `bc1q${i}`, address_key: s, created_at: '' });
  }
  r.load(rows);
  return { r, scripts: rows.map((x) => x.address_key) };
}

/** A block of 2-in/2-out transactions with prevouts (verbosity 3), 5 of them touching watched scripts. */
function blockText(watched) {
  const tx = [];
  for (let i = 0; i < TXS; i++) {
    const hit = i % Math.floor(TXS / 5) === 0;
    tx.push({
      txid: randomBytes(32).toString('hex'),
      vin: [0, 1].map((v) => ({ txid: randomBytes(32).toString('hex'), vout: v, sequence: 4294967293, prevout: { generated: false, height: 1, value: '0.00250000', scriptPubKey: out(script(), v).scriptPubKey } })),
      vout: [out(hit ? watched[i % watched.length] : script(), 0), out(script(), 1)],
    });
  }
  // As Core prints them: amounts are bare JSON numbers with 8 decimals.
  return JSON.stringify({ result: { hash: randomBytes(32).toString('hex'), tx }, error: null, id: 1 }).replace(/"value":"(\d+\.\d{8})"/g, '"value":$1');
}

function time(fn, reps) {
  const t0 = performance.now();
  for (let i = 0; i < reps; i++) fn();
  return (performance.now() - t0) / reps;
}

console.log('bench:watch-utxo');
const cases = [10, 100_000].map((n) => {
  const { r, scripts } = registryOf(n);
  const text = blockText(scripts);
  return { n, r, text, block: parseAmounts(text).result, samples: [], hits: 0 };
});
for (const c of cases) for (let i = 0; i < 10; i++) matchUtxoBlock(c.r, 1, c.block.tx);
for (let round = 0; round < 15; round++) {
  for (const c of cases) c.samples.push(time(() => { c.hits = matchUtxoBlock(c.r, 1, c.block.tx).length; }, 10));
}
const [small, large] = cases.map((c) => ({ ms: median(c.samples), hits: c.hits }));
console.log(`  1. match a ${TXS.toLocaleString('en')}-tx block (2 in / 2 out each, prevouts), median of 15 alternating rounds x 10 blocks:`);
console.log(`       10 watched addresses       ${small.ms.toFixed(3)} ms/block (${small.hits} hits)`);
console.log(`       100,000 watched addresses  ${large.ms.toFixed(3)} ms/block (${large.hits} hits)`);
console.log(`       ratio 100k/10: ${(large.ms / small.ms).toFixed(2)}x`);

const text = cases[0].text;
const plain = [];
const exact = [];
for (let round = 0; round < 15; round++) {
  plain.push(time(() => JSON.parse(text), 3));
  exact.push(time(() => parseAmounts(text), 3));
}
console.log(`  2. read the block's JSON (${(text.length / 1e6).toFixed(1)} MB), median of 15 alternating rounds x 3:`);
console.log(`       JSON.parse                 ${median(plain).toFixed(1)} ms`);
console.log(`       exact amounts (reviver)    ${median(exact).toFixed(1)} ms`);
console.log(`       ratio: ${(median(exact) / median(plain)).toFixed(2)}x`);
