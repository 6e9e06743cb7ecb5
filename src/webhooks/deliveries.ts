import { randomBytes } from 'node:crypto';
import type { WebhookAttempt, WebhookDelivery, DeliveryStatus } from '../wire/webhooks.js';
import type { Kysely } from 'kysely';
import type { Database, Environment, Store, WebhookDeliveryRow } from '../store/index.js';
import { envIdentifier } from '../store/index.js';
import type { EventKind } from './filters.js';
import { enqueueDelivery } from './outbox.js';
import { RpcctlError } from '../util/errors.js';
import type { WatchFacts } from './watch-facts.js';

const hex = (bytes: number) => `0x${randomBytes(bytes).toString('hex')}`;

/** A sample event of `type` on `env`, marked `test: true`, queued like any other but never billed. */
export async function enqueueTestDelivery(
  store: Store, watch: WatchFacts, accountId: number, env: Environment, type: EventKind,
  sampleAddress: { watchId: string; network: string; address: string } | undefined,
): Promise<{ webhookId: string; body: string }> {
  const webhookId = `test_${randomBytes(12).toString('hex')}`;
  const network = sampleAddress?.network ?? envIdentifier(env);
  const createdAt = new Date().toISOString();
  const height = await watch.lastHeight(store.db, env.id);
  const fields = type === 'block'
    ? { type, network, block_height: height, block_hash: hex(32), tx_count: 2, transactions: [hex(32), hex(32)] }
    : {
      watch_id: sampleAddress?.watchId ?? 'w_test', network, address: sampleAddress?.address ?? '0x0000000000000000000000000000000000000000',
      tx_hash: hex(32), block_height: height, type, direction: type === 'payout' ? 'out' : 'in', block_hash: hex(32),
      from: null, to: null, token: null, amount: '1000000000000000000', log_index: null,
    };
  const body = JSON.stringify({ id: webhookId, ...fields, test: true, created_at: createdAt });
  await enqueueDelivery(store.db, { accountId, eventId: null, webhookId, type, network, body, credits: 0, isTest: true });
  return { webhookId, body };
}

export interface DeliveryQuery { accountId: number; limit: number; before?: number; status?: string; eventId?: number }

/**
 * One page of the list, newest first: (account_id, id), (account_id, status, id) and
 * (event_id) serve every filter, so a page reads the rows it returns.
 */
export function deliveriesQuery(db: Kysely<Database>, q: DeliveryQuery) {
  let query = db.selectFrom('webhook_deliveries').selectAll().where('account_id', '=', q.accountId);
  if (q.before !== undefined) query = query.where('id', '<', q.before);
  if (q.status !== undefined) query = query.where('status', '=', q.status);
  if (q.eventId !== undefined) query = query.where('event_id', '=', q.eventId);
  return query.orderBy('id', 'desc').limit(q.limit);
}

/**
 * The deliveries of one sequence of an account (`sequence_key`: a payment order's transitions,
 * keyed by its payment id), in no particular order, with what a timeline shows of each.
 */
export async function sequenceDeliveries(
  db: Kysely<Database>, accountId: number, sequenceKey: string,
): Promise<Array<Pick<WebhookDeliveryRow, 'webhook_id' | 'body' | 'created_at' | 'status' | 'last_error' | 'attempts'>>> {
  return db.selectFrom('webhook_deliveries')
    .select(['webhook_id', 'body', 'created_at', 'status', 'last_error', 'attempts'])
    .where('account_id', '=', accountId).where('sequence_key', '=', sequenceKey)
    .execute();
}

/** Newest first, each with its attempts; `before` pages back by delivery id. */
export async function listDeliveries(store: Store, q: DeliveryQuery): Promise<{ deliveries: WebhookDelivery[]; next_before: string | null }> {
  const rows = await deliveriesQuery(store.db, q).execute();
  const attempts = rows.length === 0 ? [] : await store.db.selectFrom('webhook_attempts').selectAll()
    .where('delivery_id', 'in', rows.map((r) => r.id)).orderBy('attempt').execute();
  const byDelivery = new Map<number, WebhookAttempt[]>();
  for (const { id: _id, delivery_id, ...attempt } of attempts) {
    const list = byDelivery.get(delivery_id) ?? [];
    list.push(attempt);
    byDelivery.set(delivery_id, list);
  }
  return {
    deliveries: rows.map((r) => present(r, byDelivery.get(r.id) ?? [])),
    next_before: rows.length === q.limit ? String(rows[rows.length - 1]!.id) : null,
  };
}

function present(r: WebhookDeliveryRow, attempts: WebhookAttempt[]): WebhookDelivery {
  return {
    delivery_id: String(r.id), webhook_id: r.webhook_id, event_id: r.event_id === null ? null : String(r.event_id),
    type: r.type, network: r.network, test: r.is_test === 1, status: r.status as DeliveryStatus, attempt_count: r.attempts,
    next_retry_at: r.status === 'pending' ? new Date(r.next_attempt_at).toISOString() : null,
    last_status_code: r.last_status_code, last_error: r.last_error, created_at: r.created_at, delivered_at: r.delivered_at, attempts,
  };
}

export class RedeliverError extends RpcctlError {
  readonly code: 'E_NOT_FOUND' | 'E_IN_FLIGHT' | 'E_ORPHANED';
  constructor(code: RedeliverError['code'], message: string) {
    super(message);
    this.name = 'RedeliverError';
    this.code = code;
  }
}

/**
 * Sends a delivery once more, now, with the same X-Webhook-Id (receivers dedupe on it) and
 * the next attempt number. A delivery that was already delivered was billed then: its resend
 * is free. One whose event left the chain is never sent.
 */
export async function redeliver(store: Store, watch: WatchFacts, accountId: number, deliveryId: number, nowMs = Date.now()): Promise<WebhookDelivery> {
  const row = await store.db.selectFrom('webhook_deliveries').selectAll()
    .where('account_id', '=', accountId).where('id', '=', deliveryId).executeTakeFirst();
  if (!row) throw new RedeliverError('E_NOT_FOUND', 'Delivery not found');
  if (row.status === 'pending' && row.lease_until !== null && Number(row.lease_until) > nowMs) {
    throw new RedeliverError('E_IN_FLIGHT', 'The delivery is being sent right now; try again when this attempt is recorded');
  }
  if (row.event_id !== null && await watch.eventRemoved(store.db, row.event_id)) {
    throw new RedeliverError('E_ORPHANED', 'The event\'s block left the chain (reorg); it is not sent again');
  }
  await store.db.updateTable('webhook_deliveries')
    .set({
      status: 'pending', next_attempt_at: nowMs, lease_owner: null, lease_until: null, delivered_at: null,
      ...(row.status === 'delivered' ? { credits: 0 } : {}),
    })
    .where('id', '=', row.id).where('status', '=', row.status).where('attempts', '=', row.attempts).execute();
  const { deliveries } = await listDeliveries(store, { accountId, limit: 1, before: row.id + 1 });
  return deliveries[0]!;
}

/** Deletes up to `limit` finished deliveries created before `cutoff`, with their attempts (the retention job). */
export async function pruneDeliveries(db: Kysely<Database>, cutoff: string, limit: number): Promise<{ deliveries: number; attempts: number }> {
  // Finished is "not pending": an inequality no index serves, so the created_at index does
  // (with `status in (...)` SQLite walked and sorted every delivered row).
  const rows = await db.selectFrom('webhook_deliveries').select('id')
    .where('created_at', '<', cutoff).where('status', '!=', 'pending')
    .orderBy('created_at').orderBy('id').limit(limit).execute();
  if (rows.length === 0) return { deliveries: 0, attempts: 0 };
  const ids = rows.map((r) => r.id);
  return db.transaction().execute(async (trx) => {
    const attempts = await trx.deleteFrom('webhook_attempts').where('delivery_id', 'in', ids).executeTakeFirst();
    await trx.deleteFrom('webhook_deliveries').where('id', 'in', ids).execute();
    return { deliveries: ids.length, attempts: Number(attempts.numDeletedRows) };
  });
}
