import type { WebhookEventFilters } from '../wire/webhooks.js';
import type { Catalog, Environment } from '../store/index.js';

/** The flat `events` object of the webhook configuration (decisions.md). */
export type WebhookFilters = WebhookEventFilters;

export const DEFAULT_FILTERS: WebhookFilters = {
  payment: true, payment_networks: [], payout: true, payout_networks: [], block: true, block_networks: [],
};

export type EventKind = 'payment' | 'payout' | 'other' | 'block';
export type Direction = 'in' | 'out';

/** A PUT's `events` replaces the keys it names and keeps the others. */
export function mergeFilters(current: WebhookFilters, patch: Partial<WebhookFilters>): WebhookFilters {
  const out = { ...current };
  for (const [k, v] of Object.entries(patch) as Array<[keyof WebhookFilters, never]>) {
    if (v !== undefined) out[k] = v;
  }
  return out;
}

export function parseStoredFilters(json: string): WebhookFilters {
  return { ...DEFAULT_FILTERS, ...(JSON.parse(json) as Partial<WebhookFilters>) };
}

/** Every network list entry must name an environment; returns the first bad one. */
export function unknownFilterNetwork(catalog: Catalog, f: Partial<WebhookFilters>): { key: string; index: number; slug: string } | undefined {
  for (const key of ['payment_networks', 'payout_networks', 'block_networks'] as const) {
    const list = f[key] ?? [];
    for (let i = 0; i < list.length; i++) {
      if (!catalog.environmentBySlug(list[i]!)) return { key, index: i, slug: list[i]! };
    }
  }
  return undefined;
}

/**
 * `payment` selects non-block hits with direction in, `payout` direction out, `block` block
 * events. An empty network list is every network; a list matches by environment, so `eth`
 * and `eth-mainnet` select the same events.
 */
export function filtersSelect(catalog: Catalog, f: WebhookFilters, kind: EventKind, direction: Direction | null, env: Environment): boolean {
  const [on, nets] = kind === 'block' ? [f.block, f.block_networks]
    : direction === 'out' ? [f.payout, f.payout_networks]
      : [f.payment, f.payment_networks];
  if (!on) return false;
  return nets.length === 0 || nets.some((slug) => catalog.environmentBySlug(slug)?.id === env.id);
}

/** Environments a block subscription names explicitly (an empty list means the watched ones). */
export function blockNetworkEnvIds(catalog: Catalog, f: WebhookFilters): number[] {
  if (!f.block) return [];
  return f.block_networks.flatMap((slug) => {
    const env = catalog.environmentBySlug(slug);
    return env ? [env.id] : [];
  });
}
