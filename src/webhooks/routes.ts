import { z } from 'zod';
import { keptFor, resolveEnv, retentionDays } from '../api/kit.js';
import { badRequest, forField, HttpError } from '../api/http.js';
import { FixedWindowLimiter } from '../limits/rate-limit.js';
import { route, type RouteDef } from '../api/router.js';
import { idText, okSchema } from '../api/schemas.js';
import { urlOrigin } from '../api/audit.js';
import type { Store } from '../store/index.js';
import { getWebhook, presentWebhook, putWebhook } from './config.js';
import { enqueueTestDelivery, listDeliveries, redeliver } from './deliveries.js';
import { DEFAULT_FILTERS, mergeFilters, unknownFilterNetwork } from './filters.js';
import { deliveriesQuery, putWebhookBody, testWebhookBody, webhookPutSchema, webhookSchema } from './schemas.js';
import { deliverySchema } from '../wire/webhooks.js';
import { checkWebhookUrl } from './ssrf.js';
import type { DeliveryWorker } from './worker.js';
import type { WatchFacts } from './watch-facts.js';

/** What the webhook routes need from the running webhook service and Address Watch. */
export interface WebhookDeps {
  worker: DeliveryWorker;
  /** Reorg and height facts of Address Watch (watch/facts.ts). */
  watch: WatchFacts;
  /** Block subscriptions may have changed: bring the scanners in line. */
  reconcile(): Promise<void>;
  /** One watched address of the account on the network, for a test delivery's sample (watch/ owns them). */
  sampleWatch(store: Store, accountId: number, envId: number): Promise<{ watchId: string; network: string; address: string } | undefined>;
}

// The webhook routes are Address Watch's in the API (paths and tag): a webhook is how its events
// are delivered.
const TAG = 'Address Watch';

/** Webhook settings, test sends and the deliveries with their attempts. */
export function webhookRoutes(deps: WebhookDeps): RouteDef[] {
  return [getWebhookRoute, putWebhookRoute(deps), testSendRoute(deps), deliveriesRoute, redeliverRoute(deps)];
}

const getWebhookRoute = route({
  method: 'GET', path: '/v1/address-watch/webhook', operationId: 'getWebhook', tag: TAG, summary: 'Webhook configuration and the egress IPs to allow',
  response: webhookSchema,
  async handler({ account, app }) {
    return { ok: true, ...presentWebhook(await getWebhook(app.store, account.id), app.config.webhooks.egress_ips) };
  },
});

function putWebhookRoute(deps: WebhookDeps): RouteDef {
  return route({
    method: 'PUT', path: '/v1/address-watch/webhook', operationId: 'setWebhook', tag: TAG, summary: 'Set the webhook URL, switch and filters (omitted events keep the filters)',
    body: putWebhookBody, errors: [400],
    response: webhookPutSchema,
    audit: {
      action: 'webhook.set',
      describe: ({ body }) => ({ type: 'webhook', changes: { url: urlOrigin(body.url), enabled: body.enabled, ...(body.events ? { events: body.events } : {}) } }),
    },
    async handler({ account, app, body }) {
      const bad = body.events && unknownFilterNetwork(app.store.catalog, body.events);
      if (bad) throw badRequest(`events.${bad.key}[${bad.index}]: unknown network "${bad.slug}"`);
      const current = await getWebhook(app.store, account.id);
      const filters = mergeFilters(current?.filters ?? DEFAULT_FILTERS, body.events ?? {});
      // Naming block networks starts a chain scanner for this account; a plan without Address
      // Watch (no slots, like Free) must not be able to run one.
      const plan = app.store.catalog.plan(account.plan_id);
      if (filters.block && filters.block_networks.length > 0 && (plan?.webhook_address_slots ?? 0) === 0) {
        throw badRequest(`events.block_networks: block subscriptions need Address Watch, which the ${plan?.name ?? 'current'} plan does not include`);
      }
      const url = new URL(body.url);
      await forField('url', () => checkWebhookUrl(url, app.config.webhooks.allow_private_urls));
      const saved = await putWebhook(app.store, account.id, { url: body.url, enabled: body.enabled, filters });
      deps.worker.invalidate(account.id);
      void deps.reconcile();
      const { egress_ips: _onlyOnGet, ...config } = presentWebhook(saved, app.config.webhooks.egress_ips);
      return { ok: true, ...config };
    },
  });
}

function testSendRoute(deps: WebhookDeps): RouteDef {
  const testSends = new FixedWindowLimiter(60_000);
  return route({
    method: 'POST', path: '/v1/address-watch/webhook/test', operationId: 'testWebhook', tag: TAG,
    summary: 'Queue a sample delivery (type and network) through the real queue; answers at once; never billed',
    body: testWebhookBody, errors: [400, 429],
    response: okSchema.extend({ queued: z.literal(true), webhook_id: z.string(), body: z.string() }),
    audit: { action: 'webhook.test', describe: ({ body, result }) => ({ type: 'webhook', id: result.webhook_id, changes: { type: body.type, network: body.network } }) },
    async handler({ account, app, body }) {
      // Test sends are free, so they are counted: each one is a delivery row and an outbound request.
      const wait = testSends.take(String(account.id), app.config.limits.webhook_tests_per_minute);
      if (wait > 0) throw new HttpError(429, `Too many test deliveries: at most ${app.config.limits.webhook_tests_per_minute} a minute`, { 'retry-after': String(wait) });
      const env = resolveEnv(app, 'network', body.network);
      if (!(await getWebhook(app.store, account.id))) throw badRequest('No webhook configured: set one with PUT /v1/address-watch/webhook first');
      const sample = await deps.sampleWatch(app.store, account.id, env.id);
      const queued = await enqueueTestDelivery(app.store, deps.watch, account.id, env, body.type, sample);
      deps.worker.kick();
      return { ok: true, queued: true, webhook_id: queued.webhookId, body: queued.body };
    },
  });
}

const deliveriesRoute = route({
  method: 'GET', path: '/v1/address-watch/deliveries', operationId: 'listWebhookDeliveries', tag: TAG, summary: 'Webhook deliveries, newest first, with every attempt',
  query: deliveriesQuery, errors: [400],
  response: okSchema.extend({ deliveries: z.array(deliverySchema), next_before: z.string().nullable(), retention_days: retentionDays }),
  async handler({ account, app, query }) {
    const result = await listDeliveries(app.store, {
      accountId: account.id, limit: Number(query.limit ?? 50), before: query.before === undefined ? undefined : Number(query.before),
      status: query.status, eventId: query.event_id === undefined ? undefined : Number(query.event_id),
    });
    return { ok: true, ...result, retention_days: keptFor(app.config.retention.deliveries_days) };
  },
});

function redeliverRoute(deps: WebhookDeps): RouteDef {
  return route({
    method: 'POST', path: '/v1/address-watch/deliveries/{delivery_id}/redeliver', operationId: 'redeliverWebhook', tag: TAG,
    summary: 'Send a delivery again now (our extension): same X-Webhook-Id, next attempt number; a resend of a delivered one is not billed again',
    params: z.object({ delivery_id: idText('the delivery_id of a delivery') }), errors: [400, 404, 409],
    response: okSchema.extend({ delivery: deliverySchema }),
    audit: { action: 'webhook.redeliver', describe: ({ params }) => ({ type: 'delivery', id: params.delivery_id }) },
    async handler({ account, app, params }) {
      const delivery = await redeliver(app.store, deps.watch, account.id, Number(params.delivery_id));
      deps.worker.kick();
      return { ok: true, delivery };
    },
  });
}
