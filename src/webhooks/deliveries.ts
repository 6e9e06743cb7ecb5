import { randomBytes } from 'node:crypto';
import type { WebhookAttempt, WebhookDelivery, DeliveryStatus } from '../client/address-watch.js';
import type { Environment, Store, WebhookDeliveryRow } from '../store/index.js';
import { envIdentifier, type EventKind } from './filters.js';
import { enqueueDelivery } from './outbox.js';

const hex = (bytes: number) => `0x${randomBytes(bytes).toString('hex')}`;

/** A sample event of `type` on `env`, marked `test: true`, queued like any other but never billed. */
export async function enqueueTestDelivery(
  store: Store, accountId: number, env: Environment, type: EventKind, sampleAddress: { watchId: string; network: string; address: string } | undefined,
): Promise<{ webhookId: string; body: string }> {
  const webhookId = `test_${randomBytes(12).toString('hex')}`;
  const network = sampleAddress?.network ?? envIdentifier(env);
  const createdAt = new Date().toISOString();
  const height = ((await store.db.selectFrom('scanner_cursors').select('next_height').where('network_environment_id', '=', env.id).executeTakeFirst())?.next_height ?? 1) - 1;
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

/** Newest first, each with its attempts; `before` pages back by delivery id. */
export async function listDeliveries(
  store: Store, q: { accountId: number; limit: number; before?: number; status?: string; eventId?: number },
): Promise<{ deliveries: WebhookDelivery[]; next_before: string | null }> {
  let query = store.db.selectFrom('webhook_deliveries').selectAll().where('account_id', '=', q.accountId);
  if (q.before !== undefined) query = query.where('id', '<', q.before);
  if (q.status !== undefined) query = query.where('status', '=', q.status);
  if (q.eventId !== undefined) query = query.where('event_id', '=', q.eventId);
  const rows = await query.orderBy('id', 'desc').limit(q.limit).execute();
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
