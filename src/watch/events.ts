import type { Store } from '../store/index.js';
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
  let query = store.db.selectFrom('watch_events').select(['id', 'body', 'created_at'])
    .where('account_id', '=', q.accountId).where('removed', '=', 0);
  if (q.after !== undefined) query = query.where('id', '>', q.after);
  if (q.envId !== undefined) query = query.where('network_environment_id', '=', q.envId);
  if (q.type !== undefined) query = query.where('type', '=', q.type);
  if (q.watchId !== undefined) query = query.where('watch_id', '=', q.watchId);
  const rows = await query.orderBy('id').limit(q.limit).execute();
  const last = rows[rows.length - 1];
  return {
    events: rows.map((r) => JSON.parse(eventJson(r.id, JSON.parse(r.body) as object, r.created_at)) as unknown),
    next_after: last ? String(last.id) : q.after !== undefined ? String(q.after) : null,
  };
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
