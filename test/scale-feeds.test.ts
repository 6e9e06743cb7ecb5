import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CompiledQuery, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capturing } from './helpers/plans.js';
import { parseConfig } from '../src/config/index.js';
import { createAccount, listAudit, Store } from '../src/store/index.js';
import { orderTimeline } from '../src/payments/timeline.js';
import { pruneOnce } from '../src/retention/index.js';
import { eventsQuery, listEvents, type EventQuery } from '../src/watch/events.js';
import { rewindTo, setCursor } from '../src/watch/record.js';
import { claimDue, dueQuery, nextAccountQuery } from '../src/webhooks/claim.js';
import { putWebhook } from '../src/webhooks/config.js';
import { deliveriesQuery, listDeliveries, type DeliveryQuery } from '../src/webhooks/deliveries.js';
import { DEFAULT_FILTERS } from '../src/webhooks/filters.js';
import { enqueueDelivery } from '../src/webhooks/outbox.js';
import { DeliveryWorker } from '../src/webhooks/worker.js';
import { watchFacts } from '../src/watch/facts.js';
import { startReceiver } from './helpers/receiver.js';
import { freshSchema, testDatabaseUrl, type TestSchema } from './helpers/shared-stores.js';
import { itUnless } from './helpers/skips.js';

/**
 * Reads that cost what they return (issue 10): every filter of the events feed and the
 * deliveries list pages correctly and is served by an index, and the batched delivery claim
 * delivers everything exactly once, in turn per account. On PostgreSQL when
 * RPCCTL_TEST_DATABASE_URL is set, else SQLite.
 */
const config = parseConfig({ webhooks: { allow_private_urls: true, timeout_ms: 2000 } });
const masterKey = 'cd'.repeat(32);
let schema: TestSchema | undefined;
let dataDir: string;
const stores: Store[] = [];

/** Another instance on the same store: its own connection (SQLite file or PostgreSQL schema). */
async function openStore(): Promise<Store> {
  const store = await Store.open({ dataDir, config, syncCatalog: 'always', env: { RPCCTL_MASTER_KEY: masterKey }, url: schema?.url });
  stores.push(store);
  return store;
}

let store: Store;
let accountA: number;
let accountB: number;
let env1: number;
let env2: number;
const TYPES = ['payment', 'payout', 'other', 'block'] as const;
interface Ev { id: number; account: number; env: number; type: string; watch: string | null; removed: boolean }
const events: Ev[] = [];

beforeAll(async () => {
  if (testDatabaseUrl) schema = await freshSchema();
  dataDir = mkdtempSync(join(tmpdir(), 'rpcctl-feeds-'));
  store = await openStore();
  const plan = store.catalog.plans[0]!.id;
  accountA = (await createAccount(store, { planId: plan })).id;
  accountB = (await createAccount(store, { planId: plan })).id;
  const envs = store.catalog.networks.flatMap((n) => n.environments);
  env1 = envs[0]!.id;
  env2 = envs[1]!.id;
  // Two accounts' events interleaved, over two networks, three watches and every type; some
  // removed by a reorg (never in the feed).
  for (let i = 0; i < 120; i++) {
    const account = i % 4 === 3 ? accountB : accountA;
    const type = TYPES[(i * 7) % 4]!;
    const env = i % 3 === 0 ? env2 : env1;
    const watch = type === 'block' ? null : account === accountB ? 'w_b' : env === env2 ? 'w_a2' : i % 2 ? 'w_a1' : 'w_a3';
    const removed = i % 17 === 5;
    const row = await store.db.insertInto('watch_events').values({
      account_id: account, watch_id: watch, network_environment_id: env, network: String(env), type, block_height: i, block_hash: '0x',
      body: JSON.stringify({ watch_id: watch, type, n: i }), removed: removed ? 1 : 0, created_at: new Date().toISOString(),
    }).returning('id').executeTakeFirstOrThrow();
    events.push({ id: row.id, account, env, type, watch, removed });
  }
  // The other accounts' history: PostgreSQL plans from statistics, and on a table that is
  // mostly one account's it would rightly read it in id order.
  const other = (await createAccount(store, { planId: plan })).id;
  for (let i = 0; i < 3000; i += 500) {
    await store.db.insertInto('watch_events').values(Array.from({ length: 500 }, (_, j) => ({
      account_id: other, watch_id: `w_other${j % 50}`, network_environment_id: j % 2 ? env1 : env2, network: 'x', type: TYPES[j % 4]!,
      block_height: i + j, block_hash: '0x', body: '{}', removed: 0, created_at: new Date().toISOString(),
    }))).execute();
    await store.db.insertInto('webhook_deliveries').values(Array.from({ length: 500 }, (_, j) => ({
      webhook_id: `other_${i + j}`, account_id: other, event_id: i + j, type: 'payment', network: 'eth', body: '{}', credits: 1,
      bill_method: 'webhook:payment', is_test: 0, status: 'delivered', attempts: 1, next_attempt_at: 0, lease_owner: null,
      lease_until: null, last_status_code: 200, last_error: null, created_at: new Date().toISOString(), delivered_at: null,
    }))).execute();
  }
});
afterAll(async () => {
  for (const s of stores) await s.close();
  await schema?.drop();
});

/** Every combination of the feed's filters (none, each, pairs, all three). */
function eventFilterSets(): Array<Partial<EventQuery>> {
  const out: Array<Partial<EventQuery>> = [];
  for (const envId of [undefined, env1, env2]) {
    for (const type of [undefined, 'payment', 'block']) {
      for (const watchId of [undefined, 'w_a1', 'w_a2']) {
        out.push({ ...(envId === undefined ? {} : { envId }), ...(type === undefined ? {} : { type }), ...(watchId === undefined ? {} : { watchId }) });
      }
    }
  }
  return out;
}

describe('events feed filters', () => {
  it('every combination of network, type and watch_id returns exactly its rows, oldest first, page by page', async () => {
    for (const f of eventFilterSets()) {
      const expected = events.filter((e) => e.account === accountA && !e.removed && (f.envId === undefined || e.env === f.envId)
        && (f.type === undefined || e.type === f.type) && (f.watchId === undefined || e.watch === f.watchId)).map((e) => String(e.id));
      const got: string[] = [];
      let after: number | undefined;
      for (let page = 0; page < 100; page++) {
        const res = await listEvents(store, { accountId: accountA, limit: 4, after, ...f });
        got.push(...res.events.map((e) => (e as { id: string }).id));
        if (res.events.length === 0) {
          expect(res.next_after).toBe(after === undefined ? null : String(after));
          break;
        }
        after = Number(res.next_after);
      }
      expect(got, JSON.stringify(f)).toEqual(expected);
    }
  });
});

interface Del { id: number; account: number; status: string; event: number | null }
const deliveries: Del[] = [];
describe('deliveries list filters', () => {
  beforeAll(async () => {
    const statuses = ['pending', 'delivered', 'failed', 'cancelled'];
    for (let i = 0; i < 60; i++) {
      const account = i % 5 === 4 ? accountB : accountA;
      const event = i % 3 === 0 ? null : events[i % 7]!.id;
      const status = statuses[(i * 3) % 4]!;
      const row = await store.db.insertInto('webhook_deliveries').values({
        webhook_id: `list_${i}`, account_id: account, event_id: event, type: 'payment', network: 'eth', body: '{}', credits: 1,
        bill_method: 'webhook:payment', is_test: 0, status, attempts: 0, next_attempt_at: Date.now() + 3_600_000, lease_owner: null,
        lease_until: null, last_status_code: null, last_error: null, created_at: new Date().toISOString(), delivered_at: null,
      }).returning('id').executeTakeFirstOrThrow();
      deliveries.push({ id: row.id, account, status, event });
    }
  });

  it('by status, by event and both return exactly their rows, newest first, page by page', async () => {
    for (const status of [undefined, 'pending', 'failed']) {
      for (const eventId of [undefined, events[1]!.id, events[2]!.id]) {
        const f = { ...(status ? { status } : {}), ...(eventId ? { eventId } : {}) };
        const expected = deliveries.filter((d) => d.account === accountA && (!status || d.status === status) && (!eventId || d.event === eventId))
          .map((d) => String(d.id)).reverse();
        const got: string[] = [];
        let before: number | undefined;
        for (let page = 0; page < 100; page++) {
          const res = await listDeliveries(store, { accountId: accountA, limit: 3, before, ...f });
          got.push(...res.deliveries.map((d) => d.delivery_id));
          if (res.next_before === null) break;
          before = Number(res.next_before);
        }
        expect(got, JSON.stringify(f)).toEqual(expected);
      }
    }
  });
});

/**
 * The plan of a query: SQLite's EXPLAIN QUERY PLAN lines, or PostgreSQL's EXPLAIN with
 * sequential scans, bitmap scans and sorts priced out.
 */
async function planOf(q: { compile(): CompiledQuery }, allowSort = false): Promise<string> {
  const c = q.compile();
  if (store.kind === 'sqlite') {
    return store.raw!.prepare(`EXPLAIN QUERY PLAN ${c.sql}`).all(...(c.parameters as Array<string | number>))
      .map((r) => String((r as { detail: string }).detail)).join('\n');
  }
  return store.db.transaction().execute(async (trx) => {
    // Tiny tables: PostgreSQL would rightly read one page and sort. Price those out; a plan
    // that still has a Seq Scan or a Sort has no index that serves the query.
    for (const setting of ['enable_seqscan', 'enable_bitmapscan', ...(allowSort ? [] : ['enable_sort'])]) await sql`${sql.raw(`set local ${setting} = off`)}`.execute(trx);
    const res = await trx.executeQuery(CompiledQuery.raw(`EXPLAIN ${c.sql}`, [...c.parameters]));
    return res.rows.map((r) => String((r as Record<string, unknown>)['QUERY PLAN'])).join('\n');
  });
}

/**
 * Served by an index: no full scan, no sort of the matches, and every equality filter (and
 * the keyset bound) is a condition of the index search, not a filter over the rows read.
 */
function expectIndexed(plan: string, table: string, columns: string[], label: string): void {
  if (store.kind === 'sqlite') {
    expect(plan, label).not.toMatch(new RegExp(`^SCAN ${table}\\b`, 'm'));
    expect(plan, label).not.toMatch(/USE TEMP B-TREE/);
    const search = new RegExp(`^SEARCH ${table} USING (COVERING )?INDEX \\S+ \\((.*)\\)`, 'm').exec(plan)?.[2] ?? '';
    for (const col of columns) expect(search, `${label}: ${plan}`).toMatch(new RegExp(`\\b${col === 'id' ? '(id|rowid)' : col}[=<>]`));
    return;
  }
  expect(plan, label).not.toMatch(/Seq Scan/);
  expect(plan, label).not.toMatch(/\bSort\b/);
  const cond = /Index Cond: (.*)/.exec(plan)?.[1] ?? '';
  for (const col of columns) expect(cond, `${label}: ${plan}`).toMatch(new RegExp(`\\b${col} [=<>]`));
}

describe('query plans', () => {
  beforeAll(async () => {
    if (store.kind === 'postgres') await sql`analyze watch_events, webhook_deliveries`.execute(store.db);
  });

  it('every filter of the events feed, with and without a cursor, is an index search in id order', async () => {
    for (const f of eventFilterSets()) {
      for (const after of [undefined, 10]) {
        const q: EventQuery = { accountId: accountA, limit: 100, ...f, ...(after === undefined ? {} : { after }) };
        // A watch belongs to one network: its own index serves it with or without one.
        const columns = ['account_id', ...(f.watchId ? ['watch_id'] : f.envId ? ['network_environment_id'] : []), ...(f.type ? ['type'] : []), ...(after ? ['id'] : [])];
        expectIndexed(await planOf(eventsQuery(store.db, q)), 'watch_events', columns, JSON.stringify(q));
      }
    }
  });

  it('every filter of the deliveries list is an index search in id order', async () => {
    for (const status of [undefined, 'failed']) {
      for (const before of [undefined, 50]) {
        const q: DeliveryQuery = { accountId: accountA, limit: 50, ...(status ? { status } : {}), ...(before ? { before } : {}) };
        const columns = ['account_id', ...(status ? ['status'] : []), ...(before ? ['id'] : [])];
        expectIndexed(await planOf(deliveriesQuery(store.db, q)), 'webhook_deliveries', columns, JSON.stringify(q));
      }
    }
    // By event: the few rows of one event, found by (event_id) and put in order.
    const plan = await planOf(deliveriesQuery(store.db, { accountId: accountA, limit: 50, eventId: 3 }), true);
    expect(plan).toMatch(/webhook_deliveries_event/);
    // A payment order's timeline: its webhooks by account and order.
    const { store: traced, queries } = capturing(store);
    await orderTimeline(traced.db, accountA, { payment_id: 'pay_x', lifecycle: 'new>seen', created_at: new Date().toISOString() });
    const timeline = queries.find((q) => /webhook_deliveries/.test(q.sql))!;
    // PostgreSQL may rightly go by the order alone (its sequence index): an order is one account's.
    expectIndexed(await planOf({ compile: () => timeline }, true), 'webhook_deliveries', store.kind === 'sqlite' ? ['account_id', 'sequence_key'] : ['sequence_key'], 'timeline');
  });

  it('the claim finds the next account with pending work and its due rows by index seeks', async () => {
    expectIndexed(await planOf(nextAccountQuery(store.db, 3)), 'webhook_deliveries', ['status', 'account_id'], 'next account');
    const due = await planOf(dueQuery(store.db, accountA, Date.now(), 4));
    expectIndexed(due, store.kind === 'sqlite' ? 'd' : 'webhook_deliveries', ['status', 'account_id', 'next_attempt_at'], 'due rows');
    expect(due).toMatch(/webhook_deliveries_claim/);
    // The lease is written by id: one row looked up per delivery taken.
    const account = (await createAccount(store, { planId: store.catalog.plans[0]!.id })).id;
    await enqueueDelivery(store.db, { accountId: account, eventId: null, webhookId: 'plan_1', type: 'payment', network: 'eth', body: '{}', credits: 1, isTest: false }, Date.now() - 1000);
    const { store: traced, queries } = capturing(store);
    const claimed = await traced.db.transaction().execute((trx) => claimDue(trx, {
      owner: 'plan', leaseMs: 1, max: 1, perAccount: 1, inflight: new Map(), after: account - 1, maxAccounts: 1, skipLocked: store.kind === 'postgres',
    }));
    expect(claimed.rows.map((r) => r.webhook_id)).toEqual(['plan_1']);
    const update = queries.find((q) => /^update/i.test(q.sql))!;
    const plan = await planOf({ compile: () => update });
    expect(plan).toMatch(store.kind === 'sqlite' ? /^SEARCH webhook_deliveries USING INTEGER PRIMARY KEY/m : /webhook_deliveries_pkey/);
    await store.db.deleteFrom('webhook_deliveries').where('webhook_id', '=', 'plan_1').execute();
  });
});

const sqliteOnly = testDatabaseUrl ? 'SQLite-only: PostgreSQL plans from statistics and picks these by itself' : undefined;

describe('query plans of background work', () => {
  itUnless(sqliteOnly, 'retention and a reorg rewind search by time and by event, never walk the kept rows or the pending backlog', async () => {
    const old = new Date(Date.now() - 100 * 86_400_000).toISOString();
    const other = (await createAccount(store, { planId: store.catalog.plans[0]!.id })).id;
    const event = await store.db.insertInto('watch_events').values({
      account_id: other, watch_id: 'w_rewind', network_environment_id: env2, network: 'x', type: 'payment', block_height: 10_000, block_hash: '0x',
      body: '{}', removed: 0, created_at: old,
    }).returning('id').executeTakeFirstOrThrow();
    await enqueueDelivery(store.db, { accountId: other, eventId: event.id, webhookId: 'rewind_1', type: 'payment', network: 'x', body: '{}', credits: 1, isTest: false });
    await store.db.insertInto('webhook_deliveries').values({
      webhook_id: 'old_1', account_id: other, event_id: null, type: 'payment', network: 'eth', body: '{}', credits: 1, bill_method: 'webhook:payment',
      is_test: 0, status: 'delivered', attempts: 1, next_attempt_at: 0, lease_owner: null, lease_until: null, last_status_code: 200,
      last_error: null, created_at: old, delivered_at: old,
    }).execute();
    // A rewind undoes only what its scanner saw: the cursor one block past the height it rewinds.
    await setCursor(store.db, env2, 10_001);
    const { store: traced, queries } = capturing(store);
    expect((await rewindTo(traced, env2, 10_000)).cancelled).toBe(1);
    expect(await pruneOnce(traced, { eventsDays: 30, deliveriesDays: 30, auditDays: 30, batchSize: 100 })).toMatchObject({ events: 1, deliveries: 1 });
    await listAudit(traced, { accountId: other, limit: 50, before: 1_000_000 });
    const reads = queries.filter((q) => /\b(watch_events|webhook_deliveries|audit_log)\b/.test(q.sql) && !/^insert/i.test(q.sql));
    expect(reads.length).toBeGreaterThanOrEqual(6);
    for (const q of reads) {
      const plan = await planOf({ compile: () => q });
      expect(plan, q.sql).not.toMatch(/^SCAN (watch_events|webhook_deliveries|audit_log)\b/m);
      expect(plan, q.sql).not.toMatch(/USE TEMP B-TREE/);
      // Searching by status alone reads every row of that status: the pending backlog, or all delivered ones.
      expect(plan, q.sql).not.toMatch(/INDEX \S+ \(status=\?\)/);
    }
  });
});

describe('batched delivery claim', () => {
  it('visits accounts in turn: a claim takes each one\'s free slots, the next starts after the last one looked at', async () => {
    const s = await openStore();
    const ids: number[] = [];
    for (let a = 0; a < 4; a++) ids.push((await createAccount(s, { planId: s.catalog.plans[0]!.id })).id);
    const now = Date.now();
    for (let i = 0; i < 40; i++) {
      await enqueueDelivery(s.db, { accountId: ids[i % 4]!, eventId: null, webhookId: `rr_${i}`, type: 'payment', network: 'eth', body: '{}', credits: 1, isTest: false }, now - 1000);
    }
    // Other tests' pending rows are there too: only look at this test's accounts.
    const before = ids[0]! - 1;
    const claim = (after: number, max: number, inflight = new Map<number, number>()) => s.db.transaction().execute((trx) => claimDue(trx, {
      owner: 'test', leaseMs: 60_000, max, perAccount: 3, inflight, after, maxAccounts: 100, skipLocked: s.kind === 'postgres', now,
    }));
    const first = await claim(before, 5);
    expect(first.rows.map((r) => r.account_id)).toEqual([ids[0], ids[0], ids[0], ids[1], ids[1]]);
    expect(first.rows.map((r) => r.webhook_id)).toEqual(['rr_0', 'rr_4', 'rr_8', 'rr_1', 'rr_5']);
    expect(first.cursor).toBe(ids[1]);
    // The next batch starts with the third account; the first two are full (3 in flight each, as the worker would count).
    const second = await claim(first.cursor, 20, new Map([[ids[0]!, 3], [ids[1]!, 2]]));
    expect(second.rows.map((r) => r.account_id)).toEqual([ids[2], ids[2], ids[2], ids[3], ids[3], ids[3], ids[1]]);
    expect(second.rows.map((r) => r.webhook_id).slice(0, 3)).toEqual(['rr_2', 'rr_6', 'rr_10']);
    // Leased rows are not claimed again.
    const third = await claim(-1, 100, new Map());
    expect(third.rows.filter((r) => ids.includes(r.account_id)).map((r) => r.webhook_id)).not.toContain('rr_0');
    await s.db.deleteFrom('webhook_deliveries').where('account_id', 'in', ids).execute();
  });

  it('two workers (two connections to one store) deliver every delivery of many accounts exactly once, one slow account not holding up the others', async () => {
    const rx = await startReceiver();
    const s1 = await openStore();
    const s2 = await openStore();
    const accounts: number[] = [];
    for (let a = 0; a < 6; a++) {
      const account = await createAccount(s1, { planId: s1.catalog.plans[0]!.id });
      await putWebhook(s1, account.id, { url: `${rx.url}?a=${a}`, enabled: true, filters: DEFAULT_FILTERS });
      accounts.push(account.id);
    }
    // The first account's receiver is slow and has a backlog written before everyone else's.
    rx.respond = async (r) => {
      if (String(r.headers['x-webhook-id']).startsWith('slow_')) await new Promise((res) => setTimeout(res, 100));
      return 200;
    };
    const now = Date.now();
    const write = (db: Store['db'], id: string, account: number) =>
      enqueueDelivery(db, { accountId: account, eventId: null, webhookId: id, type: 'payment', network: 'eth', body: `{"id":"${id}"}`, credits: 3, isTest: false }, now);
    for (let i = 0; i < 60; i++) await write(s1.db, `slow_${i}`, accounts[0]!);
    for (let i = 0; i < 150; i++) await write(i % 2 ? s1.db : s2.db, `fast_${i}`, accounts[1 + (i % 5)]!);
    const workers = [s1, s2].map((store) => new DeliveryWorker({ watch: watchFacts, store, config, log: () => {}, pollMs: 200, concurrency: 8, perAccount: 2 }));
    try {
      workers.forEach((w) => w.start());
      await rx.waitFor((all) => all.length >= 210, 30_000);
      await new Promise((r) => setTimeout(r, 300));
      const ids = rx.received.map((r) => String(r.headers['x-webhook-id']));
      expect(ids).toHaveLength(210);
      expect(new Set(ids).size).toBe(210);
      // Fair per account: the other accounts' 150 were not queued behind the slow account's
      // older 60; they all arrived while most of its backlog was still waiting.
      const lastFast = ids.findLastIndex((id) => id.startsWith('fast_'));
      expect(ids.slice(0, lastFast + 1).filter((id) => id.startsWith('slow_')).length).toBeLessThan(45);
      const deadline = Date.now() + 10_000;
      const rows = async () => s1.db.selectFrom('webhook_deliveries').select(['status', 'attempts']).where('account_id', 'in', accounts).execute();
      while ((await rows()).some((r) => r.status !== 'delivered') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      const final = await rows();
      expect(final).toHaveLength(210);
      expect(final.every((r) => r.status === 'delivered' && r.attempts === 1)).toBe(true);
      // Billed once each.
      const billed = await s1.db.selectFrom('usage_daily').select((eb) => eb.fn.sum<number>('credits').as('c')).where('account_id', 'in', accounts).executeTakeFirst();
      expect(Number(billed?.c)).toBe(210 * 3);
    } finally {
      await Promise.all(workers.map((w) => w.stop()));
      await rx.close();
    }
  });
});
