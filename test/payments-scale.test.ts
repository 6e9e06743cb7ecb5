import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CompiledQuery, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capturing } from './helpers/plans.js';
import { parseConfig } from '../src/config/index.js';
import { PaymentEngine } from '../src/payments/engine.js';
import { sightingsQuery } from '../src/payments/sightings.js';
import { createAccount, Store } from '../src/store/index.js';
import { freshSchema, testDatabaseUrl, type TestSchema } from './helpers/shared-stores.js';

/**
 * A payments engine tick costs the open orders and the work waiting, not the events, orders
 * and funding kept (issue 10): its per-tick reads are index searches that start from the open
 * orders / removed events, and they find exactly what the join over everything found. On
 * PostgreSQL when RPCCTL_TEST_DATABASE_URL is set, else SQLite.
 */
const config = parseConfig({});
let schema: TestSchema | undefined;
let store: Store;
let account: number;
let envId: number;
const HOUR = 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();
const body = (tx: string, amount = '1') => JSON.stringify({ tx_hash: tx, from: null, token: null, amount, direction: 'in' });
let orderSeq = 0;

async function addOrder(o: { watch: string; open: boolean; status: string; createdMs: number; expiresMs?: number; monitorMs?: number; amount?: string }): Promise<number> {
  const n = ++orderSeq;
  const row = await store.db.insertInto('payment_orders').values({
    payment_id: `pay_${n}`, account_id: account, order_id: `o_${n}`, request_hash: 'h', network_environment_id: envId, network: 'eth', asset: 'native',
    decimals: 18, address: `0x${n}`, address_key: `0x${n}`, derivation_index: null, watch_id: o.watch, owns_watch: 0, amount_raw: o.amount ?? '1000',
    received_raw: '0', status: o.status, reason: null, late: 0, overpaid: 0, lifecycle: o.status, aml: null, seq: 0,
    expires_at: iso(o.expiresMs ?? o.createdMs + HOUR), expires_ms: o.expiresMs ?? o.createdMs + HOUR, monitor_until_ms: o.monitorMs ?? o.createdMs + 2 * HOUR,
    open: o.open ? 1 : 0, webhook_url: null, metadata: null, created_at: iso(o.createdMs), updated_at: iso(o.createdMs),
  } as never).returning('id').executeTakeFirstOrThrow();
  return row.id;
}

async function addEvents(rows: Array<{ watch: string; type?: string; createdMs: number; removed?: boolean; tx?: string }>): Promise<number[]> {
  const ids: number[] = [];
  for (let i = 0; i < rows.length; i += 500) {
    const got = await store.db.insertInto('watch_events').values(rows.slice(i, i + 500).map((r, j) => ({
      account_id: account, watch_id: r.watch, network_environment_id: envId, network: 'eth', type: r.type ?? 'payment', block_height: i + j,
      block_hash: '0x', body: body(r.tx ?? `0x${i + j}`), removed: r.removed ? 1 : 0, created_at: iso(r.createdMs),
      tx_hash: r.tx ?? `0x${i + j}`, direction: 'in', address: '0x1', from_address: null, to_address: '0x1', token: null, amount: '1', log_index: null,
    }))).returning('id').execute();
    ids.push(...got.map((g) => g.id));
  }
  return ids;
}

function engine(s: Store): PaymentEngine {
  return new PaymentEngine({
    store: s, config, aml: { name: 'none', screen: async () => { throw new Error('not screened here'); } } as never,
    watches: { added() {}, removed() {} }, log: () => {}, onDeliveries() {}, tickMs: 1000, amlLeaseMs: 1000,
  });
}

/** SQLite's EXPLAIN QUERY PLAN lines, or PostgreSQL's EXPLAIN with sequential scans priced out. */
async function planOf(c: CompiledQuery): Promise<string> {
  if (store.kind === 'sqlite') {
    return store.raw!.prepare(`EXPLAIN QUERY PLAN ${c.sql}`).all(...(c.parameters as Array<string | number>))
      .map((r) => String((r as { detail: string }).detail)).join('\n');
  }
  return store.db.transaction().execute(async (trx) => {
    // Small tables: PostgreSQL would rightly read a page or two whole. Priced out, a plan that
    // still has a Seq Scan has no index that serves the query. (Expiry's OR is a BitmapOr.)
    await sql`set local enable_seqscan = off`.execute(trx);
    const res = await trx.executeQuery(CompiledQuery.raw(`EXPLAIN ${c.sql}`, [...c.parameters]));
    return res.rows.map((r) => String((r as Record<string, unknown>)['QUERY PLAN'])).join('\n');
  });
}

/** The plans of the reads one idle tick makes, by the table they start from. */
async function tickPlans(): Promise<Array<{ sql: string; plan: string }>> {
  const { store: traced, queries } = capturing(store);
  await engine(traced).step(Date.now());
  const out = [];
  for (const q of queries.filter((c) => /^select/i.test(c.sql))) out.push({ sql: q.sql, plan: await planOf(q) });
  return out;
}

const now = Date.now();
let openOrder: number;
let longWatchOrder: number;

beforeAll(async () => {
  if (testDatabaseUrl) schema = await freshSchema();
  store = await Store.open({ dataDir: mkdtempSync(join(tmpdir(), 'rpcctl-payscale-')), config, syncCatalog: 'always', env: { RPCCTL_MASTER_KEY: 'ef'.repeat(32) }, url: schema?.url });
  account = (await createAccount(store, { planId: store.catalog.plans[0]!.id })).id;
  envId = store.catalog.networks.flatMap((n) => n.environments)[0]!.id;
  // History: 300 finished orders, each funded by its watch's 10 events, long before now; one
  // event in 100 removed by a reorg and already taken off its order.
  const old = now - 48 * HOUR;
  for (let w = 0; w < 300; w++) {
    const pk = await addOrder({ watch: `w_${w}`, open: false, status: w % 3 ? 'paid' : 'expired', createdMs: old, monitorMs: old });
    const ids = await addEvents(Array.from({ length: 10 }, (_, i) => ({ watch: `w_${w}`, createdMs: old + i, removed: (w * 10 + i) % 100 === 7 })));
    await store.db.insertInto('payment_funding').values(ids.map((id, i) => ({
      order_pk: pk, event_id: id, tx_hash: `0x${id}`, from_address: null, amount_raw: '1', block_height: i, counted: 1, late: 0,
      removed: (w * 10 + i) % 100 === 7 ? 1 : 0, created_at: iso(old),
    }))).execute();
  }
  // A long-lived watch the account kept: 2000 payment events before today's order on it.
  await addEvents(Array.from({ length: 2000 }, (_, i) => ({ watch: 'w_long', createdMs: old + i, type: i % 4 ? 'payment' : 'payout' })));
  longWatchOrder = await addOrder({ watch: 'w_long', open: true, status: 'pending', createdMs: now - HOUR, expiresMs: now + HOUR });
  openOrder = await addOrder({ watch: 'w_new', open: true, status: 'pending', createdMs: now - HOUR, expiresMs: now + HOUR, amount: '1000000' });
  if (store.kind === 'postgres') await sql`analyze watch_events, payment_orders, payment_funding`.execute(store.db);
});
afterAll(async () => {
  await store?.close();
  await schema?.drop();
});

describe('an idle tick reads the open orders, not the history', () => {
  it('finds new payments from the open orders, by an index search of each watch (never a scan of watch_events)', async () => {
    const plans = await tickPlans();
    if (process.env.PRINT_PLANS) for (const p of plans) console.log(`${p.sql}\n${p.plan}\n`);
    const ingest = plans.find((p) => /payment_orders/.test(p.sql) && /watch_events/.test(p.sql) && /payment_funding/.test(p.sql));
    expect(ingest, plans.map((p) => p.sql).join('\n')).toBeDefined();
    if (store.kind === 'sqlite') {
      expect(ingest!.plan).not.toMatch(/^SCAN (e|watch_events)\b/m);
      expect(ingest!.plan).not.toMatch(/^SCAN (o|payment_orders)$/m);
      expect(ingest!.plan).toMatch(/^SEARCH (e|watch_events) USING (COVERING )?INDEX \S+ \(watch_id=\? AND type=\? AND created_at>\?\)/m);
    } else {
      expect(ingest!.plan).not.toMatch(/Seq Scan/);
      // Each watch's payment events since its order was created: the date bounds the search,
      // so a long-lived watch's earlier events are not read.
      const events = /Index Scan using (\S+) on watch_events[\s\S]*?Index Cond: (.*)/.exec(ingest!.plan);
      expect(events?.[2], ingest!.plan).toMatch(/watch_id = /);
      expect(events?.[2], ingest!.plan).toMatch(/created_at >= /);
    }
  });

  it('finds reorged funding from the removed events, and due orders by status, never scanning funding or all orders', async () => {
    const plans = await tickPlans();
    const reorged = plans.find((p) => /payment_funding/.test(p.sql) && !/payment_orders/.test(p.sql))!;
    const others = plans.filter((p) => /^select "id" from "payment_orders"/.test(p.sql));
    expect(others.length).toBe(2); // expiry, end of the late window
    if (store.kind === 'sqlite') {
      expect(reorged.plan).toMatch(/^SCAN (e|watch_events) USING COVERING INDEX watch_events_removed$/m);
      expect(reorged.plan).toMatch(/^SEARCH f USING INDEX payment_funding_event_id/m);
      for (const p of others) expect(p.plan, p.sql).not.toMatch(/^SCAN payment_orders/m);
      expect(others.map((p) => p.plan).join('\n')).toMatch(/payment_orders_open \(status=\? AND monitor_until_ms<\?\)/);
    } else {
      for (const p of [reorged, ...others]) expect(p.plan, p.sql).not.toMatch(/Seq Scan/);
      expect(reorged.plan).toMatch(/watch_events_removed/);
    }
    const open = await planOf(sightingsQuery(store.db).compile());
    if (store.kind === 'sqlite') expect(open).toMatch(/USING INDEX payment_orders_open/);
    else expect(open).not.toMatch(/Seq Scan/);
  });
});

describe('the same work as the join over everything', () => {
  it('funds only payments to an open order after it was created, not removed, 500 a tick, none skipped', async () => {
    const e = engine(store);
    // Nothing waiting: the long watch's earlier events and the history are not funding.
    expect(await e.step(now)).toBe(0);
    const after = now - HOUR + 1000;
    const [before] = await addEvents([{ watch: 'w_new', createdMs: now - 2 * HOUR }]);
    const [removed] = await addEvents([{ watch: 'w_new', createdMs: after, removed: true }]);
    const [payout] = await addEvents([{ watch: 'w_new', createdMs: after, type: 'payout' }]);
    const fresh = await addEvents(Array.from({ length: 501 }, (_, i) => ({ watch: 'w_new', createdMs: after + i, tx: `0xf${i}` })));
    const [longFresh] = await addEvents([{ watch: 'w_long', createdMs: after, tx: '0xlong' }]);
    const funded = async () => (await store.db.selectFrom('payment_funding').select(['event_id', 'order_pk', 'removed'])
      .where('order_pk', 'in', [openOrder, longWatchOrder]).orderBy('event_id').execute());
    await e.step(now);
    // The 500 oldest waiting, whichever order they belong to.
    const first = await funded();
    expect(first.length).toBe(500);
    expect(first.map((f) => f.event_id)).toEqual(fresh.slice(0, 500));
    await e.step(now);
    const all = await funded();
    expect(all.map((f) => [f.event_id, f.order_pk])).toEqual([...fresh.map((id) => [id, openOrder]), [longFresh, longWatchOrder]]);
    for (const id of [before, removed, payout]) expect(all.some((f) => f.event_id === id)).toBe(false);
    const order = await store.db.selectFrom('payment_orders').select(['status', 'received_raw']).where('id', '=', openOrder).executeTakeFirstOrThrow();
    expect(order).toEqual({ status: 'underpaid', received_raw: '501' });
    expect(await e.step(now)).toBe(0);

    // A reorg takes the last funding off the order; the funding already taken off stays as it was.
    await store.db.updateTable('watch_events').set({ removed: 1 }).where('id', '=', fresh[500]!).execute();
    expect(await e.step(now)).toBe(1);
    const gone = await store.db.selectFrom('payment_funding').select('removed').where('event_id', '=', fresh[500]!).executeTakeFirstOrThrow();
    expect(gone.removed).toBe(1);
    const reorged = await store.db.selectFrom('payment_orders').select('received_raw').where('id', '=', openOrder).executeTakeFirstOrThrow();
    expect(reorged.received_raw).toBe('500');
    expect(await e.step(now)).toBe(0);
  });
});
