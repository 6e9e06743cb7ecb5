import type { Kysely } from 'kysely';
import type { Database } from '../store/index.js';
import { sequenceDeliveries } from '../webhooks/deliveries.js';

/** One step of an order's `lifecycle`, with what the store still knows about it. */
export interface TimelineStep {
  /** 0 for the creation (`pending`), then the transition's sequence number. */
  sequence: number;
  status: string;
  /** When the order took this status; null once the transition's outbox row was pruned (retention). */
  at: string | null;
  txHash: string | null;
  reason: string | null;
  late: boolean;
  /** The transition's webhook: pending | delivered | failed | cancelled (null when not known). */
  webhook: { status: string; lastError: string | null; attempts: number } | null;
}

export interface FundingTransfer {
  txHash: string;
  from: string | null;
  amountRaw: string;
  blockHeight: number;
  /** 0 when the transfer was of another asset. */
  counted: boolean;
  late: boolean;
  removed: boolean;
  at: string;
}

/**
 * The order's path with times. `lifecycle` is the truth about which statuses were taken; the
 * time of each transition is the created_at of the webhook written in the same transaction
 * (`{payment_id}_{sequence}`), so no second copy of the history is kept. Retention prunes
 * old deliveries: those steps keep their status and lose their time.
 */
export async function orderTimeline(
  db: Kysely<Database>, accountId: number, order: { payment_id: string; lifecycle: string; created_at: string },
): Promise<TimelineStep[]> {
  const rows = await sequenceDeliveries(db, accountId, order.payment_id);
  const bySeq = new Map<number, (typeof rows)[number]>();
  const prefix = `${order.payment_id}_`;
  for (const r of rows) {
    if (!r.webhook_id.startsWith(prefix)) continue;
    const seq = Number(r.webhook_id.slice(prefix.length));
    if (Number.isSafeInteger(seq)) bySeq.set(seq, r);
  }
  return order.lifecycle.split('>').map((status, sequence): TimelineStep => {
    if (sequence === 0) return { sequence, status, at: order.created_at, txHash: null, reason: null, late: false, webhook: null };
    const row = bySeq.get(sequence);
    if (!row) return { sequence, status, at: null, txHash: null, reason: null, late: false, webhook: null };
    let body: { tx_hash?: string | null; reason?: string | null; late?: boolean; created_at?: string } = {};
    try {
      body = JSON.parse(row.body) as typeof body;
    } catch {
      // A body is always our own JSON; should one be unreadable, the step still shows.
    }
    return {
      sequence, status, at: body.created_at ?? row.created_at, txHash: body.tx_hash ?? null, reason: body.reason ?? null, late: body.late === true,
      webhook: { status: row.status, lastError: row.last_error, attempts: row.attempts },
    };
  });
}

/** Every transfer applied to the order, oldest first (including other assets and reorged ones, marked). */
export async function orderFunding(db: Kysely<Database>, accountId: number, paymentId: string): Promise<FundingTransfer[]> {
  const rows = await db.selectFrom('payment_funding as f')
    .innerJoin('payment_orders as o', 'o.id', 'f.order_pk')
    .select(['f.tx_hash', 'f.from_address', 'f.amount_raw', 'f.block_height', 'f.counted', 'f.late', 'f.removed', 'f.created_at'])
    .where('o.account_id', '=', accountId).where('o.payment_id', '=', paymentId)
    .orderBy('f.id').execute();
  return rows.map((r) => ({
    txHash: r.tx_hash, from: r.from_address, amountRaw: r.amount_raw, blockHeight: r.block_height,
    counted: r.counted === 1, late: r.late === 1, removed: r.removed === 1, at: r.created_at,
  }));
}
