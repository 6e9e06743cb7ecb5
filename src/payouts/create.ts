import { createHash, randomBytes } from 'node:crypto';
import { canBuildUnsignedTransactions } from '../chains/payouts.js';
import type { Config } from '../config/index.js';
import type { Store, WatchedAddressRow } from '../store/index.js';
import type { RateSource } from '../payments/rates.js';
import type { CreatePayout } from '../wire/payouts.js';
import { approvalFor, fiatTotal, thresholdOf, type Caller } from './approval.js';
import { announceCreated } from './context.js';
import { checkLine, insertLines, type CheckedLine } from './lines.js';
import { PayoutError, type PayoutRow } from './rows.js';

export interface CreateContext {
  store: Store;
  config: Config;
  rates: RateSource;
  accountId: number;
  caller: Caller;
  nowMs?: number;
}

/** The new payout, and the watches made for its lines (to tell the registry). */
export interface Created {
  payout: PayoutRow;
  watches: WatchedAddressRow[];
}

export function newPayoutId(kind: 'payout' | 'refund'): string {
  return `${kind === 'refund' ? 'rf' : 'po'}_${randomBytes(12).toString('base64url')}`;
}

/** A refund link's token (shown once) and what is stored of it. */
export function newLinkToken(): { token: string; hash: string } {
  const token = randomBytes(24).toString('base64url');
  return { token, hash: hashToken(token) };
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/**
 * Creates a payout of up to 1,000 lines, each checked first (a mistake names its line and field
 * and nothing is written). Lines wait for approval when its maker is a developer or the batch is
 * worth more than the account's threshold; otherwise they await payment, watched from now.
 */
export async function createPayout(ctx: CreateContext, body: CreatePayout): Promise<Created> {
  const lines: CheckedLine[] = [];
  for (const [i, input] of body.lines.entries()) lines.push(await checkLine(ctx.store, ctx.config, ctx.rates, input, `lines[${i}]`));
  refuseRepeatedAddresses(lines);
  const threshold = await thresholdOf(ctx.store.db, ctx.accountId);
  const total = threshold ? await fiatTotal(ctx.rates, lines.map(valued), threshold.currency) : null;
  const { approval, reason } = approvalFor(ctx.caller, threshold, total);
  const now = new Date(ctx.nowMs ?? Date.now()).toISOString();
  return ctx.store.db.transaction().execute(async (trx) => {
    const payout = await trx.insertInto('payouts').values({
      payout_id: newPayoutId('payout'), account_id: ctx.accountId, kind: 'payout', order_pk: null, refund_amount: null, webhook_url: null,
      created_by: ctx.caller.id, created_by_label: ctx.caller.label, created_role: ctx.caller.role, approval, approval_reason: reason,
      approved_by: null, approved_by_label: null, approved_at: null, fiat_total: total, fiat_currency: threshold?.currency ?? null,
      canceled_at: null, created_at: now, updated_at: now,
    }).returningAll().executeTakeFirstOrThrow();
    const status = approval === 'awaiting' ? 'awaiting_approval' : 'awaiting_payment';
    const watches = await insertLines(trx, { payoutPk: payout.id, accountId: ctx.accountId, status, now }, lines);
    await announceCreated(trx, ctx.config, ctx.store, payout, Date.parse(now));
    return { payout, watches };
  });
}

/**
 * Where one transaction pays a whole batch (a PSBT), two lines to the same address in the same
 * asset are refused: that transaction is one event of the address's watch, which completes one
 * line, and the other would wait for ever or be paid twice. One line of the sum, or separate
 * payouts, say what is meant. (An EVM line is a transaction of its own: repeats are fine there.)
 */
function refuseRepeatedAddresses(lines: CheckedLine[]): void {
  const seen = new Map<string, number>();
  for (const [i, l] of lines.entries()) {
    if (!l.address || !canBuildUnsignedTransactions(l.env.network.family)) continue;
    const key = `${l.env.id}|${l.asset.id}|${l.address.key}`;
    const first = seen.get(key);
    if (first !== undefined) {
      throw new PayoutError('E_PAYOUT_INVALID', `lines[${i}]: pays the same address in the same asset as lines[${first}]: put them in one line or in separate payouts`);
    }
    seen.set(key, i);
  }
}

export function valued(l: CheckedLine) {
  return { amountRaw: l.amountRaw, decimals: l.asset.decimals, symbol: l.asset.symbol, ...(l.price && { price: { amount: l.price.amount, currency: l.price.currency } }) };
}
