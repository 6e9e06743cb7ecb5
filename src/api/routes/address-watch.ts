import type { Environment, WatchedAddressRow } from '../../store/index.js';
import { InvalidAddressError } from '../../chains/address.js';
import { parseAddress } from '../../watch/addresses.js';
import { latestEventId, listEvents } from '../../watch/events.js';
import { addWatch, countWatches, deleteWatch, listWatches, presentWatch, SlotLimitError } from '../../watch/watches.js';
import { getWebhook, presentWebhook, putWebhook } from '../../webhooks/config.js';
import { enqueueTestDelivery, listDeliveries, redeliver, RedeliverError } from '../../webhooks/deliveries.js';
import { DEFAULT_FILTERS, mergeFilters, unknownFilterNetwork } from '../../webhooks/filters.js';
import { BlockedDestinationError, checkWebhookUrl } from '../../webhooks/ssrf.js';
import type { DeliveryWorker } from '../../webhooks/worker.js';
import { badRequest, HttpError, notFound } from '../http.js';
import { FixedWindowLimiter } from '../rate-limit.js';
import { route, type AppContext, type RouteDef } from '../router.js';
import { okSchema } from '../schemas.js';
import {
  addWatchBody, deleteWatchBody, deliveriesQuery, deliverySchema, eventSchema, eventsQuery, listWatchQuery,
  putWebhookBody, testWebhookBody, watchSchema, webhookPutSchema, webhookSchema,
} from './address-watch-schemas.js';
import { z } from 'zod';

/** What the routes need from the running Address Watch. */
export interface AddressWatchDeps {
  worker: DeliveryWorker;
  reconcile(): Promise<void>;
  watchAdded(row: WatchedAddressRow): Promise<void>;
  watchRemoved(row: WatchedAddressRow): void;
}

const TAG = 'Address Watch';

function resolveEnv(app: AppContext, field: string, slug: string): Environment {
  const env = app.store.catalog.environmentBySlug(slug);
  if (!env) throw badRequest(`${field}: unknown network "${slug}" (use a network slug such as "eth", or "{network}-{environment}" such as "eth-sepolia")`);
  return env;
}

/** A list filter needs the match key, not a valid address: a malformed one simply matches nothing. */
/** The match key of a filter address: exact when the network is known, else a best guess by form. */
function looseKey(address: string, env?: Environment): string {
  if (env) {
    try {
      return parseAddress(env, address).key;
    } catch { /* not valid there: matches nothing, like any other unknown address */ }
  }
  const s = address.trim();
  return s.startsWith('0x') || s.startsWith('0X') ? s.toLowerCase() : s.toUpperCase();
}

/** How far back a list goes: older rows are deleted by the retention job (null: kept for ever). */
const retentionDays = z.number().int().nullable().meta({ description: 'days kept: older items are deleted (finished deliveries only); null: kept for ever' });
const keptFor = (days: number) => (days === 0 ? null : days);

export function addressWatchRoutes(deps: AddressWatchDeps): RouteDef[] {
  const testSends = new FixedWindowLimiter(60_000);
  return [
    route({
      method: 'GET', path: '/v1/address-watch/account', tag: TAG, summary: 'Watched-address slots and webhook flags',
      response: okSchema.extend({
        slots_total: z.number().int(), slots_used: z.number().int(), slots_free: z.number().int(),
        webhook_configured: z.boolean(), webhook_enabled: z.boolean(),
      }),
      async handler({ account, app }) {
        const total = app.store.catalog.plan(account.plan_id)?.webhook_address_slots ?? 0;
        const [used, webhook] = await Promise.all([countWatches(app.store.db, account.id), getWebhook(app.store, account.id)]);
        return {
          ok: true, slots_total: total, slots_used: used, slots_free: Math.max(0, total - used),
          webhook_configured: webhook !== undefined, webhook_enabled: webhook?.enabled ?? false,
        };
      },
    }),
    route({
      method: 'GET', path: '/v1/address-watch/addresses', tag: TAG, summary: 'List watched addresses (paginated)',
      query: listWatchQuery, errors: [400],
      response: okSchema.extend({ addresses: z.array(watchSchema), page: z.number().int(), per_page: z.number().int(), total: z.number().int() }),
      async handler({ account, app, query }) {
        const page = Number(query.page ?? 1);
        const perPage = Number(query.per_page ?? 50);
        const env = query.network_slug === undefined ? undefined : resolveEnv(app, 'network_slug', query.network_slug);
        const { rows, total } = await listWatches(app.store, {
          accountId: account.id, envId: env?.id, addressKey: query.address === undefined ? undefined : looseKey(query.address, env), page, perPage,
        });
        return { ok: true, addresses: rows.map(presentWatch), page, per_page: perPage, total };
      },
    }),
    route({
      method: 'POST', path: '/v1/address-watch/addresses', tag: TAG,
      summary: 'Watch an address (uses a slot; the same address on the same network returns the existing watch with created=false)',
      body: addWatchBody, errors: [400],
      response: okSchema.extend(watchSchema.shape).extend({ watch: watchSchema, created: z.boolean() }),
      async handler({ account, app, body }) {
        const env = resolveEnv(app, 'network_slug', body.network_slug);
        let address;
        try {
          address = parseAddress(env, body.address);
        } catch (err) {
          if (err instanceof InvalidAddressError) throw badRequest(`address: ${err.message}`);
          throw err;
        }
        try {
          const { row, created } = await addWatch(app.store, {
            accountId: account.id, plan: app.store.catalog.plan(account.plan_id), env, networkSlug: body.network_slug, address,
          });
          // Returns once a scanner for the network knows where it starts, so a payment sent
          // right after this answer is seen.
          if (created) await deps.watchAdded(row);
          const watch = presentWatch(row);
          return { ok: true, ...watch, watch, created };
        } catch (err) {
          if (err instanceof SlotLimitError) throw badRequest(err.message);
          throw err;
        }
      },
    }),
    route({
      method: 'DELETE', path: '/v1/address-watch/addresses', tag: TAG, summary: 'Stop watching (frees the slot; the events stay in the feed)',
      body: deleteWatchBody, errors: [400, 404, 409],
      response: okSchema.extend({ watch_id: z.string() }),
      async handler({ account, app, body }) {
        // An open payment order listens through this watch: deleting it would blind the order.
        const order = await app.store.db.selectFrom('payment_orders').select(['payment_id', 'order_id'])
          .where('account_id', '=', account.id).where('watch_id', '=', body.watch_id).where('open', '=', 1).executeTakeFirst();
        if (order) throw new HttpError(409, `Watched address backs open payment order ${order.order_id} (${order.payment_id}); it is released when the order ends`);
        const row = await deleteWatch(app.store, account.id, body.watch_id);
        if (!row) throw notFound('Watched address not found');
        deps.watchRemoved(row);
        return { ok: true, watch_id: row.watch_id };
      },
    }),
    route({
      method: 'GET', path: '/v1/address-watch/events', tag: TAG, summary: 'Event feed, oldest first; pass next_after back as after',
      query: eventsQuery, errors: [400],
      response: okSchema.extend({ events: z.array(eventSchema), next_after: z.string().nullable(), retention_days: retentionDays }),
      async handler({ account, app, query }) {
        const envId = query.network === undefined ? undefined : resolveEnv(app, 'network', query.network).id;
        const retention_days = keptFor(app.config.retention.events_days);
        if (query.after === 'latest') return { ok: true, events: [], next_after: await latestEventId(app.store, account.id), retention_days };
        const result = await listEvents(app.store, {
          accountId: account.id, after: query.after === undefined ? undefined : Number(query.after),
          limit: Number(query.limit ?? 100), envId, type: query.type, watchId: query.watch_id,
        });
        return { ok: true, ...result, retention_days };
      },
    }),
    route({
      method: 'GET', path: '/v1/address-watch/webhook', tag: TAG, summary: 'Webhook configuration and the egress IPs to allow',
      response: webhookSchema,
      async handler({ account, app }) {
        return { ok: true, ...presentWebhook(await getWebhook(app.store, account.id), app.config.webhooks.egress_ips) };
      },
    }),
    route({
      method: 'PUT', path: '/v1/address-watch/webhook', tag: TAG, summary: 'Set the webhook URL, switch and filters (omitted events keep the filters)',
      body: putWebhookBody, errors: [400],
      response: webhookPutSchema,
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
        try {
          await checkWebhookUrl(new URL(body.url), app.config.webhooks.allow_private_urls);
        } catch (err) {
          if (err instanceof BlockedDestinationError) throw badRequest(`url: ${err.message}`);
          throw err;
        }
        const saved = await putWebhook(app.store, account.id, { url: body.url, enabled: body.enabled, filters });
        deps.worker.invalidate(account.id);
        void deps.reconcile();
        const { egress_ips: _onlyOnGet, ...config } = presentWebhook(saved, app.config.webhooks.egress_ips);
        return { ok: true, ...config };
      },
    }),
    route({
      method: 'POST', path: '/v1/address-watch/webhook/test', tag: TAG,
      summary: 'Queue a sample delivery (type and network) through the real queue; answers at once; never billed',
      body: testWebhookBody, errors: [400, 429],
      response: okSchema.extend({ queued: z.literal(true), webhook_id: z.string(), body: z.string() }),
      async handler({ account, app, body }) {
        // Test sends are free, so they are counted: each one is a delivery row and an outbound request.
        const wait = testSends.take(String(account.id), app.config.limits.webhook_tests_per_minute);
        if (wait > 0) throw new HttpError(429, `Too many test deliveries: at most ${app.config.limits.webhook_tests_per_minute} a minute`, { 'retry-after': String(wait) });
        const env = resolveEnv(app, 'network', body.network);
        if (!(await getWebhook(app.store, account.id))) throw badRequest('No webhook configured: set one with PUT /v1/address-watch/webhook first');
        const { rows } = await listWatches(app.store, { accountId: account.id, envId: env.id, page: 1, perPage: 1 });
        const sample = rows[0] && { watchId: rows[0].watch_id, network: rows[0].network_slug, address: rows[0].address };
        const queued = await enqueueTestDelivery(app.store, account.id, env, body.type, sample);
        deps.worker.kick();
        return { ok: true, queued: true, webhook_id: queued.webhookId, body: queued.body };
      },
    }),
    route({
      method: 'GET', path: '/v1/address-watch/deliveries', tag: TAG, summary: 'Webhook deliveries, newest first, with every attempt',
      query: deliveriesQuery, errors: [400],
      response: okSchema.extend({ deliveries: z.array(deliverySchema), next_before: z.string().nullable(), retention_days: retentionDays }),
      async handler({ account, app, query }) {
        const result = await listDeliveries(app.store, {
          accountId: account.id, limit: Number(query.limit ?? 50), before: query.before === undefined ? undefined : Number(query.before),
          status: query.status, eventId: query.event_id === undefined ? undefined : Number(query.event_id),
        });
        return { ok: true, ...result, retention_days: keptFor(app.config.retention.deliveries_days) };
      },
    }),
    route({
      method: 'POST', path: '/v1/address-watch/deliveries/{delivery_id}/redeliver', tag: TAG,
      summary: 'Send a delivery again now (our extension): same X-Webhook-Id, next attempt number; a resend of a delivered one is not billed again',
      params: z.object({ delivery_id: z.string().regex(/^[1-9]\d{0,15}$/, 'must be a positive integer') }), errors: [400, 404, 409],
      response: okSchema.extend({ delivery: deliverySchema }),
      async handler({ account, app, params }) {
        try {
          const delivery = await redeliver(app.store, account.id, Number(params.delivery_id));
          deps.worker.kick();
          return { ok: true, delivery };
        } catch (err) {
          if (err instanceof RedeliverError) {
            throw err.code === 'E_NOT_FOUND' ? notFound(err.message) : new HttpError(err.code === 'E_IN_FLIGHT' ? 409 : 400, err.message);
          }
          throw err;
        }
      },
    }),
  ];
}
