import { z } from 'zod';
import { badRequest, forField, HttpError, notFound } from '../api/http.js';
import { route, type RouteDef } from '../api/router.js';
import { okSchema } from '../api/schemas.js';
import { noChange, urlOrigin } from '../api/audit.js';
import { checkWebhookUrl } from '../webhooks/ssrf.js';
import { DERIVING_FAMILIES, REFERENCE_FAMILIES } from '../chains/traits.js';
import { createPaymentBody, PAYMENT_STATUSES, paymentSchema, paymentSettingsSchemas } from '../wire/payments.js';
import type { PaymentEngine } from './engine.js';
import type { RateSource } from './rates.js';
import { fundingTxs, getOrder, getSettings, listOrders, presentSettings, putSettings } from './orders.js';
import { createOrder, type CreateResult } from './create.js';
import { presentOrder } from './present.js';

const TAG = 'Payments';

export interface PaymentRouteDeps {
  engine: PaymentEngine;
  /** A watch the order made: into the in-memory registry, and a scanner for its network. */
  watchAdded(result: CreateResult): Promise<void>;
  /** Rates for orders priced in a fiat currency. */
  rates: RateSource;
}

const settings = paymentSettingsSchemas(DERIVING_FAMILIES, REFERENCE_FAMILIES);
const settingsBody = settings.input;
const settingsSchema = okSchema.extend(settings.view.shape);

const listQuery = z.object({
  order_id: z.string().max(128).optional(),
  status: z.enum(PAYMENT_STATUSES, { error: `must be one of ${PAYMENT_STATUSES.join(', ')}` }).optional(),
  network: z.string().max(80).optional(),
  page: z.string().regex(/^[1-9]\d{0,8}$/, 'must be a positive integer').optional(),
  per_page: z.string().regex(/^\d+$/, 'must be an integer from 1 to 200').refine((v) => Number(v) >= 1 && Number(v) <= 200, 'must be an integer from 1 to 200').optional(),
});

const idParam = z.object({ payment_id: z.string().regex(/^pay_[A-Za-z0-9_-]{1,64}$/, 'must be a payment id (pay_...)') });

export function paymentRoutes(deps: PaymentRouteDeps): RouteDef[] {
  // The order matters: /v1/payments/settings is matched before /v1/payments/{payment_id}.
  return [createPaymentRoute(deps), listPaymentsRoute, ...settingsRoutes, onePaymentRoute, cancelPaymentRoute(deps)];
}

function createPaymentRoute(deps: PaymentRouteDeps): RouteDef {
  return route({
    method: 'POST', path: '/v1/payments', operationId: 'createPayment', tag: TAG, summary: 'Create a payment order (idempotent by order_id: the same body returns the existing order)',
    body: createPaymentBody, errors: [400, 409],
    response: okSchema.extend({ payment: paymentSchema, created: z.boolean() }),
    audit: {
      action: 'payment.create',
      describe: ({ body, result }) => (result.created ? {
        type: 'payment', id: result.payment.payment_id,
        changes: {
          order_id: body.order_id, network: body.network_slug, asset: body.asset, amount: body.amount, price_amount: body.price_amount, price_currency: body.price_currency,
          ...(body.webhook_url !== undefined ? { webhook_url: urlOrigin(body.webhook_url) } : {}),
        },
      } : null),
    },
    async handler({ account, app, body }) {
      if (body.webhook_url !== undefined) {
        const url = new URL(body.webhook_url);
        await forField('webhook_url', () => checkWebhookUrl(url, app.config.webhooks.allow_private_urls));
      }
      const result = await createOrder({ store: app.store, config: app.config, accountId: account.id, plan: app.store.catalog.plan(account.plan_id), rates: deps.rates }, body);
      if (result.newWatch) await deps.watchAdded(result);
      return { ok: true, payment: presentOrder(app.config, app.store, result.order, await fundingTxs(app.store.db, result.order.id), app.publicUrl()), created: result.created };
    },
  });
}

const listPaymentsRoute = route({
  method: 'GET', path: '/v1/payments', operationId: 'listPayments', tag: TAG, summary: 'List payment orders, newest first (paginated)',
  query: listQuery, errors: [400],
  response: okSchema.extend({ payments: z.array(paymentSchema), page: z.number().int(), per_page: z.number().int(), total: z.number().int() }),
  async handler({ account, app, query }) {
    const page = Number(query.page ?? 1);
    const perPage = Number(query.per_page ?? 50);
    let envId: number | undefined;
    if (query.network !== undefined) {
      envId = app.store.catalog.environmentBySlug(query.network)?.id;
      if (envId === undefined) throw badRequest(`network: unknown network "${query.network}"`);
    }
    const { rows, total } = await listOrders(app.store.db, { accountId: account.id, orderId: query.order_id, status: query.status, envId, page, perPage });
    const payments = await Promise.all(rows.map(async (r) => presentOrder(app.config, app.store, r, await fundingTxs(app.store.db, r.id), app.publicUrl())));
    return { ok: true, payments, page, per_page: perPage, total };
  },
});

const settingsRoutes = [
  route({
    method: 'GET', path: '/v1/payments/settings', operationId: 'getPaymentSettings', tag: TAG, summary: 'Payment settings: xpub (with its first derived address), AML threshold, tolerance, late payments',
    response: settingsSchema,
    async handler({ account, app }) {
      return { ok: true, ...presentSettings(await getSettings(app.store.db, account.id), app.store.catalog) };
    },
  }),
  route({
    method: 'PUT', path: '/v1/payments/settings', operationId: 'updatePaymentSettings', tag: TAG, summary: 'Change payment settings (keys given replace the stored ones; "" removes the xpub)',
    body: settingsBody, errors: [400], role: 'owner',
    response: settingsSchema,
    audit: { action: 'payments.settings', describe: ({ body }) => ({ type: 'payment_settings', changes: settingsChanges(body) }) },
    async handler({ account, app, body }) {
      if (body.redirect_url) checkRedirectUrl(body.redirect_url.trim(), app.config.payments.checkout.allow_any_redirect);
      await putSettings(app.store.db, account.id, body);
      return { ok: true, ...presentSettings(await getSettings(app.store.db, account.id), app.store.catalog) };
    },
  }),
];

/** The audit entry of a settings change: an xpub is named set or removed, never written out (it reveals every order address). */
function settingsChanges(body: z.output<typeof settingsBody>): Record<string, unknown> {
  const { xpubs, ...rest } = body;
  const keys = Object.fromEntries(Object.entries(xpubs ?? {}).map(([family, value]) => [family, value ? 'set' : 'removed']));
  return { ...rest, ...(xpubs ? { xpubs: keys } : {}) };
}

/** https only (http too under `serve --dev`): the page sends paying customers there. */
function checkRedirectUrl(value: string, allowHttp: boolean): void {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw badRequest(`redirect_url: must be an absolute URL such as https://shop.example.com/thanks (got "${value}")`);
  }
  const schemes = allowHttp ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(url.protocol)) {
    throw badRequest(`redirect_url: must be an https URL${allowHttp ? ' (or http in development)' : ' (http is allowed only under rpcctl serve --dev)'}; got ${url.protocol.slice(0, -1)}`);
  }
  if (url.username || url.password) throw badRequest('redirect_url: must not carry a user name or password');
}

const onePaymentRoute = route({
  method: 'GET', path: '/v1/payments/{payment_id}', operationId: 'getPayment', tag: TAG, summary: 'One payment order',
  params: idParam, errors: [400, 404],
  response: okSchema.extend({ payment: paymentSchema }),
  async handler({ account, app, params }) {
    const order = await getOrder(app.store.db, account.id, params.payment_id);
    if (!order) throw notFound('Payment not found');
    return { ok: true, payment: presentOrder(app.config, app.store, order, await fundingTxs(app.store.db, order.id), app.publicUrl()) };
  },
});

function cancelPaymentRoute(deps: PaymentRouteDeps): RouteDef {
  return route({
    method: 'POST', path: '/v1/payments/{payment_id}/cancel', operationId: 'cancelPayment', tag: TAG, summary: 'Cancel an order on which nothing was seen (ends failed, reason canceled)',
    params: idParam, errors: [400, 404, 409],
    response: okSchema.extend({ payment: paymentSchema }),
    audit: { action: 'payment.cancel', describe: ({ params }) => ({ type: 'payment', id: params.payment_id }) },
    async handler({ account, app, params }) {
      const order = await getOrder(app.store.db, account.id, params.payment_id);
      if (!order) throw notFound('Payment not found');
      const next = await deps.engine.cancel(order);
      if (next.status !== 'failed' || next.reason !== 'canceled') {
        throw new HttpError(409, `Payment ${order.payment_id} is ${next.status}: only a pending order (nothing seen yet) can be canceled`);
      }
      const result = { ok: true, payment: presentOrder(app.config, app.store, next, await fundingTxs(app.store.db, next.id), app.publicUrl()) };
      // Cancelling a cancelled order changes nothing: not recorded again.
      return order.status === 'failed' && order.reason === 'canceled' ? noChange(result) : result;
    },
  });
}
