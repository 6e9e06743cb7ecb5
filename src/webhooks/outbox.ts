import type { Kysely } from 'kysely';
import { blockCredits, WALLET_HIT_CREDITS } from '../pricing/credits.js';
import { CHANNELS, notifyIn, type Database, type Network } from '../store/index.js';

export interface NewDelivery {
  accountId: number;
  eventId: number | null;
  /** X-Webhook-Id: stable across the retries of one delivery. */
  webhookId: string;
  type: string;
  network: string;
  body: string;
  credits: number;
  isTest: boolean;
  /** Deliveries sharing a key go out one at a time, in the order they were written (a payment order's). */
  sequenceKey?: string | null;
  /** Send here instead of the account's webhook URL. */
  targetUrl?: string | null;
}

/** Writes a delivery into the outbox; call it in the transaction that records the event. */
export async function enqueueDelivery(db: Kysely<Database>, d: NewDelivery, nowMs = Date.now()): Promise<void> {
  await enqueueDeliveries(db, [d], nowMs);
}

/**
 * Writes deliveries into the outbox in multi-row inserts (100 a statement, within SQLite's
 * variable limit): a batch of 1,000 payout lines moving at once costs ten statements, not 1,000.
 */
export async function enqueueDeliveries(db: Kysely<Database>, ds: readonly NewDelivery[], nowMs = Date.now()): Promise<void> {
  if (ds.length === 0) return;
  const rows = ds.map((d) => ({
    webhook_id: d.webhookId, account_id: d.accountId, event_id: d.eventId, type: d.type, network: d.network,
    body: d.body, credits: d.credits, bill_method: `webhook:${d.isTest ? 'test' : d.type}`, is_test: d.isTest ? 1 : 0,
    status: 'pending', attempts: 0, next_attempt_at: nowMs, lease_owner: null, lease_until: null,
    last_status_code: null, last_error: null, created_at: new Date(nowMs).toISOString(), delivered_at: null,
    sequence_key: d.sequenceKey ?? null, target_url: d.targetUrl ?? null,
  }));
  for (let i = 0; i < rows.length; i += 100) await db.insertInto('webhook_deliveries').values(rows.slice(i, i + 100)).execute();
  // Sent on commit, so no instance looks before the row is visible; repeats within one
  // transaction fold into one.
  await notifyIn(db, CHANNELS.outbox, '');
}

/** `last_error` of a delivery whose event's block was orphaned by a reorg. */
export const REORG_CANCELLED = 'the block left the chain (reorg)';

export function creditsFor(type: string, network: Network): number {
  return type === 'block' ? blockCredits(network) : WALLET_HIT_CREDITS;
}

/**
 * Cancels the deliveries of events a reorg took off the chain (watch/ calls it in its rewind
 * transaction); the number cancelled. In flight ones too: the worker checks the row before
 * sending, and neither retries nor bills a row that is no longer pending (it may already be at
 * the receiver). "Not finished" rather than `status = 'pending'`, which SQLite (no statistics)
 * would search by instead of the event, walking the whole pending backlog on every reorg.
 */
export async function cancelEventDeliveries(trx: Kysely<Database>, eventIds: number[]): Promise<number> {
  const res = await trx.updateTable('webhook_deliveries')
    .set({ status: 'cancelled', last_error: REORG_CANCELLED, lease_owner: null, lease_until: null })
    .where('event_id', 'in', eventIds).where('status', 'not in', ['delivered', 'failed', 'cancelled'])
    .executeTakeFirst();
  return Number(res.numUpdatedRows);
}
