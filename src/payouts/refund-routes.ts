import { z } from 'zod';
import { notFound } from '../api/http.js';
import { route, type RouteDef } from '../api/router.js';
import { okSchema } from '../api/schemas.js';
import { getOrder } from '../payments/orders.js';
import type { Kysely } from 'kysely';
import type { Database } from '../store/index.js';
import { createRefundBody, refundSchema } from '../wire/payouts.js';
import { callerOf } from './approval.js';
import { watchesAdded } from './context.js';
import { createRefund, refundsOf } from './refunds.js';
import { presentRefund } from './present.js';
import { linesOf, type PayoutRow } from './rows.js';
import type { PayoutRouteDeps } from './routes.js';

const TAG = 'Payouts';
const idParam = z.object({ payment_id: z.string().regex(/^pay_[A-Za-z0-9_-]{1,64}$/, 'must be a payment id (pay_...)') });

/** The refund link's page: its token (192 random bits) is the customer's only credential. */
export function refundLinkUrl(publicUrl: string, token: string): string {
  return `${publicUrl}/refund/${token}`;
}

async function linkRow(db: Kysely<Database>, payoutPk: number) {
  return db.selectFrom('refund_links').selectAll().where('payout_pk', '=', payoutPk).executeTakeFirst();
}

export function refundRoutes(deps: PayoutRouteDeps): RouteDef[] {
  const present = async (p: PayoutRow, order: { payment_id: string; order_id: string }, url?: string) => {
    const line = (await linesOf(deps.present.store.db, p.id))[0]!;
    return presentRefund(deps.present, p, line, order, { row: await linkRow(deps.present.store.db, p.id), url }, true);
  };
  return [
    route({
      method: 'POST', path: '/v1/payments/{payment_id}/refunds', operationId: 'createRefund', tag: TAG,
      summary: 'Refund a paid, underpaid, expired or failed order that received money: full, the overpaid part, or an amount (in the asset, or in fiat at the locked or today\'s rate)',
      params: idParam, body: createRefundBody, errors: [400, 404, 409], response: okSchema.extend({ refund: refundSchema }),
      audit: {
        action: 'refund.create',
        describe: ({ params, body, result }) => ({
          type: 'refund', id: result.refund.refund_id,
          changes: { payment_id: params.payment_id, amount: result.refund.amount, amount_kind: result.refund.amount_kind, address: body.address === undefined ? 'refund link' : 'given', approval: result.refund.approval },
        }),
      },
      async handler({ account, app, key, params, body }) {
        const order = await getOrder(app.store.db, account.id, params.payment_id);
        if (!order) throw notFound('Payment not found');
        const caller = await callerOf(app.store, key);
        const created = await createRefund({ store: app.store, config: app.config, rates: deps.payouts.rates, accountId: account.id, caller }, order, body);
        await watchesAdded(deps.payouts.deps, created.watches);
        deps.payouts.deps.onDeliveries();
        return { ok: true, refund: await present(created.payout, order, created.link && refundLinkUrl(app.publicUrl(), created.link.token)) };
      },
    }),
    route({
      method: 'GET', path: '/v1/payments/{payment_id}/refunds', operationId: 'listRefunds', tag: TAG, summary: 'The refunds of an order, newest first',
      params: idParam, errors: [400, 404], response: okSchema.extend({ refunds: z.array(refundSchema) }),
      async handler({ account, app, params }) {
        const order = await getOrder(app.store.db, account.id, params.payment_id);
        if (!order) throw notFound('Payment not found');
        const rows = await refundsOf(app.store.db, order.id);
        return { ok: true, refunds: await Promise.all(rows.map((p) => present(p, order))) };
      },
    }),
  ];
}
