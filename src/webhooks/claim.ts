import type { Kysely } from 'kysely';
import type { Database, WebhookDeliveryRow } from '../store/index.js';

export interface ClaimOptions {
  /** The claim id written on the rows (the worker's id). */
  owner: string;
  leaseMs: number;
  /** Deliveries wanted at most. */
  max: number;
  /** In flight per account at most, counting `inflight`. */
  perAccount: number;
  /** This worker's deliveries in flight, by account. */
  inflight: ReadonlyMap<number, number>;
  /** Round robin: the visit starts with the first account after this one. */
  after: number;
  /** At most this many accounts looked at (a claim's cost stays bounded); the next claim goes on. */
  maxAccounts: number;
  /** PostgreSQL: lock the rows read and skip those another instance is claiming. */
  skipLocked: boolean;
  now?: number;
}

export interface ClaimResult {
  rows: WebhookDeliveryRow[];
  /** The last account looked at: the next claim's `after`. */
  cursor: number;
  /** Every account with pending work was looked at; false when `max` or `maxAccounts` ended the visit first. */
  complete: boolean;
}

/**
 * Leases due deliveries, visiting the accounts that have pending work in turn, each for its
 * free slots. Every step is a seek on webhook_deliveries_claim (status, account_id,
 * next_attempt_at, id): finding the next account, then its due rows in order. A claim reads
 * what it takes, what is in flight and one entry per account looked at, never the backlog
 * behind them, and a large backlog of one account waits its turn rather than filling every
 * slot. (An account whose work is all backing off still costs its seek on each round.)
 *
 * Call it inside a transaction: on PostgreSQL the rows read stay locked (FOR UPDATE re-checks
 * them, SKIP LOCKED passes over another instance's) until the lease is written; on SQLite the
 * transaction is the one writer. The update still takes a row only while its lease is free.
 */
export async function claimDue(db: Kysely<Database>, o: ClaimOptions): Promise<ClaimResult> {
  const now = o.now ?? Date.now();
  const picked: number[] = [];
  let cursor = o.after;
  let wrapped = false;
  let visited = 0;
  let complete = false;
  while (picked.length < o.max && visited < o.maxAccounts) {
    const next = await nextAccountQuery(db, cursor).executeTakeFirst();
    const account = next?.account_id;
    if (account === undefined) {
      if (wrapped || o.after < 0) {
        complete = true;
        break;
      }
      wrapped = true;
      cursor = -1;
      continue;
    }
    if (wrapped && account > o.after) {
      complete = true;
      break;
    }
    cursor = account;
    visited++;
    const want = Math.min(o.perAccount - (o.inflight.get(account) ?? 0), o.max - picked.length);
    if (want <= 0) continue;
    let q = dueQuery(db, account, now, want);
    if (o.skipLocked) q = q.forUpdate().skipLocked();
    for (const r of await q.execute()) picked.push(r.id);
  }
  if (picked.length === 0) return { rows: [], cursor, complete };
  const rows = await db.updateTable('webhook_deliveries')
    // The attempt counts from the claim: one cut short by a crash still moves the schedule on.
    .set((eb) => ({ lease_owner: o.owner, lease_until: now + o.leaseMs, attempts: eb('attempts', '+', 1) }))
    // By id alone, not also `status = 'pending'`: SQLite, without statistics, would take that
    // for the selective condition and walk every pending row. The transaction keeps it true.
    .where('id', 'in', picked)
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
    .returningAll().execute();
  // Oldest due first within the batch, as they were picked.
  const order = new Map(picked.map((id, i) => [id, i]));
  rows.sort((a, b) => order.get(a.id)! - order.get(b.id)!);
  return { rows, cursor, complete };
}

/** The first account after `after` with pending deliveries: one seek on webhook_deliveries_claim. */
export function nextAccountQuery(db: Kysely<Database>, after: number) {
  return db.selectFrom('webhook_deliveries').select('account_id')
    .where('status', '=', 'pending').where('account_id', '>', after).orderBy('account_id').limit(1);
}

/** An account's due, unleased deliveries, oldest due first: a range of webhook_deliveries_claim. */
export function dueQuery(db: Kysely<Database>, account: number, now: number, limit: number) {
  return db.selectFrom('webhook_deliveries as d').select('d.id')
    .where('d.status', '=', 'pending').where('d.account_id', '=', account).where('d.next_attempt_at', '<=', now)
    .where((eb) => eb.or([eb('d.lease_until', 'is', null), eb('d.lease_until', '<', now)]))
    // A sequence (one payment order's webhooks) goes one at a time, oldest first: a later
    // transition waits while an earlier one is pending, in flight or backing off.
    .where((eb) => eb.or([
      eb('d.sequence_key', 'is', null),
      eb.not(eb.exists(eb.selectFrom('webhook_deliveries as e').select('e.id')
        .whereRef('e.sequence_key', '=', 'd.sequence_key').where('e.status', '=', 'pending').whereRef('e.id', '<', 'd.id'))),
    ]))
    .orderBy('d.next_attempt_at').orderBy('d.id').limit(limit);
}
