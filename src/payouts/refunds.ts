import type { Kysely } from 'kysely';
import { lockFor, type Database } from '../store/index.js';
import { assetOfRow } from '../payments/assets.js';
import { fromBaseUnits } from '../payments/amounts.js';
import { priceToBaseUnits } from '../payments/fiat.js';
import type { OrderRow } from '../payments/orders.js';
import type { CreateRefund } from '../wire/payouts.js';
import { approvalFor, fiatTotal, thresholdOf } from './approval.js';
import { newLinkToken, newPayoutId, valued, type CreateContext, type Created } from './create.js';
import { announceCreated } from './context.js';
import { amountIn, checkAddress, decimalIn, insertLines, type CheckedLine } from './lines.js';
import { PayoutError } from './rows.js';

/** A refund link's life unless the request says otherwise: 7 days. */
export const REFUND_LINK_TTL_S = 7 * 86_400;

/** Statuses whose money may go back: decided, or ended with money on the order. */
const REFUNDABLE = ['paid', 'underpaid', 'expired', 'failed'];

const invalid = (message: string) => new PayoutError('E_PAYOUT_INVALID', message);

/** What the order's refunds not canceled add up to (a canceled line gave nothing back). */
export async function refundedRaw(db: Kysely<Database>, orderPk: number): Promise<bigint> {
  const r = await db.selectFrom('payout_lines as l').innerJoin('payouts as p', 'p.id', 'l.payout_pk').select('l.amount_raw')
    .where('p.order_pk', '=', orderPk).where('l.status', '!=', 'canceled').execute();
  return r.reduce((sum, x) => sum + BigInt(x.amount_raw), 0n);
}

/** The amount asked, in base units: `full`, `overpaid`, in the asset, or a fiat sum at the locked or today's rate. */
async function amountOf(ctx: CreateContext, order: OrderRow, body: CreateRefund, left: bigint): Promise<{ raw: bigint; kind: string; price?: CheckedLine['price'] }> {
  const env = ctx.store.catalog.environment(order.network_environment_id)!;
  const asset = assetOfRow(ctx.config, env, order.asset, order.decimals);
  if (body.price_amount !== undefined) {
    if (body.amount !== undefined) throw invalid('price_amount: give either amount or price_amount with rate, not both');
    if (order.price_currency === null || order.rate === null) throw invalid(`price_amount: order ${order.payment_id} is priced in ${asset.symbol}, not a fiat currency; give amount`);
    const price = decimalIn(body.price_amount, 'price_amount');
    if (body.rate === undefined) throw invalid('rate: is required with price_amount: "locked" (the order\'s rate) or "current" (today\'s)');
    const rate = body.rate === 'locked'
      ? { rate: order.rate, source: (order.rate_source ?? 'static') as 'static' | 'http', at: order.rate_at ?? order.created_at }
      : await ctx.rates.rate(asset.symbol.toUpperCase(), order.price_currency);
    return { raw: priceToBaseUnits(price, rate.rate, order.decimals), kind: `fiat_${body.rate}`, price: { amount: price, currency: order.price_currency, rate } };
  }
  if (body.rate !== undefined) throw invalid('rate: only with price_amount');
  if (body.amount === undefined || body.amount === 'full') return { raw: left, kind: 'full' };
  if (body.amount === 'overpaid') {
    // Only an order the engine calls overpaid has one (a fiat order's display rounding is not),
    // and refunds made so far came out of it first: what is still held beyond the price.
    const over = order.overpaid === 1 ? left - BigInt(order.amount_raw) : 0n;
    if (over <= 0n) {
      throw invalid(`amount: order ${order.payment_id} has no overpaid part left (received ${fromBaseUnits(order.received_raw, order.decimals)} of ${fromBaseUnits(order.amount_raw, order.decimals)} ${asset.symbol}, ${fromBaseUnits(BigInt(order.received_raw) - left, order.decimals)} refunded)`);
    }
    return { raw: over, kind: 'overpaid' };
  }
  return { raw: amountIn(body.amount, asset, 'amount'), kind: 'asset' };
}

/**
 * Refunds (part of) what an order received, to the address given or, without one, to the
 * address its customer gives through a refund link (returned once: only its hash is kept).
 * Never more in total than the order received: checked under the order's refund lock.
 */
export async function createRefund(ctx: CreateContext, order: OrderRow, body: CreateRefund): Promise<Created & { link?: { token: string; expiresAt: string } }> {
  const received = BigInt(order.received_raw);
  if (!REFUNDABLE.includes(order.status) || received === 0n) {
    throw new PayoutError('E_CONFLICT', `Payment ${order.payment_id} is ${order.status}${received === 0n ? ' with nothing received' : ''}: refunds are for paid, underpaid, expired or failed orders that received money`);
  }
  const env = ctx.store.catalog.environment(order.network_environment_id);
  if (!env) throw new PayoutError('E_CONFLICT', `Payment ${order.payment_id}: its network is no longer configured`);
  const address = body.address === undefined ? null : checkAddress(env, body.address, 'address');
  const nowMs = ctx.nowMs ?? Date.now();
  const now = new Date(nowMs).toISOString();
  const asset = assetOfRow(ctx.config, env, order.asset, order.decimals);
  const threshold = await thresholdOf(ctx.store.db, ctx.accountId);
  return ctx.store.db.transaction().execute(async (trx) => {
    await lockFor(trx, `refunds:${order.id}`);
    const left = received - await refundedRaw(trx, order.id);
    const amount = await amountOf(ctx, order, body, left);
    if (amount.raw <= 0n) throw invalid(`amount: nothing left to refund on ${order.payment_id} (received ${fromBaseUnits(received, order.decimals)} ${asset.symbol}, all refunded)`);
    if (amount.raw > left) {
      throw invalid(`amount: ${fromBaseUnits(amount.raw, order.decimals)} ${asset.symbol} is more than order ${order.payment_id} has left to refund (${fromBaseUnits(left, order.decimals)} of ${fromBaseUnits(received, order.decimals)} received)`);
    }
    const line: CheckedLine = { env, networkSlug: order.network, asset, address, amountRaw: amount.raw, price: amount.price ?? null, reference: body.reference ?? null };
    const total = threshold ? await fiatTotal(ctx.rates, [valued(line)], threshold.currency) : null;
    const { approval, reason } = approvalFor(ctx.caller, threshold, total);
    const payout = await trx.insertInto('payouts').values({
      payout_id: newPayoutId('refund'), account_id: ctx.accountId, kind: 'refund', order_pk: order.id, refund_amount: amount.kind, webhook_url: order.webhook_url,
      created_by: ctx.caller.id, created_by_label: ctx.caller.label, created_role: ctx.caller.role, approval, approval_reason: reason,
      approved_by: null, approved_by_label: null, approved_at: null, fiat_total: total, fiat_currency: threshold?.currency ?? null,
      canceled_at: null, created_at: now, updated_at: now,
    }).returningAll().executeTakeFirstOrThrow();
    const status = approval === 'awaiting' ? 'awaiting_approval' : address ? 'awaiting_payment' : 'awaiting_address';
    const watches = await insertLines(trx, { payoutPk: payout.id, accountId: ctx.accountId, status, now }, [line]);
    await announceCreated(trx, ctx.config, ctx.store, payout, nowMs);
    if (address) return { payout, watches };
    const { token, hash } = newLinkToken();
    const expiresAt = new Date(nowMs + (body.link_expires_in ?? REFUND_LINK_TTL_S) * 1000).toISOString();
    await trx.insertInto('refund_links').values({ payout_pk: payout.id, token_hash: hash, expires_at: expiresAt, claimed_at: null, created_at: now }).execute();
    return { payout, watches, link: { token, expiresAt } };
  });
}

/** The refunds of an order, newest first. */
export async function refundsOf(db: Kysely<Database>, orderPk: number) {
  return db.selectFrom('payouts').selectAll().where('order_pk', '=', orderPk).orderBy('id', 'desc').limit(200).execute();
}


