import { z } from 'zod';
import { badRequest, forField, HttpError, notFound } from '../api/http.js';
import { route, type RouteDef } from '../api/router.js';
import { okSchema } from '../api/schemas.js';
import { urlOrigin } from '../api/audit.js';
import { checkWebhookUrl } from '../webhooks/ssrf.js';
import type { PaymentEngine } from './engine.js';
import type { RateSource } from './rates.js';
import {
  createOrder, fundingTxs, getOrder, getSettings, listOrders, presentOrder, presentSettings, putSettings, type CreateResult,
} from './orders.js';

const TAG = 'Payments';

export interface PaymentRouteDeps {
  engine: PaymentEngine;
  /** A watch the order made: into the in-memory registry, and a scanner for its network. */
  watchAdded(result: CreateResult): Promise<void>;
  /** Rates for orders priced in a fiat currency. */
  rates: RateSource;
}

const statuses = ['pending', 'seen', 'aml_check', 'paid', 'failed', 'underpaid', 'expired'] as const;

const amlSchema = z.object({
  provider: z.string(), score: z.number(), risk_level: z.enum(['low', 'medium', 'high', 'severe', 'unknown']),
  details: z.array(z.object({ category: z.string(), address: z.string(), source: z.string() })),
  report_url: z.string().nullable(), checked_at: z.string(),
}).meta({ id: 'AmlResult' });

export const paymentSchema = z.object({
  payment_id: z.string(), order_id: z.string(), status: z.enum(statuses), network: z.string(),
  asset: z.string().meta({ description: '`native`, an EVM token contract, or a Stellar CODE:ISSUER' }), asset_symbol: z.string(), decimals: z.number().int(),
  address: z.string(), watch_id: z.string(), derivation_index: z.number().int().nullable(),
  amount: z.string().meta({ description: 'decimal string in units' }), amount_raw: z.string().meta({ description: 'integer string in base units' }),
  amount_received: z.string(), amount_received_raw: z.string(),
  price_amount: z.string().nullable().meta({ description: 'the fiat price (decimal string); null for an order priced in the asset' }),
  price_currency: z.string().nullable().meta({ description: 'ISO 4217 code of price_amount' }),
  rate: z.string().nullable().meta({ description: 'price_currency per asset unit, locked at creation (decimal string)' }),
  rate_source: z.enum(['static', 'http']).nullable(),
  rate_at: z.string().nullable().meta({ description: 'when the source priced the rate' }),
  tx_hashes: z.array(z.string()),
  confirmations: z.number().int().meta({ description: 'confirmations the network requires before funds count' }),
  expires_at: z.string(), created_at: z.string(), updated_at: z.string(), webhook_url: z.string().nullable(),
  metadata: z.unknown(), aml: amlSchema.nullable(), reason: z.string().nullable(), late: z.boolean(), overpaid: z.boolean(),
  lifecycle: z.string().meta({ description: 'statuses taken, joined by ">", e.g. pending>seen>aml_check>paid' }),
  checkout_url: z.string().meta({ description: 'the hosted checkout page for the customer, `{api_base}/pay/{payment_id}`: no sign-in, the payment id is its credential' }),
}).meta({ id: 'Payment' });

export const MAX_METADATA_BYTES = 4096;

/**
 * Order metadata, judged on the value as parsed, before the record below rebuilds it: that
 * rebuild drops a `__proto__` key without a word. Refused rather than kept, at any depth:
 * receivers in JavaScript that merge it into an object would change its prototype.
 */
function checkMetadata(value: unknown, ctx: z.RefinementCtx): void {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return;
  const bytes = Buffer.byteLength(JSON.stringify(value));
  if (bytes > MAX_METADATA_BYTES) ctx.addIssue({ code: 'custom', message: `must be at most ${MAX_METADATA_BYTES} bytes of JSON (UTF-8), got ${bytes}` });
  const where = protoKeyPath(value);
  if (where !== undefined) ctx.addIssue({ code: 'custom', message: `the key "__proto__" is not allowed (at ${where})` });
}

/** Where a `__proto__` key is, as a path such as `metadata.cart[0].__proto__`; walked without recursion. */
function protoKeyPath(root: object): string | undefined {
  const stack: Array<{ value: unknown; path: string }> = [{ value: root, path: 'metadata' }];
  while (stack.length > 0) {
    const { value, path } = stack.pop()!;
    if (Array.isArray(value)) value.forEach((v, i) => stack.push({ value: v, path: `${path}[${i}]` }));
    else if (value !== null && typeof value === 'object') {
      if (Object.hasOwn(value, '__proto__')) return `${path}.__proto__`;
      for (const [k, v] of Object.entries(value)) stack.push({ value: v, path: `${path}.${k}` });
    }
  }
  return undefined;
}

const metadataSchema = z.unknown().superRefine(checkMetadata)
  .pipe(z.record(z.string(), z.unknown(), { error: 'must be a JSON object' }))
  // The pipe would show as "anything" in the OpenAPI document: say what it takes.
  .meta({ type: 'object', additionalProperties: {}, description: `Any JSON object up to ${MAX_METADATA_BYTES} bytes (UTF-8) of JSON; no "__proto__" key` });

const orderId = z.string({ error: 'is required and must be a string' }).min(1, 'must not be empty').max(128, 'must be at most 128 characters')
  .regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces');

export const createPaymentBody = z.strictObject({
  order_id: orderId,
  network_slug: z.string({ error: 'is required and must be a string' }).min(1).max(80),
  amount: z.string({ error: 'must be a decimal string such as "12.50" (not a number: JSON numbers lose precision)' }).min(1).max(80).optional()
    .meta({ description: 'in the asset; or give price_amount and price_currency instead' }),
  price_amount: z.string({ error: 'must be a decimal string such as "19.99" (not a number: JSON numbers lose precision)' }).min(1).max(80).optional()
    .meta({ description: 'a price in price_currency, instead of amount: the amount is computed at a rate locked now, rounded up to the asset\'s decimals' }),
  price_currency: z.string({ error: 'must be an ISO 4217 currency code such as "USD"' }).max(16).optional(),
  asset: z.string({ error: 'must be a string' }).min(1).max(128).optional(),
  address: z.string({ error: 'must be a string' }).min(1).max(128).optional(),
  expires_in: z.number({ error: 'must be an integer number of seconds' }).int('must be an integer number of seconds')
    .min(10, 'must be at least 10 seconds').max(604_800, 'must be at most 604800 seconds (7 days)').optional(),
  webhook_url: z.string({ error: 'must be a string' }).url('must be an http(s) URL').max(2048).optional(),
  metadata: metadataSchema.optional(),
});

const listQuery = z.object({
  order_id: z.string().max(128).optional(),
  status: z.enum(statuses, { error: `must be one of ${statuses.join(', ')}` }).optional(),
  network: z.string().max(80).optional(),
  page: z.string().regex(/^[1-9]\d{0,8}$/, 'must be a positive integer').optional(),
  per_page: z.string().regex(/^\d+$/, 'must be an integer from 1 to 200').refine((v) => Number(v) >= 1 && Number(v) <= 200, 'must be an integer from 1 to 200').optional(),
});

const settingsBody = z.strictObject({
  xpubs: z.strictObject({
    evm: z.string().max(200).optional(),
    utxo: z.string().max(200).optional(),
    tron: z.string().max(200).optional(),
  }, { error: 'must be an object such as {"evm": "xpub...", "utxo": "zpub...", "tron": "xpub..."}' }).optional(),
  aml_fail_at: z.enum(['medium', 'high', 'severe'], { error: 'must be "medium", "high" or "severe"' }).optional(),
  underpaid_tolerance_bps: z.number({ error: 'must be an integer (basis points)' }).int('must be an integer (basis points)')
    .min(0, 'must be at least 0').max(10_000, 'must be at most 10000 (100 %)').optional(),
  accept_late: z.boolean({ error: 'must be true or false' }).optional(),
  display_name: z.string({ error: 'must be a string ("" removes it)' }).max(80, 'must be at most 80 characters')
    .regex(/^[^\p{Cc}]*$/u, 'must not contain control characters').optional(),
  redirect_url: z.string({ error: 'must be a string: an https URL ("" removes it)' }).max(2048, 'must be at most 2048 characters').optional(),
});

const settingsSchema = okSchema.extend({
  xpubs: z.object({ evm: z.string().optional(), utxo: z.string().optional(), tron: z.string().optional() }),
  aml_fail_at: z.string(), underpaid_tolerance_bps: z.number().int(), accept_late: z.boolean(),
  display_name: z.string().nullable().meta({ description: "the merchant's name on the checkout page" }),
  redirect_url: z.string().nullable().meta({ description: 'where the checkout page sends a paid customer, with ?order_id=' }),
  derived: z.object({
    evm: z.object({ first_address: z.string(), next_index: z.number().int() }).optional(),
    utxo: z.object({
      first_address: z.string(), next_index: z.number().int(),
      network: z.string().meta({ description: 'the network whose prefixes first_address is written in' }),
    }).optional(),
    tron: z.object({ first_address: z.string(), next_index: z.number().int() }).optional(),
  }),
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
      return { ok: true, payment: presentOrder(app.config, app.store, next, await fundingTxs(app.store.db, next.id), app.publicUrl()) };
    },
  });
}
