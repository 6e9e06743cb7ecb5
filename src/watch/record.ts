import type { Kysely } from 'kysely';
import type { Catalog, Database, Environment, Store, WatchedAddressRow } from '../store/index.js';
import { CHANNELS, lockFor, notifyIn } from '../store/index.js';
import { blockSubscribers, getWebhooks } from '../webhooks/config.js';
import { envIdentifier } from '../store/index.js';
import { filtersSelect } from '../webhooks/filters.js';
import { cancelEventDeliveries, creditsFor, enqueueDeliveries, type NewDelivery } from '../webhooks/outbox.js';
import type { WatchRegistry } from './registry.js';
import { fence, type ScannerLease } from './lease.js';
import type { Hit, ReferencedTx } from '../chains/family.js';
import { RpcctlError } from '../util/errors.js';

export interface ScannedBlock {
  height: number;
  hash: string;
  txHashes: string[];
}

/** Blocks kept for the parent-hash check; a deeper reorg is rewound only this far. */
export const KEPT_BLOCKS = 256;

/** Thrown inside the record transaction to roll it back: the block is someone else's. */
class CursorMovedError extends RpcctlError {
  readonly code = 'E_CURSOR_MOVED';
}

/** Thrown inside the record transaction to roll it back: the block was matched without some watches. */
class WatchesBehindError extends RpcctlError {
  readonly code = 'E_WATCHES_BEHIND';
  readonly rows: WatchedAddressRow[];
  constructor(rows: WatchedAddressRow[]) {
    super(`${rows.length} watch(es) added elsewhere were not yet known here`);
    this.rows = rows;
  }
}

/** Held while an environment's cursor is created, and by watch adds that find none (watches.ts). */
export function cursorLock(envId: number): string {
  return `scanner:${envId}`;
}

/**
 * Stores a block's events, their deliveries (outbox) and the advanced cursor in one
 * transaction: after a crash the block is either fully recorded or scanned again, so no
 * event is skipped or emitted twice. The cursor moves by compare-and-set: when another
 * scanner (a second process on the same store) recorded the block first, nothing is
 * written and `recorded` is false.
 *
 * A block is never recorded without a watch that starts at or before it: when the store has
 * watches the registry has not heard of (added through another instance whose notification
 * is late or lost), they are put into the registry, nothing is written, and `rematch` asks the
 * caller to match the block again.
 */
export async function recordBlock(
  store: Store, registry: WatchRegistry, env: Environment, block: ScannedBlock, hits: Hit[], lease?: ScannerLease,
): Promise<{ recorded: boolean; events: number; deliveries: number; rematch?: boolean }> {
  try {
    return await store.db.transaction().execute(async (trx) => {
      if (lease) await fence(trx, env.id, lease);
      // First, so a scanner that lost the race writes nothing and holds the lock briefly. It
      // also orders the record after every watch add that read the cursor (watches.ts
      // startHeightIn), so the query below sees each watch that starts at or before this block.
      const moved = await trx.updateTable('scanner_cursors').set({ next_height: block.height + 1, updated_at: new Date().toISOString() })
        .where('network_environment_id', '=', env.id).where('next_height', '=', block.height).executeTakeFirst();
      if (Number(moved.numUpdatedRows) !== 1) throw new CursorMovedError();
      await catchUpWatches(trx, registry, env.id);
      return { recorded: true, ...await writeBlock(trx, store.catalog, registry, env, block, hits) };
    });
  } catch (err) {
    if (err instanceof CursorMovedError) return { recorded: false, events: 0, deliveries: 0 };
    if (err instanceof WatchesBehindError) {
      for (const row of err.rows) registry.add(row);
      return { recorded: false, events: 0, deliveries: 0, rematch: true };
    }
    throw err;
  }
}

/**
 * The watches of the environment added since the registry last looked: one seek on
 * (network_environment_id, id), usually empty. Adds on an environment commit in id order
 * (watches.ts startHeightIn), so every watch at or below the highest id seen is known.
 */
async function catchUpWatches(trx: Kysely<Database>, registry: WatchRegistry, envId: number): Promise<void> {
  const rows = await trx.selectFrom('watched_addresses').selectAll()
    .where('network_environment_id', '=', envId).where('id', '>', registry.seenThrough(envId)).orderBy('id').execute();
  if (rows.length === 0) return;
  const unknown = rows.filter((r) => !registry.has(r));
  if (unknown.length > 0) throw new WatchesBehindError(unknown);
  registry.seen(envId, rows[rows.length - 1]!.id);
}

/** The block's events, their deliveries and its kept hash. */
async function writeBlock(
  trx: Kysely<Database>, catalog: Catalog, registry: WatchRegistry, env: Environment, block: ScannedBlock, hits: Hit[],
): Promise<{ events: number; deliveries: number }> {
  const nowMs = Date.now();
  const now = new Date(nowMs).toISOString();
  let { events, deliveries } = await writeHits(trx, catalog, env, block, hits, nowMs);
  const network = envIdentifier(env);
  for (const sub of await blockSubscribers(trx)) {
    const selected = sub.filters.block_networks.length > 0
      ? filtersSelect(catalog, sub.filters, 'block', null, env)
      : registry.accountWatches(env.id, sub.accountId);
    if (!selected) continue;
    const body = { type: 'block', network, block_height: block.height, block_hash: block.hash, tx_count: block.txHashes.length, transactions: block.txHashes };
    const id = await insertEvent(trx, { accountId: sub.accountId, watchId: null, env, network, type: 'block', block, body, now });
    events++;
    await enqueueEventDelivery(trx, catalog, env, sub.accountId, id, 'block', network, body, now, nowMs);
    deliveries++;
  }
  // Payment engines on other instances look now (this one's is told by the scanner's onRecorded).
  if (events > 0) await notifyIn(trx, CHANNELS.events, String(env.id));
  await trx.insertInto('scanner_blocks').values({ network_environment_id: env.id, height: block.height, hash: block.hash })
    .onConflict((oc) => oc.columns(['network_environment_id', 'height']).doUpdateSet({ hash: block.hash })).execute();
  await trx.deleteFrom('scanner_blocks').where('network_environment_id', '=', env.id).where('height', '<=', block.height - KEPT_BLOCKS).execute();
  return { events, deliveries };
}

/** The hits' events of the watches that still exist, and their webhook deliveries. */
async function writeHits(
  trx: Kysely<Database>, catalog: Catalog, env: Environment, block: ScannedBlock, hits: readonly Hit[], nowMs: number,
): Promise<{ events: number; deliveries: number }> {
  const now = new Date(nowMs).toISOString();
  let events = 0;
  let deliveries = 0;
  const current = await currentWatches(trx, hits);
  // No cut at the watch's start height: a block below it is only scanned again when a reorg
  // replaced it, and the new block, mined after the add, may hold a payment re-mined there.
  const kept = hits.filter((h) => current.has(h.watch.watchId));
  const webhooks = await getWebhooks(trx, [...new Set(kept.map((h) => h.watch.accountId))]);
  const bodies = kept.map((h) => ({
    watch_id: h.watch.watchId, network: h.watch.network, address: h.watch.address, tx_hash: h.txHash,
    block_height: block.height, type: h.type, direction: h.direction, block_hash: block.hash,
    from: h.from, to: h.to, token: h.token, amount: h.amount, log_index: h.logIndex,
  }));
  // A block paying a 1,000-line batch is 1,000 hits: their events written 100 a statement.
  const ids = await insertEvents(trx, kept.map((h, i) => ({ accountId: h.watch.accountId, watchId: h.watch.watchId, env, network: h.watch.network, type: h.type, block, body: bodies[i]!, hit: h, now })));
  events += kept.length;
  const hitDeliveries: NewDelivery[] = [];
  for (const [i, h] of kept.entries()) {
    const wh = webhooks.get(h.watch.accountId);
    // A watch a payment order made: its hits are the order's (its `payment_order` webhooks),
    // so it gets no Address Watch webhook; they stay in the feed.
    if (wh?.enabled && current.get(h.watch.watchId) === 'merchant' && filtersSelect(catalog, wh.filters, h.type, h.direction, env)) {
      hitDeliveries.push(eventDelivery(catalog, env, h.watch.accountId, ids[i]!, h.type, h.watch.network, bodies[i]!, now));
    }
  }
  await enqueueDeliveries(trx, hitDeliveries, nowMs);
  deliveries += hitDeliveries.length;
  return { events, deliveries };
}

/**
 * A transaction the reference lookup found (`ChainAdapter.referenced`, payments/references.ts)
 * in a block the scanner has passed without recording it for the watch (the node answered the
 * block as skipped or missing): its hits written as the scanner writes a block's, under the
 * scanner's lease, so the payments engine, its reorg and finality rules read them as any
 * other. Nothing for a block the scanner has not reached (it will record it), nor for a
 * transaction the watch has an event of. Only final transactions come here: below the cursor
 * no rewind reaches them. A block whose hash the node no longer tells is recorded under `''`.
 * The number of events written.
 */
export async function recordReferenced(store: Store, env: Environment, lease: ScannerLease, tx: ReferencedTx): Promise<number> {
  return store.db.transaction().execute(async (trx) => {
    await fence(trx, env.id, lease);
    const cursor = await trx.selectFrom('scanner_cursors').select('next_height').where('network_environment_id', '=', env.id).executeTakeFirst();
    if (!cursor || tx.height >= cursor.next_height || tx.hits.length === 0) return 0;
    const known = await trx.selectFrom('watch_events').select('id').where('watch_id', 'in', [...new Set(tx.hits.map((h) => h.watch.watchId))])
      .where('tx_hash', '=', tx.txHash).where('removed', '=', 0).limit(1).executeTakeFirst();
    if (known) return 0;
    const { events } = await writeHits(trx, store.catalog, env, { height: tx.height, hash: tx.hash ?? '', txHashes: [tx.txHash] }, tx.hits, Date.now());
    if (events > 0) await notifyIn(trx, CHANNELS.events, String(env.id));
    return events;
  });
}

/**
 * The hits' watches that still exist. The hits were matched against the registry before the
 * block was fetched; a watch deleted since then (its slot already free, maybe reused) must
 * get no events. Read in the record transaction, so a delete is either before it or after.
 */
async function currentWatches(trx: Kysely<Database>, hits: readonly Hit[]): Promise<Map<string, WatchedAddressRow['holder']>> {
  const ids = [...new Set(hits.map((h) => h.watch.watchId))];
  const current = new Map<string, WatchedAddressRow['holder']>();
  for (let i = 0; i < ids.length; i += 500) {
    const rows = await trx.selectFrom('watched_addresses').select(['watch_id', 'holder']).where('watch_id', 'in', ids.slice(i, i + 500)).execute();
    for (const r of rows) current.set(r.watch_id, r.holder);
  }
  return current;
}

/** The feed item and the webhook body: `id` first, the event's fields, `created_at` last. */
export function eventJson(id: number, body: object, createdAt: string): string {
  return JSON.stringify({ id: String(id), ...body, created_at: createdAt });
}

type NewEvent = { accountId: number; watchId: string | null; env: Environment; network: string; type: string; block: ScannedBlock; body: object; hit?: Hit; now: string };

const eventRow = (e: NewEvent) => ({
  account_id: e.accountId, watch_id: e.watchId, network_environment_id: e.env.id, network: e.network, type: e.type,
  block_height: e.block.height, block_hash: e.block.hash, body: JSON.stringify(e.body), removed: 0, created_at: e.now,
  ...(e.hit && hitColumns(e.hit)),
});

async function insertEvent(trx: Kysely<Database>, e: NewEvent): Promise<number> {
  return (await insertEvents(trx, [e]))[0]!;
}

/**
 * Events in multi-row inserts; their ids in the order given. A statement's rows take their ids
 * in the order they are listed (ascending), while RETURNING's order is not promised: sorted.
 */
async function insertEvents(trx: Kysely<Database>, es: readonly NewEvent[]): Promise<number[]> {
  const ids: number[] = [];
  for (let i = 0; i < es.length; i += 100) {
    const rows = await trx.insertInto('watch_events').values(es.slice(i, i + 100).map(eventRow)).returning('id').execute();
    ids.push(...rows.map((r) => Number(r.id)).sort((a, b) => a - b));
  }
  return ids;
}

/** A hit's fields in their columns, the ones events.ts hitEvents reads (the body carries the same for the feed and webhooks). */
function hitColumns(h: Hit) {
  return {
    tx_hash: h.txHash, direction: h.direction, address: h.watch.address, from_address: h.from, to_address: h.to,
    token: h.token, amount: h.amount, log_index: h.logIndex,
  };
}

function eventDelivery(catalog: Catalog, env: Environment, accountId: number, eventId: number, type: string, network: string, body: object, now: string): NewDelivery {
  return {
    accountId, eventId, webhookId: `evt_${eventId}`, type, network, body: eventJson(eventId, body, now),
    credits: creditsFor(type, catalog.environment(env.id)?.network ?? env.network), isTest: false,
  };
}

async function enqueueEventDelivery(
  trx: Kysely<Database>, catalog: Catalog, env: Environment, accountId: number, eventId: number, type: string,
  network: string, body: object, now: string, nowMs: number,
): Promise<void> {
  await enqueueDeliveries(trx, [eventDelivery(catalog, env, accountId, eventId, type, network, body, now)], nowMs);
}

export async function setCursor(db: Kysely<Database>, envId: number, nextHeight: number, now = new Date().toISOString()): Promise<void> {
  await db.insertInto('scanner_cursors').values({ network_environment_id: envId, next_height: nextHeight, updated_at: now })
    .onConflict((oc) => oc.column('network_environment_id').doUpdateSet({ next_height: nextHeight, updated_at: now })).execute();
}

/**
 * The cursor, created at `nextHeight` if there is none. An existing one (another scanner's,
 * possibly just written) is kept: overwriting it could skip or replay blocks.
 */
export async function initCursor(db: Kysely<Database>, envId: number, nextHeight: number): Promise<number> {
  return db.transaction().execute(async (trx) => {
    // Not while a watch add that found no cursor is under way (watches.ts startHeightIn).
    await lockFor(trx, cursorLock(envId));
    await trx.insertInto('scanner_cursors').values({ network_environment_id: envId, next_height: nextHeight, updated_at: new Date().toISOString() })
      .onConflict((oc) => oc.column('network_environment_id').doNothing()).execute();
    const r = await trx.selectFrom('scanner_cursors').select('next_height').where('network_environment_id', '=', envId).executeTakeFirstOrThrow();
    return r.next_height;
  });
}

export async function getCursor(store: Store, envId: number): Promise<number | undefined> {
  const r = await store.db.selectFrom('scanner_cursors').select('next_height').where('network_environment_id', '=', envId).executeTakeFirst();
  return r?.next_height;
}

/**
 * The highest kept block below `height`: the one a block at `height` must descend from (the
 * height just below, or on a chain with skipped slots the last slot that had a block).
 */
export async function lastKeptBlock(store: Store, envId: number, height: number): Promise<{ height: number; hash: string } | undefined> {
  const r = await store.db.selectFrom('scanner_blocks').select(['height', 'hash']).where('network_environment_id', '=', envId)
    .where('height', '<', height).where('height', '>=', height - KEPT_BLOCKS).orderBy('height', 'desc').limit(1).executeTakeFirst();
  return r && { height: Number(r.height), hash: r.hash };
}

/**
 * Moves the cursor from `from` to `to` over heights the chain has no block at (skipped slots),
 * by compare-and-set as recording a block does; false when the cursor was not at `from`.
 */
export async function skipHeights(store: Store, envId: number, from: number, to: number, lease?: ScannerLease): Promise<boolean> {
  return store.db.transaction().execute(async (trx) => {
    if (lease) await fence(trx, envId, lease);
    const moved = await trx.updateTable('scanner_cursors').set({ next_height: to, updated_at: new Date().toISOString() })
      .where('network_environment_id', '=', envId).where('next_height', '=', from).executeTakeFirst();
    return Number(moved.numUpdatedRows) === 1;
  });
}

/** Block `height` is the one recorded under `hash`: its kept hash says so, or below the kept blocks its events do. */
async function recordedAs(trx: Kysely<Database>, envId: number, height: number, hash: string): Promise<boolean> {
  const kept = await trx.selectFrom('scanner_blocks').select('hash').where('network_environment_id', '=', envId).where('height', '=', height).executeTakeFirst();
  if (kept) return kept.hash === hash;
  const event = await trx.selectFrom('watch_events').select('id').where('network_environment_id', '=', envId).where('block_height', '=', height)
    .where('block_hash', '=', hash).where('removed', '=', 0).limit(1).executeTakeFirst();
  return event !== undefined;
}

/**
 * The highest block below `height` that has events still in the feed, with the hash they were
 * recorded under: the evidence left about a block below the kept window.
 */
export async function lastEventBlockBelow(store: Store, envId: number, height: number): Promise<{ height: number; hash: string } | undefined> {
  const r = await store.db.selectFrom('watch_events').select(['block_height', 'block_hash'])
    .where('network_environment_id', '=', envId).where('block_height', '<', height).where('removed', '=', 0)
    // An event the reference lookup recorded without its block's hash tells nothing of the block.
    .where('block_hash', '!=', '')
    .orderBy('block_height', 'desc').limit(1).executeTakeFirst();
  return r && { height: Number(r.block_height), hash: r.block_hash };
}

/**
 * Undoes block `height` and above after a reorg: their events leave the feed (`removed`),
 * their deliveries that have not been delivered are cancelled, and the cursor moves back.
 *
 * Only what the caller saw: the cursor at `from` (by default `height + 1`: one block back)
 * and, when `hash` is given, block `height` recorded under that hash (its kept hash, or below
 * the kept blocks its events'). A rewind run again, a retry after its commit or a stale
 * one, finds otherwise and does nothing: it would mark the same events again, or remove and
 * cancel those of the new chain's block recorded since at the same height.
 */
export async function rewindTo(
  store: Store, envId: number, height: number, lease?: ScannerLease, seen: { from?: number; hash?: string } = {},
): Promise<{ removedEvents: number; cancelled: number }> {
  return store.db.transaction().execute(async (trx) => {
    if (lease) await fence(trx, envId, lease);
    const none = { removedEvents: 0, cancelled: 0 };
    if (seen.hash !== undefined && !(await recordedAs(trx, envId, height, seen.hash))) return none;
    const moved = await trx.updateTable('scanner_cursors').set({ next_height: height, updated_at: new Date().toISOString() })
      .where('network_environment_id', '=', envId).where('next_height', '=', seen.from ?? height + 1).executeTakeFirst();
    if (Number(moved.numUpdatedRows) !== 1) return none;
    const ids = (await trx.selectFrom('watch_events').select('id')
      .where('network_environment_id', '=', envId).where('block_height', '>=', height).where('removed', '=', 0).execute()).map((r) => r.id);
    let cancelled = 0;
    for (let i = 0; i < ids.length; i += 500) {
      const chunk = ids.slice(i, i + 500);
      await trx.updateTable('watch_events').set({ removed: 1 }).where('id', 'in', chunk).execute();
      cancelled += await cancelEventDeliveries(trx, chunk);
    }
    await trx.deleteFrom('scanner_blocks').where('network_environment_id', '=', envId).where('height', '>=', height).execute();
    if (ids.length > 0) await notifyIn(trx, CHANNELS.events, String(envId));
    return { removedEvents: ids.length, cancelled };
  });
}
