import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Environment } from '../src/store/index.js';
import type { Hit } from '../src/chains/family.js';
import { hitEvents, removedEvents } from '../src/watch/events.js';
import { recordBlock, rewindTo, setCursor } from '../src/watch/record.js';
import { migrationDb } from './helpers/migration-db.js';
import { testDatabaseUrl } from './helpers/shared-stores.js';
import { startReceiver, type Receiver } from './helpers/receiver.js';
import { startTestService, type Merchant, type TestService } from './helpers/service.js';

/**
 * The record step and the worker driven directly, block by block: the environment's upstream
 * is dead, so its scanner never records anything on its own, and the worker claims only when
 * kicked: each test decides what happens in which order.
 */
const json = (o: unknown) => JSON.stringify(o);
const ADDR = '0x52908400098527886E0F7030069857D2E4169EE7';
const dead = ['http://127.0.0.1:1'];
const hex32 = () => `0x${randomBytes(32).toString('hex')}`;

let t: TestService;
let rx: Receiver;
let m: Merchant;
let env: Environment;
let watchId: string;

beforeAll(async () => {
  rx = await startReceiver();
  t = await startTestService({
    networks: [{ slug: 'eth', name: 'Ethereum', family: 'evm', environments: [{ slug: 'mainnet', upstreams: dead }, { slug: 'sepolia', upstreams: dead }] }],
    webhooks: { allow_private_urls: true, timeout_ms: 2000 },
    // The worker claims only when kicked, so a test decides when a delivery goes out.
  }, { watch: { pollMs: 100, delivery: { pollMs: 3_600_000 } } });
  m = await t.merchant({ plan: 'pro' });
  await m.call('PUT', '/v1/address-watch/webhook', json({ url: rx.url, enabled: true, events: { block: false } }));
  watchId = (await m.call('POST', '/v1/address-watch/addresses', json({ network_slug: 'eth', address: ADDR }))).body.watch_id;
  env = t.store.catalog.environmentBySlug('eth')!;
});
afterAll(async () => {
  await t?.stop();
  await rx?.close();
});

let nextHeight = 1000;
/** A fresh block height with the cursor on it, as the scanner would have it. */
async function freshHeight(): Promise<number> {
  const h = (nextHeight += 10);
  await setCursor(t.store.db, env.id, h);
  return h;
}
function payment(watch = watchId, amount = '5'): Hit {
  return {
    watch: { watchId: watch, accountId: m.userId, network: 'eth', address: ADDR }, type: 'payment', direction: 'in',
    txHash: hex32(), from: `0x${'ab'.repeat(20)}`, to: ADDR, token: null, amount, logIndex: null,
  };
}
const record = (height: number, hits: Hit[], hash = hex32()) =>
  recordBlock(t.store, t.service.addressWatch.registry, env, { height, hash, txHashes: hits.map((h) => h.txHash) }, hits);
const cursor = async () => (await t.store.db.selectFrom('scanner_cursors').select('next_height').where('network_environment_id', '=', env.id).executeTakeFirst())?.next_height;

describe('store', () => {
  it('deliveries are indexed by event (rewind and deliveries?event_id= look them up by it)', async () => {
    if (t.store.kind === 'postgres') {
      const index = await t.store.db.selectFrom('pg_indexes' as never).select(['indexdef' as never]).where('indexname' as never, '=', 'webhook_deliveries_event' as never).executeTakeFirst();
      expect(String((index as { indexdef?: string } | undefined)?.indexdef)).toMatch(/ON \S*webhook_deliveries USING btree \(event_id\)/);
      return;
    }
    const index = await t.store.db.selectFrom('sqlite_master' as never).select(['sql' as never]).where('name' as never, '=', 'webhook_deliveries_event' as never).executeTakeFirst();
    expect(index).toEqual({ sql: 'CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_id)' });
  });
});

describe('recording blocks', () => {
  it('when the last watch of an environment goes, its kept block hashes go with the cursor', async () => {
    const other = await t.merchant({ plan: 'pro' });
    // A second environment, watched by one address only.
    const w = (await other.call('POST', '/v1/address-watch/addresses', json({ network_slug: 'eth-sepolia', address: ADDR }))).body;
    const sep = t.store.catalog.environmentBySlug('eth-sepolia')!;
    await setCursor(t.store.db, sep.id, 50);
    await recordBlock(t.store, t.service.addressWatch.registry, sep, { height: 50, hash: hex32(), txHashes: [] }, []);
    const kept = () => t.store.db.selectFrom('scanner_blocks').select('height').where('network_environment_id', '=', sep.id).execute();
    expect(await kept()).toEqual([{ height: 50 }]);

    expect((await other.call('DELETE', '/v1/address-watch/addresses', json({ watch_id: w.watch_id }))).status).toBe(200);
    await t.service.addressWatch.reconcile();
    expect(t.service.addressWatch.scannedEnvIds()).not.toContain(sep.id);
    expect(await t.store.db.selectFrom('scanner_cursors').selectAll().where('network_environment_id', '=', sep.id).execute()).toEqual([]);
    // Kept hashes would be compared with a chain that may have been reset since: false rewinds.
    expect(await kept()).toEqual([]);
  });

  it('a lost change feed is made good by a reload that is retried until the store answers', async () => {
    const other = await t.merchant({ plan: 'pro' });
    const sep = t.store.catalog.environmentBySlug('eth-sepolia')!;
    const unheard = '0x4444444444444444444444444444444444444444';
    // Committed by another instance whose notification never arrived (the LISTEN connection was lost).
    await t.store.db.insertInto('watched_addresses').values({
      watch_id: 'w_unheard', account_id: other.userId, network_environment_id: sep.id, network_slug: 'eth-sepolia',
      address: unheard, address_key: unheard, created_at: new Date().toISOString(),
    }).execute();
    const errors = async () => (await t.service.metrics.registry.getSingleMetric('rpcctl_background_errors_total')!.get())
      .values.find((v) => v.labels.task === 'watch-reload')?.value ?? 0;
    const before = await errors();
    try {
      expect(t.service.addressWatch.registry.lookup(sep.id, unheard)).toBeUndefined();
      // The first read fails (the store still away): counted, and tried again rather than given up.
      t.service.supervisor.inject('watch-reload', new Error('store still away'), 2);
      await t.service.addressWatch.reloadWatches();
      expect(t.service.addressWatch.registry.lookup(sep.id, unheard)?.map((w) => w.watchId)).toEqual(['w_unheard']);
      expect(await errors()).toBe(before + 2);
    } finally {
      await t.store.db.deleteFrom('watched_addresses').where('watch_id', '=', 'w_unheard').execute();
      await t.service.addressWatch.reloadWatches();
    }
  });

  it('but not while another instance has added a watch there that this one has not heard of yet', async () => {
    const other = await t.merchant({ plan: 'pro' });
    const w = (await other.call('POST', '/v1/address-watch/addresses', json({ network_slug: 'eth-sepolia', address: ADDR }))).body;
    const sep = t.store.catalog.environmentBySlug('eth-sepolia')!;
    await setCursor(t.store.db, sep.id, 60);
    // Written by another instance's API; its notification has not reached this one.
    const elsewhere = '0x1111111111111111111111111111111111111111';
    await t.store.db.insertInto('watched_addresses').values({
      watch_id: 'w_elsewhere', account_id: other.userId, network_environment_id: sep.id, network_slug: 'eth-sepolia',
      address: elsewhere, address_key: elsewhere, created_at: new Date().toISOString(),
    }).execute();
    try {
      expect((await other.call('DELETE', '/v1/address-watch/addresses', json({ watch_id: w.watch_id }))).status).toBe(200);
      await t.service.addressWatch.reconcile();
      expect(t.service.addressWatch.scannedEnvIds()).not.toContain(sep.id);
      // Its scanner starts from here when the news arrives: the other watch's first blocks are not skipped.
      expect((await t.store.db.selectFrom('scanner_cursors').select('next_height').where('network_environment_id', '=', sep.id).executeTakeFirst())?.next_height).toBe(60);
    } finally {
      await t.store.db.deleteFrom('watched_addresses').where('watch_id', '=', 'w_elsewhere').execute();
      for (const table of ['scanner_cursors', 'scanner_blocks', 'scanner_leases'] as const) {
        await t.store.db.deleteFrom(table).where('network_environment_id', '=', sep.id).execute();
      }
    }
  });
});

describe('two scanners on one store', () => {
  it('the same block recorded twice is written once: the second sees the cursor moved and writes nothing', async () => {
    const h = await freshHeight();
    const hit = payment();
    const events = () => t.store.db.selectFrom('watch_events').select('id').where('block_height', '=', h).execute();
    expect(await record(h, [hit])).toMatchObject({ recorded: true, events: 1, deliveries: 1 });
    expect(await record(h, [hit])).toEqual({ recorded: false, events: 0, deliveries: 0 });
    expect(await events()).toHaveLength(1);
    expect(await cursor()).toBe(h + 1);

    // At the same time: exactly one of them wins.
    const h2 = h + 1;
    const both = await Promise.all([record(h2, [payment()]), record(h2, [payment()])]);
    expect(both.map((r) => r.recorded).sort()).toEqual([false, true]);
    expect(await t.store.db.selectFrom('watch_events').select('id').where('block_height', '=', h2).execute()).toHaveLength(1);
    expect(await cursor()).toBe(h2 + 1);
  });
});

describe('watches deleted mid-block', () => {
  it('a hit of a watch deleted while its block was processed is not recorded; the others are', async () => {
    const gone = (await m.call('POST', '/v1/address-watch/addresses', json({ network_slug: 'eth', address: `0x${'ef'.repeat(20)}` }))).body.watch_id;
    const h = await freshHeight();
    // Matched while the watch existed...
    const hits = [payment(gone, '1'), payment(watchId, '2')];
    // ...deleted before the block's transaction.
    expect((await m.call('DELETE', '/v1/address-watch/addresses', json({ watch_id: gone }))).status).toBe(200);
    expect(await record(h, hits)).toEqual({ recorded: true, events: 1, deliveries: 1 });
    const stored = await t.store.db.selectFrom('watch_events').select(['watch_id']).where('block_height', '=', h).execute();
    expect(stored).toEqual([{ watch_id: watchId }]);
  });
});

describe('deliveries of events orphaned by a reorg', () => {
  const delivery = async (txHash: string) => {
    const rows = await t.store.db.selectFrom('webhook_deliveries as d').innerJoin('watch_events as e', 'e.id', 'd.event_id')
      .select(['d.id', 'd.status', 'd.last_error', 'd.last_status_code']).where('e.body', 'like', `%${txHash}%`).execute();
    expect(rows).toHaveLength(1);
    return rows[0]!;
  };
  const attempts = async (deliveryId: number) => (await t.store.db.selectFrom('webhook_attempts').select('status_code').where('delivery_id', '=', deliveryId).execute()).map((a) => a.status_code);
  const credits = async () => (await t.store.db.selectFrom('usage_daily').select('credits').where('account_id', '=', m.userId).execute()).reduce((n, r) => n + r.credits, 0);
  const sentTimes = (txHash: string) => rx.received.filter((r) => JSON.parse(r.body).tx_hash === txHash).length;
  async function until(what: string, fn: () => Promise<boolean>): Promise<void> {
    const deadline = Date.now() + 10_000;
    while (!(await fn())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** Earlier tests' deliveries go out first: their billing must not land mid-test. */
  async function drain(): Promise<void> {
    rx.respond = () => 200;
    t.service.webhooks.kick();
    await until('the outbox to drain', async () => (await t.store.db.selectFrom('webhook_deliveries').select('id').where('status', '=', 'pending').execute()).length === 0);
  }

  /** Records a payment and has its delivery reach the receiver, which holds the answer. */
  async function inFlight(): Promise<{ h: number; txHash: string; answer: (status: number) => void }> {
    await drain();
    const h = await freshHeight();
    const hit = payment();
    let answer!: (status: number) => void;
    const held = new Promise<number>((resolve) => { answer = resolve; });
    rx.respond = (r) => (JSON.parse(r.body).tx_hash === hit.txHash ? held : 200);
    await record(h, [hit]);
    t.service.webhooks.kick();
    await rx.waitFor(() => sentTimes(hit.txHash) === 1);
    return { h, txHash: hit.txHash, answer };
  }

  for (const status of [503, 200]) {
    it(`one in flight during the rewind is cancelled, not retried, not billed (receiver answers ${status})`, async () => {
      const { h, txHash, answer } = await inFlight();
      const before = await credits();
      expect(await rewindTo(t.store, env.id, h)).toMatchObject({ removedEvents: 1 });
      answer(status);
      const { id } = await delivery(txHash);
      await until('the attempt to be recorded', async () => (await attempts(id)).length === 1);
      expect(await delivery(txHash)).toMatchObject({ status: 'cancelled', last_error: 'the block left the chain (reorg)' });
      expect(await attempts(id)).toEqual([status]);
      // Nothing due any more: a kick sends nothing, and nothing was billed.
      t.service.webhooks.kick();
      await new Promise((r) => setTimeout(r, 200));
      expect(sentTimes(txHash)).toBe(1);
      expect(await credits()).toBe(before);
    });
  }

  it('a pending delivery whose event was removed (rewound by an older process, or between claim and send) is cancelled unsent', async () => {
    await drain();
    const h = await freshHeight();
    const hit = payment();
    // The new delivery's notification wakes the worker (on PostgreSQL from the store itself):
    // held, it cannot claim the row before the event leaves the chain.
    const release = await t.service.supervisor.hold('deliveries');
    let id: number;
    try {
      await record(h, [hit]);
      ({ id } = await delivery(hit.txHash));
      await t.store.db.updateTable('watch_events').set({ removed: 1 }).where('block_height', '=', h).execute();
    } finally {
      release();
    }
    const before = await credits();
    t.service.webhooks.kick();
    await until('the delivery to be settled', async () => (await delivery(hit.txHash)).status !== 'pending');
    expect(await delivery(hit.txHash)).toMatchObject({ status: 'cancelled', last_error: 'the block left the chain (reorg)' });
    expect(await attempts(id)).toEqual([]);
    expect(sentTimes(hit.txHash)).toBe(0);
    expect(await credits()).toBe(before);
  });
});

describe('a watch added while its first block is being recorded', () => {
  it('the record waits for the add and matches the block again with the watch, which it had not heard of', async () => {
    const { addWatchIn } = await import('../src/watch/watches.js');
    const { parseAddress } = await import('../src/watch/addresses.js');
    const { getAccount } = await import('../src/store/index.js');
    const { WatchRegistry } = await import('../src/watch/registry.js');
    const { allWatches } = await import('../src/watch/watches.js');
    // The scanning instance's watches, read before the add and never told of it.
    const stale = new WatchRegistry();
    stale.load(await allWatches(t.store));
    const h = await freshHeight();
    const address = parseAddress(env, '0x2222222222222222222222222222222222222222');
    const plan = t.store.catalog.plan((await getAccount(t.store, m.userId))!.plan_id);
    let added!: () => void;
    const inserted = new Promise<void>((r) => { added = r; });
    let commit!: () => void;
    const held = new Promise<void>((r) => { commit = r; });
    // Another instance's add, its transaction held open after the insert.
    const adding = t.store.db.transaction().execute(async (trx) => {
      const r = await addWatchIn(trx, { accountId: m.userId, plan, env, networkSlug: 'eth', address });
      added();
      await held;
      return r.row;
    });
    let row;
    try {
      await inserted;
      const recording = recordBlock(t.store, stale, env, { height: h, hash: hex32(), txHashes: [] }, []);
      // The record cannot pass the add: it waits on the cursor the add read its start from.
      const early = await Promise.race([recording.then(() => 'recorded'), new Promise((r) => setTimeout(() => r('waiting'), 300))]);
      expect(early).toBe('waiting');
      commit();
      row = await adding;
      expect(await recording).toEqual({ recorded: false, events: 0, deliveries: 0, rematch: true });
      expect(row.start_height).toBe(h);
      expect(stale.lookup(env.id, address.key)?.map((w) => w.watchId)).toEqual([row.watch_id]);
      expect(await cursor()).toBe(h);
      // Matched again (the registry now knows it), the block is recorded with the payment.
      const hit = { ...payment(row.watch_id), watch: { ...payment(row.watch_id).watch, address: address.display } };
      expect(await recordBlock(t.store, stale, env, { height: h, hash: hex32(), txHashes: [hit.txHash] }, [hit]))
        .toMatchObject({ recorded: true, events: 1 });
    } finally {
      commit();
      await adding.catch(() => {});
      if (row) await t.store.db.deleteFrom('watched_addresses').where('watch_id', '=', row.watch_id).execute();
    }
  });
});

describe('a rewind run twice', () => {
  it('a retried or stale rewind marks nothing again and leaves the new chain\'s block at the same height alone', async () => {
    const h = await freshHeight();
    const orphaned = payment();
    const orphanHash = hex32();
    expect(await record(h, [orphaned], orphanHash)).toMatchObject({ recorded: true, events: 1, deliveries: 1 });
    expect(await rewindTo(t.store, env.id, h, undefined, { hash: orphanHash })).toEqual({ removedEvents: 1, cancelled: 1 });
    // The same rewind again at once (a retry after its commit): nothing left to undo.
    expect(await rewindTo(t.store, env.id, h, undefined, { hash: orphanHash })).toEqual({ removedEvents: 0, cancelled: 0 });
    // The transaction re-mined in the new chain's block at the same height.
    const remined = { ...orphaned };
    const newHash = hex32();
    expect(await record(h, [remined], newHash)).toMatchObject({ recorded: true, events: 1, deliveries: 1 });
    // The old rewind once more (another instance's, or a retry that saw the old block): the
    // cursor is where it expects, but block h is now another one.
    expect(await rewindTo(t.store, env.id, h, undefined, { hash: orphanHash })).toEqual({ removedEvents: 0, cancelled: 0 });
    const events = await t.store.db.selectFrom('watch_events').select(['id', 'block_hash', 'removed']).where('network_environment_id', '=', env.id)
      .where('block_height', '=', h).orderBy('id').execute();
    expect(events.map((e) => [e.block_hash, e.removed])).toEqual([[orphanHash, 1], [newHash, 0]]);
    const deliveries = await t.store.db.selectFrom('webhook_deliveries').select(['event_id', 'status']).where('event_id', 'in', events.map((e) => e.id)).orderBy('event_id').execute();
    expect(deliveries.map((d) => d.status)).toEqual(['cancelled', expect.not.stringMatching(/cancelled/)]);
    expect(await cursor()).toBe(h + 1);
  });
});

describe('scanner lease (one scanning instance per environment)', () => {
  it('a free or expired lease is taken with the next generation; a former owner\'s cursor and event writes are fenced off', async () => {
    const { acquireLease, LeaseLostError } = await import('../src/watch/lease.js');
    const sep = t.store.catalog.environmentBySlug('eth-sepolia')!; // nobody watches it: no scanner holds it
    const a = await acquireLease(t.store.db, sep.id, 'instance-a', 100);
    expect(a).toEqual({ owner: 'instance-a', generation: 1 });
    expect(await acquireLease(t.store.db, sep.id, 'instance-b', 100)).toBeUndefined(); // live: left alone
    expect(await acquireLease(t.store.db, sep.id, 'instance-a', 100)).toEqual(a); // renewed by its owner
    await new Promise((r) => setTimeout(r, 150));
    const b = await acquireLease(t.store.db, sep.id, 'instance-b', 60_000);
    expect(b).toEqual({ owner: 'instance-b', generation: 2 });

    await setCursor(t.store.db, sep.id, 70);
    const block = (height: number) => ({ height, hash: hex32(), txHashes: [] });
    const reg = t.service.addressWatch.registry;
    // A stalled into B's time: its block and its rewind roll back, the cursor stays B's.
    await expect(recordBlock(t.store, reg, sep, block(70), [], a!)).rejects.toBeInstanceOf(LeaseLostError);
    await expect(rewindTo(t.store, sep.id, 60, a!)).rejects.toBeInstanceOf(LeaseLostError);
    expect((await t.store.db.selectFrom('scanner_cursors').select('next_height').where('network_environment_id', '=', sep.id).executeTakeFirst())?.next_height).toBe(70);
    expect(await recordBlock(t.store, reg, sep, block(70), [], b!)).toMatchObject({ recorded: true });
    expect((await t.store.db.selectFrom('scanner_cursors').select('next_height').where('network_environment_id', '=', sep.id).executeTakeFirst())?.next_height).toBe(71);
    await t.store.db.deleteFrom('scanner_leases').where('network_environment_id', '=', sep.id).execute();
    await t.store.db.deleteFrom('scanner_cursors').where('network_environment_id', '=', sep.id).execute();
    await t.store.db.deleteFrom('scanner_blocks').where('network_environment_id', '=', sep.id).execute();
  });
});

describe('a hit\'s fields in columns of their own (what payments, refunds and payouts query)', () => {
  it('a recorded hit writes them; hitEvents finds hits by watch, address, direction, type and token, without the removed ones', async () => {
    const h = await freshHeight();
    const since = new Date(Date.now() - 1000).toISOString();
    const token = `0x${'7a'.repeat(20)}`;
    const incoming = payment(watchId, '1000000000000000000000000');
    const outgoing: Hit = { ...payment(watchId, '42'), type: 'payout', direction: 'out', from: ADDR, to: `0x${'cd'.repeat(20)}`, token, logIndex: 3 };
    expect(await record(h, [incoming, outgoing])).toMatchObject({ recorded: true, events: 2 });
    const mine = async (f: Parameters<typeof hitEvents>[1]) => (await hitEvents(t.store.db, { since, ...f }).orderBy('id').execute())
      .filter((e) => [incoming.txHash, outgoing.txHash].includes(e.tx_hash)).map((e) => e.tx_hash);

    const [inRow, outRow] = await hitEvents(t.store.db, { watchId, since }).where('tx_hash', 'in', [incoming.txHash, outgoing.txHash]).orderBy('id').execute();
    expect(inRow).toMatchObject({
      watch_id: watchId, network_environment_id: env.id, type: 'payment', block_height: h, tx_hash: incoming.txHash, direction: 'in',
      address: ADDR, from_address: incoming.from, to_address: ADDR, token: null, amount: '1000000000000000000000000', log_index: null,
    });
    expect(outRow).toMatchObject({ type: 'payout', direction: 'out', from_address: ADDR, to_address: outgoing.to, token, amount: '42', log_index: 3 });
    expect(await mine({ direction: 'out' })).toEqual([outgoing.txHash]);
    expect(await mine({ types: ['payment'] })).toEqual([incoming.txHash]);
    expect(await mine({ token })).toEqual([outgoing.txHash]);
    expect(await mine({ token: null })).toEqual([incoming.txHash]);
    expect(await mine({ address: ADDR, envId: env.id })).toEqual([incoming.txHash, outgoing.txHash]);
    expect(await mine({ address: `0x${'00'.repeat(20)}` })).toEqual([]);
    expect(await mine({ watchId: 'w_other' })).toEqual([]);

    // A reorg takes the block off: its hits leave hitEvents and are among removedEvents.
    await rewindTo(t.store, env.id, h);
    expect(await mine({})).toEqual([]);
    const removed = (await removedEvents(t.store.db).execute()).map((r) => r.id);
    expect(removed).toEqual(expect.arrayContaining([inRow!.id, outRow!.id]));
  });
});

describe('migration 0032: the hit columns', () => {
  const kinds = testDatabaseUrl ? (['sqlite', 'postgres'] as const) : (['sqlite'] as const);
  for (const kind of kinds) {
    it(`fills them from the body of the events stored before, and of those a previous-release instance records after (${kind})`, async () => {
      const { db, migrator, cleanup } = await migrationDb(kind);
      try {
        expect((await migrator.migrateTo('0031_member_email_joined_unique')).error).toBeUndefined();
        const now = new Date().toISOString();
        // The previous release's insert (record.ts insertEvent as 6d15075 ran it): the body alone.
        const previousRelease = (id: number, type: string, body: object) => db.insertInto('watch_events').values({
          id, account_id: 1, watch_id: type === 'block' ? null : 'w_1', network_environment_id: 1, network: 'eth', type,
          block_height: 10, block_hash: '0xb', body: JSON.stringify(body), removed: 0, created_at: now,
        }).execute();
        const hit = (tx: string, more: object) => ({
          watch_id: 'w_1', network: 'eth', address: '0xWatched', tx_hash: tx, block_height: 10, block_hash: '0xb', ...more,
        });
        await previousRelease(1, 'payment', hit('0x1', { type: 'payment', direction: 'in', from: '0xFrom', to: '0xWatched', token: null, amount: '123456789012345678901234567890', log_index: null }));
        await previousRelease(2, 'payout', hit('0x2', { type: 'payout', direction: 'out', from: '0xWatched', to: '0xTo', token: '0xToken', amount: '7', log_index: 4 }));
        await previousRelease(3, 'block', { type: 'block', network: 'eth', block_height: 10, block_hash: '0xb', tx_count: 0, transactions: [] });

        expect((await migrator.migrateToLatest()).error).toBeUndefined();
        await previousRelease(4, 'payment', hit('0x4', { type: 'payment', direction: 'in', from: null, to: '0xWatched', token: '0xToken', amount: '5', log_index: 0 }));
        await previousRelease(5, 'block', { type: 'block', network: 'eth', block_height: 11, block_hash: '0xc', tx_count: 0, transactions: [] });
        // This release writes the columns itself: the trigger leaves them as written.
        await db.insertInto('watch_events').values({
          id: 6, account_id: 1, watch_id: 'w_1', network_environment_id: 1, network: 'eth', type: 'payment', block_height: 12, block_hash: '0xd',
          body: JSON.stringify(hit('0xbody', { type: 'payment', direction: 'in', from: null, to: '0xWatched', token: null, amount: '1', log_index: null })),
          removed: 0, created_at: now, tx_hash: '0x6', direction: 'in', address: '0xWatched', from_address: null, to_address: '0xWatched',
          token: null, amount: '6', log_index: 1,
        }).execute();

        const rows = await db.selectFrom('watch_events')
          .select(['id', 'tx_hash', 'direction', 'address', 'from_address', 'to_address', 'token', 'amount', 'log_index']).orderBy('id').execute();
        expect(rows.map((r) => ({ ...r, id: Number(r.id), log_index: r.log_index === null ? null : Number(r.log_index) }))).toEqual([
          { id: 1, tx_hash: '0x1', direction: 'in', address: '0xWatched', from_address: '0xFrom', to_address: '0xWatched', token: null, amount: '123456789012345678901234567890', log_index: null },
          { id: 2, tx_hash: '0x2', direction: 'out', address: '0xWatched', from_address: '0xWatched', to_address: '0xTo', token: '0xToken', amount: '7', log_index: 4 },
          { id: 3, tx_hash: null, direction: null, address: null, from_address: null, to_address: null, token: null, amount: null, log_index: null },
          { id: 4, tx_hash: '0x4', direction: 'in', address: '0xWatched', from_address: null, to_address: '0xWatched', token: '0xToken', amount: '5', log_index: 0 },
          { id: 5, tx_hash: null, direction: null, address: null, from_address: null, to_address: null, token: null, amount: null, log_index: null },
          { id: 6, tx_hash: '0x6', direction: 'in', address: '0xWatched', from_address: null, to_address: '0xWatched', token: null, amount: '6', log_index: 1 },
        ]);
      } finally {
        await cleanup();
      }
    });
  }
});
