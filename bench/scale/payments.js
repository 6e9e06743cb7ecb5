// bench:scale, payments part: a payments engine tick costs the open orders and the work
// waiting, not the events, orders and funding kept. One idle tick (`step()`: funding, reorgs,
// expiry, window ends; nothing to do) on a store with 300k events of history against the same
// shape with 3k, 20 open orders on long-lived watches in both. Ratio of medians from
// interleaved rounds. BENCH_SCALE_SMALL=1 shrinks the data 100x.
// Standalone: `npm run build && node bench/scale/payments.js`.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfig } from '../../dist/config/index.js';
import { PaymentEngine } from '../../dist/payments/engine.js';
import { createAccount, Store } from '../../dist/store/index.js';
import { median } from '../load.js';

const SMALL = process.env.BENCH_SCALE_SMALL === '1';
const scaled = (n) => (SMALL ? Math.max(100, Math.round(n / 100)) : n);
const LARGE = scaled(300_000);
const SMALL_SET = scaled(3_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const TICKS = 20;
const config = parseConfig({});

/**
 * A store whose history is `events` payment events over watches of 100 events each, every
 * watch with a finished order funded by its events (one event in 10k removed by a reorg, its
 * funding taken off), and 20 open orders created after their watches' events: nothing waits.
 */
async function build(events) {
  const dataDir = mkdtempSync(join(tmpdir(), 'rpcctl-bench-pay-'));
  const store = await Store.open({ dataDir, config, syncCatalog: 'always', env: { RPCCTL_MASTER_KEY: 'ab'.repeat(32) } });
  const account = (await createAccount(store, { planId: store.catalog.plans[0].id })).id;
  const envId = store.catalog.networks.flatMap((n) => n.environments)[0].id;
  const old = Date.now() - 86_400_000;
  const iso = (ms) => new Date(ms).toISOString();
  const order = (n, watch, open, status, createdMs) => ({
    payment_id: `pay_${n}`, account_id: account, order_id: `o_${n}`, request_hash: 'h', network_environment_id: envId, network: 'eth', asset: 'native',
    decimals: 18, address: `0x${n}`, address_key: `0x${n}`, derivation_index: null, watch_id: watch, owns_watch: open ? 0 : 1, amount_raw: '1000',
    received_raw: open ? '0' : '1000', status, reason: null, late: 0, overpaid: 0, lifecycle: status, aml: null, seq: 0,
    expires_at: iso(createdMs + 3_600_000), expires_ms: createdMs + 3_600_000, monitor_until_ms: createdMs + 7_200_000,
    open: open ? 1 : 0, webhook_url: null, metadata: null, created_at: iso(createdMs), updated_at: iso(createdMs),
  });
  const watches = Math.max(20, Math.floor(events / 100));
  const t0 = performance.now();
  for (let w0 = 0; w0 < watches; w0 += 100) {
    await store.db.transaction().execute(async (trx) => {
      const ws = Array.from({ length: Math.min(100, watches - w0) }, (_, k) => w0 + k);
      const pks = (await trx.insertInto('payment_orders').values(ws.map((w) => order(w, `w_${w}`, false, w % 3 ? 'paid' : 'expired', old)))
        .returning('id').execute()).map((r) => r.id);
      for (let k = 0; k < ws.length; k++) {
        const w = ws[k];
        const ids = (await trx.insertInto('watch_events').values(Array.from({ length: 100 }, (_, i) => ({
          account_id: account, watch_id: `w_${w}`, network_environment_id: envId, network: 'eth', type: 'payment', block_height: w * 100 + i,
          block_hash: '0x', body: JSON.stringify({ tx_hash: `0x${w}_${i}`, from: null, token: null, amount: '10', direction: 'in' }),
          removed: (w * 100 + i) % 10_000 === 5 ? 1 : 0, created_at: iso(old + i),
        }))).returning('id').execute()).map((r) => r.id);
        await trx.insertInto('payment_funding').values(ids.map((id, i) => ({
          order_pk: pks[k], event_id: id, tx_hash: `0x${w}_${i}`, from_address: null, amount_raw: '10', block_height: w * 100 + i,
          counted: 1, late: 0, removed: (w * 100 + i) % 10_000 === 5 ? 1 : 0, created_at: iso(old),
        }))).execute();
      }
    });
  }
  await store.db.insertInto('payment_orders').values(Array.from({ length: 20 }, (_, k) => order(`open_${k}`, `w_${k}`, true, 'pending', Date.now()))).execute();
  const engine = new PaymentEngine({
    store, config, aml: { name: 'none', screen: async () => { throw new Error('no screening in this bench'); } },
    watches: { added() {}, removed() {} }, log: () => {}, onDeliveries() {}, tickMs: 1000, amlLeaseMs: 1000,
  });
  console.log(`  (built ${events.toLocaleString('en')} events, ${watches.toLocaleString('en')} finished orders in ${((performance.now() - t0) / 1000).toFixed(1)} s)`);
  return { store, engine, dataDir };
}

/** Median time of an idle tick, over `TICKS` ticks. */
const tick = ({ engine }) => async () => {
  const times = [];
  for (let i = 0; i < TICKS; i++) {
    const t0 = performance.now();
    const changed = await engine.step();
    times.push(performance.now() - t0);
    if (changed !== 0) throw new Error(`an idle tick changed ${changed} orders`);
  }
  return median(times);
};

console.log(`bench:scale payments${SMALL ? ' (BENCH_SCALE_SMALL: data 100x smaller)' : ''}`);
const small = await build(SMALL_SET);
const large = await build(LARGE);
try {
  await tick(small)();
  await tick(large)();
  const samples = [[], []];
  for (let r = 0; r < ROUNDS; r++) {
    samples[0].push(await tick(small)());
    samples[1].push(await tick(large)());
  }
  const [a, b] = samples.map(median);
  const ratio = b / a;
  const ok = ratio <= 2;
  console.log(`  payments tick at ${LARGE.toLocaleString('en')} events vs ${SMALL_SET.toLocaleString('en')}: ${ratio.toFixed(2)}x (aim <= 2x) ${ok ? 'ok' : 'MISSED'} — idle step() ${b.toFixed(3)} ms vs ${a.toFixed(3)} ms (medians of ${ROUNDS} interleaved rounds of ${TICKS} ticks)`);
} finally {
  for (const s of [small, large]) {
    await s.store.close();
    rmSync(s.dataDir, { recursive: true, force: true });
  }
}
