import { z } from 'zod';
import { keptFor, resolveEnv, retentionDays } from '../api/kit.js';
import { forField, HttpError, notFound } from '../api/http.js';
import { route, type RouteDef } from '../api/router.js';
import { okSchema } from '../api/schemas.js';
import type { Environment, WatchedAddressRow } from '../store/index.js';
import { getWebhook } from '../webhooks/config.js';
import { parseAddress } from './addresses.js';
import { latestEventId, listEvents } from './events.js';
import { addWatchBody, deleteWatchBody, eventSchema, eventsQuery, listWatchQuery } from './schemas.js';
import { watchSchema } from '../wire/watch.js';
import { addWatch, countWatches, deleteWatch, listWatches, presentWatch, type HolderChanged } from './watches.js';

/** What the routes need from the running Address Watch. */
export interface AddressWatchDeps {
  watchAdded(row: WatchedAddressRow): Promise<void>;
  watchRemoved(row: WatchedAddressRow): void;
  /** The open payment order listening through a watch, to name it in a refusal (payments own orders; serve hands this in). */
  openOrderOf?(accountId: number, watchId: string): Promise<{ order_id: string; payment_id: string } | undefined>;
  /** Payments told when the merchant takes a watch from the orders or gives it back (watches.ts HolderChanged). */
  holderChanged?: HolderChanged;
}

const TAG = 'Address Watch';

/**
 * The match key of a list filter's address: exact when the network is known, else a best guess
 * by form. A filter needs the key, not a valid address: a malformed one simply matches nothing.
 */
function looseKey(address: string, env?: Environment): string {
  if (env) {
    try {
      return parseAddress(env, address).key;
    } catch { /* not valid there: matches nothing, like any other unknown address */ }
  }
  const s = address.trim();
  return s.startsWith('0x') || s.startsWith('0X') ? s.toLowerCase() : s.toUpperCase();
}

/** Watched addresses, slots and the event feed. */
export function watchRoutes(deps: AddressWatchDeps): RouteDef[] {
  return [slotsRoute, listWatchesRoute, addWatchRoute(deps), deleteWatchRoute(deps), eventsRoute];
}

const slotsRoute = route({
  method: 'GET', path: '/v1/address-watch/account', operationId: 'getWatchAccount', tag: TAG, summary: 'Watched-address slots and webhook flags',
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
});

const listWatchesRoute = route({
  method: 'GET', path: '/v1/address-watch/addresses', operationId: 'listWatchedAddresses', tag: TAG, summary: 'List watched addresses (paginated)',
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
});

function addWatchRoute(deps: AddressWatchDeps): RouteDef {
  return route({
    method: 'POST', path: '/v1/address-watch/addresses', operationId: 'watchAddress', tag: TAG,
    summary: 'Watch an address (uses a slot; the same address on the same network returns the existing watch with created=false)',
    body: addWatchBody, errors: [400],
    response: okSchema.extend(watchSchema.shape).extend({ watch: watchSchema, created: z.boolean() }),
    audit: {
      action: 'watch.add',
      describe: ({ body, result }) => (result.created ? { type: 'watch', id: result.watch.watch_id, changes: { network: body.network_slug, address: result.watch.address } } : null),
    },
    async handler({ account, app, body }) {
      const env = resolveEnv(app, 'network_slug', body.network_slug);
      const address = await forField('address', () => parseAddress(env, body.address));
      const { row, created } = await addWatch(app.store, {
        accountId: account.id, plan: app.store.catalog.plan(account.plan_id), env, networkSlug: body.network_slug, address, claim: true, holderChanged: deps.holderChanged,
      });
      // Returns once a scanner for the network knows where it starts, so a payment sent
      // right after this answer is seen.
      if (created) await deps.watchAdded(row);
      const watch = presentWatch(row);
      return { ok: true, ...watch, watch, created };
    },
  });
}

function deleteWatchRoute(deps: AddressWatchDeps): RouteDef {
  return route({
    method: 'DELETE', path: '/v1/address-watch/addresses', operationId: 'unwatchAddress', tag: TAG, summary: 'Stop watching (frees the slot; the events stay in the feed)',
    body: deleteWatchBody, errors: [400, 404, 409],
    response: okSchema.extend({ watch_id: z.string() }),
    audit: { action: 'watch.remove', describe: ({ body }) => ({ type: 'watch', id: body.watch_id }) },
    async handler({ account, app, body }) {
      const gone = await deleteWatch(app.store, account.id, body.watch_id, deps.holderChanged);
      if (!gone) throw notFound('Watched address not found');
      // An open payment order listens through this watch: deleting it would blind the order.
      if (gone.inUse) {
        const order = await deps.openOrderOf?.(account.id, body.watch_id);
        throw new HttpError(409, `Watched address backs open payment order${order ? ` ${order.order_id} (${order.payment_id})` : ''}; it is released when the order ends`);
      }
      if (!gone.kept) deps.watchRemoved(gone.row);
      return { ok: true, watch_id: gone.row.watch_id };
    },
  });
}

const eventsRoute = route({
  method: 'GET', path: '/v1/address-watch/events', operationId: 'listWatchEvents', tag: TAG, summary: 'Event feed, oldest first; pass next_after back as after',
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
});
