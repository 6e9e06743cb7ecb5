import type { Kysely } from 'kysely';
import type { Config } from '../config/index.js';
import type { Database, Store } from '../store/index.js';
import { enqueueDelivery } from '../webhooks/outbox.js';
import { WALLET_HIT_CREDITS } from '../pricing/credits.js';
import { fromBaseUnits } from './amounts.js';
import { assetOfRow } from './assets.js';
import type { AmlResult } from './aml/types.js';
import { OrderChangedError, type OrderRow, type PaymentStatus } from './orders.js';

/*
 * The state machine of an order: every move is one compare-and-set on `seq` with its webhook in
 * the outbox, in the caller's transaction. Which move to make is the engine's jobs' (funding.ts,
 * reorgs.ts, expiry.ts, sightings.ts, screening.ts); `nextOrder` is the pure part, tested beside.
 */

export interface Transition {
  status: Exclude<PaymentStatus, 'pending'>;
  txHash: string | null;
  reason?: string | null;
  aml?: AmlResult | null;
  late?: boolean;
  receivedRaw?: bigint;
  overpaid?: boolean;
  /** Closes the order: its address is free for another order. */
  close?: boolean;
  monitorUntilMs?: number;
}

/** The order after `t` at `nowMs`: the state machine's pure step (no store). */
export function nextOrder(order: OrderRow, t: Transition, nowMs: number): OrderRow {
  return {
    ...order,
    status: t.status,
    // A failed or expired order keeps the reason it had unless the move gives one; others have none.
    reason: t.reason === undefined ? (t.status === 'failed' || t.status === 'expired' ? order.reason : null) : t.reason,
    aml: t.aml === undefined ? order.aml : t.aml === null ? null : JSON.stringify(t.aml),
    late: t.late ? 1 : order.late,
    received_raw: t.receivedRaw === undefined ? order.received_raw : t.receivedRaw.toString(),
    overpaid: t.overpaid === undefined ? order.overpaid : t.overpaid ? 1 : 0,
    lifecycle: `${order.lifecycle}>${t.status}`,
    seq: order.seq + 1,
    open: t.close ? 0 : order.open,
    monitor_until_ms: t.monitorUntilMs ?? order.monitor_until_ms,
    updated_at: new Date(nowMs).toISOString(),
  };
}

/**
 * Moves the order to a new status and writes its webhook into the outbox, in the caller's
 * transaction: the transition and its delivery commit together or not at all. The update
 * is a compare-and-set on `seq`, so two writers can never both move one order.
 */
export async function transition(trx: Kysely<Database>, ctx: { store: Store; config: Config }, order: OrderRow, t: Transition, nowMs = Date.now()): Promise<OrderRow> {
  const next = nextOrder(order, t, nowMs);
  const now = next.updated_at;
  const res = await trx.updateTable('payment_orders').set({
    status: next.status, reason: next.reason, aml: next.aml, late: next.late, received_raw: next.received_raw, overpaid: next.overpaid,
    lifecycle: next.lifecycle, seq: next.seq, open: next.open, monitor_until_ms: next.monitor_until_ms, updated_at: now,
  }).where('id', '=', order.id).where('seq', '=', order.seq).executeTakeFirst();
  if (Number(res.numUpdatedRows) !== 1) throw new OrderChangedError(`order ${order.payment_id} changed under us`);
  await enqueueDelivery(trx, {
    accountId: order.account_id, eventId: null, webhookId: `${order.payment_id}_${next.seq}`, type: 'payment_order', network: order.network,
    body: webhookBody(ctx, next, t.txHash, now), credits: WALLET_HIT_CREDITS, isTest: false,
    sequenceKey: order.payment_id, targetUrl: order.webhook_url,
  // Due now whatever clock the decision used (a test may run the engine ahead of time).
  }, Math.min(nowMs, Date.now()));
  return next;
}

/** The spec's payment-order fields, then ours. `status` is the event; `aml` is null on `aml_check`. */
export function webhookBody({ store, config }: { store: Store; config: Config }, o: OrderRow, txHash: string | null, createdAt: string): string {
  const env = store.catalog.environment(o.network_environment_id);
  return JSON.stringify({
    id: `${o.payment_id}_${o.seq}`,
    product: 'payments', type: 'payment_order', event: o.status, payment_id: o.payment_id, order_id: o.order_id, watch_id: o.watch_id,
    network: o.network, address: o.address, amount: fromBaseUnits(o.amount_raw, o.decimals), amount_raw: o.amount_raw,
    status: o.status, tx_hash: txHash, lifecycle: o.lifecycle, aml: o.status === 'aml_check' ? null : o.aml === null ? null : JSON.parse(o.aml) as unknown,
    reason: o.reason, late: o.late === 1, overpaid: o.overpaid === 1,
    asset: o.asset, asset_symbol: env ? assetOfRow(config, env, o.asset, o.decimals).symbol : o.asset,
    amount_received: fromBaseUnits(o.received_raw, o.decimals), amount_received_raw: o.received_raw,
    expires_at: o.expires_at, metadata: o.metadata === null ? null : JSON.parse(o.metadata) as unknown,
    sequence: o.seq, created_at: createdAt,
  });
}

