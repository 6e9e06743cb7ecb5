import { sql, type Kysely } from 'kysely';
import type { Database, Store } from '../store/index.js';
import type { Hit } from '../chains/family.js';
import { eventJson } from './record.js';

export interface EventQuery {
  accountId: number;
  after?: number;
  limit: number;
  envId?: number;
  type?: string;
  watchId?: string;
}

/**
 * The feed, oldest first. `next_after` is the last id returned, or the `after` given when
 * nothing is new, so a poller can always pass it back. Events of blocks that left the chain
 * in a reorg are not in it.
 */
export async function listEvents(store: Store, q: EventQuery): Promise<{ events: unknown[]; next_after: string | null }> {
  const rows = await eventsQuery(store.db, q).execute();
  const last = rows[rows.length - 1];
  return {
    events: rows.map((r) => JSON.parse(eventJson(r.id, JSON.parse(r.body) as object, r.created_at)) as unknown),
    next_after: last ? String(last.id) : q.after !== undefined ? String(q.after) : null,
  };
}

/**
 * One page of the feed. Each filter combination has an index that starts with its equality
 * columns and ends with the id (migration 0018), so a page reads only the rows it returns.
 */
export function eventsQuery(db: Kysely<Database>, q: EventQuery) {
  let query = db.selectFrom('watch_events').select(['id', 'body', 'created_at'])
    .where('account_id', '=', q.accountId).where('removed', '=', 0);
  if (q.after !== undefined) query = query.where('id', '>', q.after);
  if (q.envId !== undefined) {
    // A watch's events are all on its network: with a watch_id the network only checks them,
    // written as an expression so that SQLite (no statistics) searches by the watch rather
    // than by the network, whose index holds the whole account's events there.
    query = q.watchId === undefined ? query.where('network_environment_id', '=', q.envId)
      : query.where((eb) => eb(sql<number>`network_environment_id + 0`, '=', q.envId!));
  }
  if (q.type !== undefined) query = query.where('type', '=', q.type);
  if (q.watchId !== undefined) query = query.where('watch_id', '=', q.watchId);
  return query.orderBy('id').limit(q.limit);
}

/** The newest visible event id of an account: where a follower that wants only new events starts. */
export async function latestEventId(store: Store, accountId: number): Promise<string | null> {
  const row = await store.db.selectFrom('watch_events').select((eb) => eb.fn.max('id').as('id'))
    .where('account_id', '=', accountId).executeTakeFirst();
  return row?.id == null ? null : String(row.id);
}

/** Newest first, for reading rather than following (the cabinet); `before` pages back. */
export async function recentEvents(
  store: Store, q: { accountId: number; limit: number; before?: number },
): Promise<{ events: Array<Record<string, unknown>>; next_before: string | null }> {
  let query = store.db.selectFrom('watch_events').select(['id', 'body', 'created_at'])
    .where('account_id', '=', q.accountId).where('removed', '=', 0);
  if (q.before !== undefined) query = query.where('id', '<', q.before);
  const rows = await query.orderBy('id', 'desc').limit(q.limit).execute();
  return {
    events: rows.map((r) => JSON.parse(eventJson(r.id, JSON.parse(r.body) as object, r.created_at)) as Record<string, unknown>),
    next_before: rows.length === q.limit ? String(rows[rows.length - 1]!.id) : null,
  };
}

/** Deletes up to `limit` events created before `cutoff` (the retention job); how many. */
export async function pruneEvents(db: Kysely<Database>, cutoff: string, limit: number): Promise<number> {
  // Oldest first by the created_at index (0018): reads the rows it deletes, and nothing when
  // none is old enough (in id order it walked every kept event to find that out).
  const rows = await db.selectFrom('watch_events').select('id').where('created_at', '<', cutoff)
    .orderBy('created_at').orderBy('id').limit(limit).execute();
  if (rows.length === 0) return 0;
  await db.deleteFrom('watch_events').where('id', 'in', rows.map((r) => r.id)).execute();
  return rows.length;
}

/** A hit's event type: what a watched address did in a transaction (`block` events are not hits). */
export type HitType = Hit['type'];

const HIT_TYPES: readonly HitType[] = ['payment', 'payout', 'other'];

/** Which hit events: each field narrows them, none is required. */
export interface HitEventFilter {
  watchId?: string;
  envId?: number;
  /** The watched address as its watch shows it: the events of every watch of it. */
  address?: string;
  /** All three when not given. */
  types?: readonly HitType[];
  /** `in`: funds came to the watched address; `out`: they left it (payouts, refunds). */
  direction?: 'in' | 'out';
  /** A token contract (or mint); null: the native coin. */
  token?: string | null;
  /** Created at or after this time (ISO 8601). */
  since?: string;
}

/** One hit event as another module reads it: from its own columns (migration 0032), never from the body. */
export interface HitEvent {
  id: number;
  watch_id: string;
  network_environment_id: number;
  type: HitType;
  block_height: number;
  block_hash: string;
  created_at: string;
  tx_hash: string;
  direction: 'in' | 'out';
  address: string;
  from_address: string | null;
  to_address: string | null;
  token: string | null;
  /** In base units, as a decimal string. */
  amount: string;
  log_index: number | null;
}

const HIT_EVENT_COLUMNS = [
  'id', 'watch_id', 'network_environment_id', 'type', 'block_height', 'block_hash', 'created_at',
  'tx_hash', 'direction', 'address', 'from_address', 'to_address', 'token', 'amount', 'log_index',
] as const satisfies ReadonlyArray<keyof HitEvent>;

/**
 * The hit events still on the chain (a reorg's removed ones left out), typed, as a query: run it
 * (`.execute()`), or join it as a table where the other side is the caller's own (payments join
 * their orders and funding: `.crossJoin(hitEvents(db, f).as('e'))`). Both stores fold such a
 * subquery into the outer query, so watch_events' indexes serve it as they would the table:
 * `(watch_id, type, created_at)` for a watch's events of one type since a time.
 */
export function hitEvents(db: Kysely<Database>, f: HitEventFilter = {}) {
  const types = f.types ?? HIT_TYPES;
  let q = db.selectFrom('watch_events').select(HIT_EVENT_COLUMNS).where('removed', '=', 0)
    .where((eb) => (types.length === 1 ? eb('type', '=', types[0]!) : eb('type', 'in', types)));
  if (f.watchId !== undefined) q = q.where('watch_id', '=', f.watchId);
  if (f.envId !== undefined) q = q.where('network_environment_id', '=', f.envId);
  if (f.address !== undefined) q = q.where('address', '=', f.address);
  if (f.direction !== undefined) q = q.where('direction', '=', f.direction);
  if (f.token !== undefined) q = q.where('token', f.token === null ? 'is' : '=', f.token);
  if (f.since !== undefined) q = q.where('created_at', '>=', f.since);
  return q.$narrowType<Pick<HitEvent, 'watch_id' | 'type' | 'tx_hash' | 'direction' | 'address' | 'amount'>>();
}

/**
 * Each event's block and whether a reorg removed it, as a query to join by `id` (payouts compare
 * a line's block with the node's before completing it).
 */
export function eventBlocks(db: Kysely<Database>) {
  return db.selectFrom('watch_events').select(['id', 'block_hash', 'removed']);
}

/**
 * The ids of events a reorg took off the chain, as a query to join: read from the partial index
 * of those few (`removed = 1` is a literal, as the index's own condition is, or it is not used).
 */
export function removedEvents(db: Kysely<Database>) {
  return db.selectFrom('watch_events').select('id').where('removed', '=', sql.lit(1));
}
