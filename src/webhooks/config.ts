import type { Store } from '../store/index.js';
import { DEFAULT_FILTERS, parseStoredFilters, type WebhookFilters } from './filters.js';

export interface WebhookConfig {
  accountId: number;
  url: string;
  enabled: boolean;
  filters: WebhookFilters;
}

export async function getWebhook(store: Store, accountId: number): Promise<WebhookConfig | undefined> {
  const row = await store.db.selectFrom('watch_webhooks').selectAll().where('account_id', '=', accountId).executeTakeFirst();
  return row && { accountId, url: row.url, enabled: row.enabled === 1, filters: parseStoredFilters(row.filters) };
}

export async function getWebhooks(db: Store['db'], accountIds: number[]): Promise<Map<number, WebhookConfig>> {
  const out = new Map<number, WebhookConfig>();
  if (accountIds.length === 0) return out;
  const rows = await db.selectFrom('watch_webhooks').selectAll().where('account_id', 'in', accountIds).execute();
  for (const r of rows) out.set(r.account_id, { accountId: r.account_id, url: r.url, enabled: r.enabled === 1, filters: parseStoredFilters(r.filters) });
  return out;
}

/** Enabled webhooks whose block filter is on: the candidates for block events. */
export async function blockSubscribers(db: Store['db']): Promise<WebhookConfig[]> {
  const rows = await db.selectFrom('watch_webhooks').selectAll().where('enabled', '=', 1).execute();
  return rows.map((r) => ({ accountId: r.account_id, url: r.url, enabled: true, filters: parseStoredFilters(r.filters) }))
    .filter((w) => w.filters.block);
}

export async function putWebhook(store: Store, accountId: number, input: { url: string; enabled: boolean; filters: WebhookFilters }): Promise<WebhookConfig> {
  const values = { url: input.url, enabled: input.enabled ? 1 : 0, filters: JSON.stringify(input.filters), updated_at: new Date().toISOString() };
  await store.db.insertInto('watch_webhooks').values({ account_id: accountId, ...values })
    .onConflict((oc) => oc.column('account_id').doUpdateSet(values)).execute();
  return { accountId, ...input };
}

export function presentWebhook(cfg: WebhookConfig | undefined, egressIps: string[]) {
  return {
    url: cfg?.url ?? null,
    enabled: cfg?.enabled ?? false,
    events: cfg?.filters ?? { ...DEFAULT_FILTERS },
    egress_ips: egressIps,
  };
}
