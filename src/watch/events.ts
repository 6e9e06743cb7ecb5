import { sql, type Kysely } from 'kysely';
import type { Database, Store } from '../store/index.js';
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
