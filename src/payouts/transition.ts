import type { Kysely } from 'kysely';
import type { Database } from '../store/index.js';
import { enqueueDeliveries } from '../webhooks/outbox.js';
import { WALLET_HIT_CREDITS } from '../pricing/credits.js';
import { fromBaseUnits } from '../payments/amounts.js';
import type { PayoutStatus } from '../wire/payouts.js';
import { RpcctlError } from '../util/errors.js';
import { LineChangedError, type LineRow, type PayoutRow } from './rows.js';

/*
 * The state machine of a refund or payout line. Every move is one compare-and-set on `seq` with
 * its webhook in the outbox, in the caller's transaction; `nextLine` is the pure step, tested
 * beside. The same table is in docs/payments.md ("Refunds and payouts").
 */

/** Which status may follow which. A transfer that leaves the chain takes `sent` and `completed` back. */
export const PAYOUT_TRANSITIONS: Readonly<Record<PayoutStatus, readonly PayoutStatus[]>> = {
  awaiting_approval: ['awaiting_address', 'awaiting_payment', 'canceled'],
  awaiting_address: ['awaiting_payment', 'canceled'],
  awaiting_payment: ['sent', 'canceled'],
  sent: ['completed', 'awaiting_payment'],
  completed: ['awaiting_payment'],
  canceled: [],
};

/** Statuses a cancel ends; later ones have money on the way or arrived. */
export const CANCELABLE: readonly PayoutStatus[] = ['awaiting_approval', 'awaiting_address', 'awaiting_payment'];

/** A move the table has not: the caller checked the status first, so this is a bug, never a client's mistake. */
export class IllegalMoveError extends RpcctlError {
  readonly code = 'E_ILLEGAL_MOVE';
}

export interface LineMove {
  status: PayoutStatus;
  /** The matching transfer (sent), or null to forget it (back to awaiting_payment). */
  match?: { txHash: string; eventId: number; blockHeight: number } | null;
  address?: { display: string; key: string };
  watchId?: string | null;
  expectedTx?: string | null;
}

/** The line after `m` at `nowMs`; throws on a move the table does not allow. */
export function nextLine(line: LineRow, m: LineMove, nowMs: number): LineRow {
  const from = line.status as PayoutStatus;
  if (!PAYOUT_TRANSITIONS[from].includes(m.status)) throw new IllegalMoveError(`a ${from} line cannot become ${m.status}`);
  const match = m.match === undefined ? {} : m.match === null
    ? { tx_hash: null, event_id: null, block_height: null }
    : { tx_hash: m.match.txHash, event_id: m.match.eventId, block_height: m.match.blockHeight };
  return {
    ...line,
    ...match,
    ...(m.address && { address: m.address.display, address_key: m.address.key }),
    ...(m.watchId !== undefined && { watch_id: m.watchId }),
    ...(m.expectedTx !== undefined && { expected_tx: m.expectedTx }),
    status: m.status,
    lifecycle: `${line.lifecycle}>${m.status}`,
    seq: line.seq + 1,
    updated_at: new Date(nowMs).toISOString(),
  };
}

/** What a line's webhook names besides the line: its payout, and for a refund its order. */
export interface WebhookContext {
  payout: PayoutRow;
  order?: { payment_id: string; order_id: string };
  assetSymbol: string;
}

/** Moves the line (compare-and-set on `seq`) and writes its webhook, in the caller's transaction. */
export async function moveLine(trx: Kysely<Database>, ctx: WebhookContext, line: LineRow, m: LineMove, nowMs = Date.now()): Promise<LineRow> {
  const [moved] = await moveLines(trx, [{ ctx, line, move: m }], nowMs);
  if (!moved) throw new LineChangedError(`line ${line.line_no} of ${ctx.payout.payout_id} changed under us`);
  return moved.next;
}

/**
 * Moves many lines in the caller's transaction: each a compare-and-set on `seq`, their webhooks
 * written together at the end (a batch's lines move in one pass, not one transaction each).
 * A line another writer moved first is left out of the answer, and so is its webhook.
 */
export async function moveLines(
  trx: Kysely<Database>, moves: ReadonlyArray<{ ctx: WebhookContext; line: LineRow; move: LineMove }>, nowMs = Date.now(),
): Promise<Array<{ line: LineRow; next: LineRow }>> {
  const moved: Array<{ line: LineRow; next: LineRow; ctx: WebhookContext }> = [];
  for (const { ctx, line, move } of moves) {
    const next = nextLine(line, move, nowMs);
    const res = await trx.updateTable('payout_lines').set({
      status: next.status, lifecycle: next.lifecycle, seq: next.seq, updated_at: next.updated_at, address: next.address, address_key: next.address_key,
      watch_id: next.watch_id, expected_tx: next.expected_tx, tx_hash: next.tx_hash, event_id: next.event_id, block_height: next.block_height,
    }).where('id', '=', line.id).where('seq', '=', line.seq).executeTakeFirst();
    if (Number(res.numUpdatedRows) === 1) moved.push({ line, next, ctx });
  }
  await announceLines(trx, moved.map(({ ctx, next }) => ({ ctx, line: next })), nowMs);
  return moved.map(({ line, next }) => ({ line, next }));
}

/**
 * Writes the webhook of the state the line is in now (its `seq`), in the caller's transaction:
 * every move's, and at creation the first state's (`awaiting_approval`, `awaiting_address`,
 * `awaiting_payment`, sequence 0), so a merchant sees every state a line enters once.
 */
export async function announceLine(trx: Kysely<Database>, ctx: WebhookContext, line: LineRow, nowMs = Date.now()): Promise<void> {
  await announceLines(trx, [{ ctx, line }], nowMs);
}

/** announceLine for many lines, their webhooks written together (a batch's 1,000 in ten statements). */
export async function announceLines(trx: Kysely<Database>, items: ReadonlyArray<{ ctx: WebhookContext; line: LineRow }>, nowMs = Date.now()): Promise<void> {
  await enqueueDeliveries(trx, items.map(({ ctx, line }) => {
    const webhookId = `${ctx.payout.payout_id}_${line.line_no}_${line.seq}`;
    return {
      accountId: line.account_id, eventId: null, webhookId, type: ctx.payout.kind === 'refund' ? 'refund' : 'payout_line', network: line.network,
      body: webhookBody(ctx, line, webhookId), credits: WALLET_HIT_CREDITS, isTest: false,
      sequenceKey: `${ctx.payout.payout_id}_${line.line_no}`, targetUrl: ctx.payout.webhook_url,
    };
  }), Math.min(nowMs, Date.now()));
}

/** `refund.<status>` or `payout.<status>`, signed and sent like a payment order's; a refund names its order. */
export function webhookBody(ctx: WebhookContext, l: LineRow, id: string): string {
  const refund = ctx.payout.kind === 'refund';
  return JSON.stringify({
    id, product: 'payments', type: refund ? 'refund' : 'payout_line', event: `${ctx.payout.kind}.${l.status}`,
    ...(refund ? { refund_id: ctx.payout.payout_id, payment_id: ctx.order?.payment_id ?? null, order_id: ctx.order?.order_id ?? null }
      : { payout_id: ctx.payout.payout_id, line: l.line_no }),
    status: l.status, network: l.network, asset: l.asset, asset_symbol: ctx.assetSymbol, address: l.address,
    amount: fromBaseUnits(l.amount_raw, l.decimals), amount_raw: l.amount_raw, reference: l.reference,
    tx_hash: l.tx_hash, block_height: l.block_height, lifecycle: l.lifecycle, sequence: l.seq, created_at: l.updated_at,
  });
}
