import { sql, type Kysely } from 'kysely';
import type { Database, UsageDailyTable } from './tables.js';
import type { Usage } from '../client/types.js';
import type { Store } from './store.js';

/** One row's increment; `endpoint_id` 0 for account-level charges such as webhook deliveries. */
export type UsageDelta = UsageDailyTable;

/** Exactly the Public API's Usage object. */
export type UsageReport = Usage;

export type UsageScope =
  | { kind: 'account'; accountId: number }
  | { kind: 'endpoints'; accountId: number }
  | { kind: 'endpoint'; accountId: number; endpointId: number };

/** Adds counts in one transaction: the gateway's batched flush, never a write per request. */
export async function addUsage(store: Store, deltas: readonly UsageDelta[]): Promise<void> {
  if (deltas.length === 0) return;
  await store.db.transaction().execute((trx) => addUsageIn(trx, deltas));
}

/** The same, inside a caller's transaction (a webhook is billed in the one that marks it delivered). */
export async function addUsageIn(trx: Kysely<Database>, deltas: readonly UsageDelta[]): Promise<void> {
  // One row order for every instance: concurrent flushes on PostgreSQL then wait for each
  // other's row locks instead of deadlocking.
  // Merged too: PostgreSQL refuses an upsert that meets one row twice, and a batch kept after
  // a failed flush can hold the same row twice.
  const sorted = deltas.length > 1 ? merge(deltas) : deltas;
  for (let i = 0; i < sorted.length; i += 100) {
    const chunk = sorted.slice(i, i + 100);
    await trx.insertInto('usage_daily').values(chunk)
      .onConflict((oc) => oc.columns(['account_id', 'endpoint_id', 'day', 'method']).doUpdateSet({
        requests: sql`usage_daily.requests + excluded.requests`,
        credits: sql`usage_daily.credits + excluded.credits`,
      }))
      .execute();
  }
}

function merge(deltas: readonly UsageDelta[]): UsageDelta[] {
  const out: UsageDelta[] = [];
  for (const d of [...deltas].sort(byRowKey)) {
    const last = out[out.length - 1];
    if (last && byRowKey(last, d) === 0) out[out.length - 1] = { ...last, requests: last.requests + d.requests, credits: last.credits + d.credits };
    else out.push(d);
  }
  return out;
}

function byRowKey(a: UsageDelta, b: UsageDelta): number {
  return a.account_id - b.account_id || a.endpoint_id - b.endpoint_id
    || (a.day < b.day ? -1 : a.day > b.day ? 1 : 0) || (a.method < b.method ? -1 : a.method > b.method ? 1 : 0);
}

export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** `days` UTC dates ending today, oldest first. */
export function dayRange(days: number, nowMs: number): string[] {
  const today = Date.UTC(new Date(nowMs).getUTCFullYear(), new Date(nowMs).getUTCMonth(), new Date(nowMs).getUTCDate());
  const out: string[] = [];
  for (let i = days - 1; i >= 0; i--) out.push(utcDay(today - i * 86_400_000));
  return out;
}

export async function usageReport(store: Store, scope: UsageScope, days: number, nowMs = Date.now()): Promise<UsageReport> {
  const range = dayRange(days, nowMs);
  let q = store.db.selectFrom('usage_daily')
    .where('account_id', '=', scope.accountId)
    .where('day', '>=', range[0]!)
    .where('day', '<=', range[range.length - 1]!);
  if (scope.kind === 'endpoints') q = q.where('endpoint_id', '!=', 0);
  if (scope.kind === 'endpoint') q = q.where('endpoint_id', '=', scope.endpointId);

  const [byDay, byMethod] = await Promise.all([
    q.select(['day', sql<number>`sum(requests)`.as('requests'), sql<number>`sum(credits)`.as('credits')]).groupBy('day').execute(),
    q.select(['method', sql<number>`sum(requests)`.as('requests'), sql<number>`sum(credits)`.as('credits')]).groupBy('method').execute(),
  ]);
  const perDay = new Map(byDay.map((r) => [r.day, r]));
  const series = range.map((date) => ({ date, requests: Number(perDay.get(date)?.requests ?? 0), credits: Number(perDay.get(date)?.credits ?? 0) }));
  const methods = byMethod
    .map((r) => ({ method: r.method, requests: Number(r.requests), credits: Number(r.credits) }))
    .sort((a, b) => b.requests - a.requests || b.credits - a.credits || a.method.localeCompare(b.method));
  return {
    days,
    total_requests: series.reduce((s, p) => s + p.requests, 0),
    total_credits: series.reduce((s, p) => s + p.credits, 0),
    series,
    methods,
  };
}

/** Requests and credits of the account in a calendar month (`YYYY-MM`), all sources. */
export async function monthTotals(store: Store, accountId: number, period: string): Promise<{ requests: number; credits: number }> {
  const row = await store.db.selectFrom('usage_daily')
    .select([sql<number>`coalesce(sum(requests), 0)`.as('requests'), sql<number>`coalesce(sum(credits), 0)`.as('credits')])
    .where('account_id', '=', accountId)
    .where('day', '>=', `${period}-01`)
    .where('day', '<=', `${period}-31`)
    .executeTakeFirst();
  return { requests: Number(row?.requests ?? 0), credits: Number(row?.credits ?? 0) };
}
