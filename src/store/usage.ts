import { CompiledQuery, sql, type Kysely } from 'kysely';
import { storeKindOf } from './dialect.js';
import type { Database, UsageDailyTable } from './tables.js';
import type { Usage } from '../wire/account.js';
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

/**
 * The same, inside a caller's transaction (a webhook is billed in the one that marks it
 * delivered). Writes the endpoint rows and the account roll-up together, O(counters): a
 * failure anywhere rolls back both, and the caller keeps its counts.
 */
export async function addUsageIn(trx: Kysely<Database>, deltas: readonly UsageDelta[]): Promise<void> {
  if (deltas.length === 0) return;
  // One row order for every instance: concurrent flushes on PostgreSQL then wait for each
  // other's row locks instead of deadlocking. Day first, as the keys are: a flush touches one
  // end of the index, not a page of every endpoint's range.
  // Merged too: PostgreSQL refuses an upsert that meets one row twice, and a batch kept after
  // a failed flush can hold the same row twice.
  const rows = merge(deltas);
  const flat: (string | number)[] = [];
  for (const d of rows) flat.push(d.day, d.account_id, d.endpoint_id, d.method, d.requests, d.credits);
  await upsertChunks(trx, ENDPOINT_ROLLUP, flat);
  await upsertChunks(trx, ACCOUNT_ROLLUP, accountRollup(rows));
}

interface Rollup {
  table: 'usage_daily' | 'usage_account_daily';
  key: readonly string[];
}
const ENDPOINT_ROLLUP: Rollup = { table: 'usage_daily', key: ['day', 'account_id', 'endpoint_id', 'method'] };
const ACCOUNT_ROLLUP: Rollup = { table: 'usage_account_daily', key: ['day', 'account_id', 'method'] };

/** Rows per statement: 3,072 parameters, within SQLite's 32,766 and PostgreSQL's 65,535. */
const CHUNK = 512;

/**
 * Multi-row upserts of `flat` (the rollup's key columns, then requests and credits, row after
 * row). Statements come in power-of-two sizes, built once each: a flush costs the rows it
 * writes, not the building of a query per chunk, and the prepared-statement cache holds a
 * handful of them.
 */
async function upsertChunks(trx: Kysely<Database>, rollup: Rollup, flat: readonly (string | number)[]): Promise<void> {
  const width = rollup.key.length + 2;
  const sqlite = storeKindOf(trx) === 'sqlite';
  let at = 0;
  let left = flat.length / width;
  while (left > 0) {
    let n = CHUNK;
    while (n > left) n >>= 1;
    // SQLite writes on this thread: a turn of the event loop between statements keeps a flush
    // of many counters from holding up whatever else runs here (the transaction stays open).
    if (at > 0 && sqlite) await new Promise((r) => setImmediate(r));
    const text = upsertSql(trx, rollup, n);
    await trx.executeQuery(CompiledQuery.raw(text, flat.slice(at * width, (at + n) * width)));
    at += n;
    left -= n;
  }
}

const upsertTexts = new Map<string, string>();

function upsertSql(trx: Kysely<Database>, rollup: Rollup, n: number): string {
  const id = `${storeKindOf(trx)}:${rollup.table}:${n}`;
  let text = upsertTexts.get(id);
  if (text === undefined) {
    const row: Record<string, string | number> = {};
    for (const k of rollup.key) row[k] = k === 'day' || k === 'method' ? '' : 0;
    row.requests = 0;
    row.credits = 0;
    const t = rollup.table;
    text = trx.insertInto(t as 'usage_daily').values(Array.from({ length: n }, () => row as unknown as UsageDailyTable))
      .onConflict((oc) => oc.columns(rollup.key as ['day']).doUpdateSet({
        requests: sql`${sql.ref(`${t}.requests`)} + excluded.requests`,
        credits: sql`${sql.ref(`${t}.credits`)} + excluded.credits`,
      }))
      .compile().sql;
    upsertTexts.set(id, text);
  }
  return text;
}

function accountRollup(rows: readonly UsageDelta[]): (string | number)[] {
  // Rows arrive sorted by day, account, endpoint, method: one account's methods of one day are
  // contiguous, so a small map per (day, account) run suffices.
  const flat: (string | number)[] = [];
  let i = 0;
  while (i < rows.length) {
    const { day, account_id } = rows[i]!;
    const methods = new Map<string, { requests: number; credits: number }>();
    for (; i < rows.length && rows[i]!.day === day && rows[i]!.account_id === account_id; i++) {
      const r = rows[i]!;
      const c = methods.get(r.method);
      if (c) {
        c.requests += r.requests;
        c.credits += r.credits;
      } else {
        methods.set(r.method, { requests: r.requests, credits: r.credits });
      }
    }
    for (const m of [...methods.keys()].sort()) {
      const c = methods.get(m)!;
      flat.push(day, account_id, m, c.requests, c.credits);
    }
  }
  return flat;
}

function merge(deltas: readonly UsageDelta[]): UsageDelta[] {
  if (deltas.length === 1) return [deltas[0]!];
  const out: UsageDelta[] = [];
  for (const d of [...deltas].sort(byRowKey)) {
    const last = out[out.length - 1];
    if (last && byRowKey(last, d) === 0) out[out.length - 1] = { ...last, requests: last.requests + d.requests, credits: last.credits + d.credits };
    else out.push(d);
  }
  return out;
}

function byRowKey(a: UsageDelta, b: UsageDelta): number {
  return (a.day < b.day ? -1 : a.day > b.day ? 1 : 0) || a.account_id - b.account_id || a.endpoint_id - b.endpoint_id
    || (a.method < b.method ? -1 : a.method > b.method ? 1 : 0);
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

/**
 * Reads only the days asked for, each by its key (`day IN (...)`): the days lead the roll-ups'
 * keys, so this costs days x methods rows whatever the history or the number of endpoints,
 * summed by the store, not row by row here.
 */
export async function usageReport(store: Store, scope: UsageScope, days: number, nowMs = Date.now()): Promise<UsageReport> {
  const range = dayRange(days, nowMs);
  const [byDay, byMethod] = scope.kind === 'endpoint'
    ? await grouped(store, 'usage_daily', range, scope.accountId, scope.endpointId)
    : await grouped(store, 'usage_account_daily', range, scope.accountId);
  const perDay = totals(byDay);
  const perMethod = totals(byMethod);
  // Over all endpoints: the account's roll-up less its account-level charges (endpoint 0); a
  // method that only those charges used leaves the list.
  if (scope.kind === 'endpoints') {
    const [chargeDays, chargeMethods] = await grouped(store, 'usage_daily', range, scope.accountId, 0);
    for (const [map, rows] of [[perDay, chargeDays], [perMethod, chargeMethods]] as const) {
      for (const r of rows) {
        const c = map.get(r.key);
        if (!c) continue;
        c.requests -= Number(r.requests);
        c.credits -= Number(r.credits);
        if (map === perMethod && c.requests === 0 && c.credits === 0) map.delete(r.key);
      }
    }
  }
  const series = range.map((date) => ({ date, requests: perDay.get(date)?.requests ?? 0, credits: perDay.get(date)?.credits ?? 0 }));
  const methods = [...perMethod]
    .map(([method, c]) => ({ method, requests: c.requests, credits: c.credits }))
    .sort((a, b) => b.requests - a.requests || b.credits - a.credits || a.method.localeCompare(b.method));
  return {
    days,
    total_requests: series.reduce((s, p) => s + p.requests, 0),
    total_credits: series.reduce((s, p) => s + p.credits, 0),
    series,
    methods,
  };
}

type Sums = { key: string; requests: number; credits: number }[];

/** Sums by day and by method of one roll-up, over the days of `range`. */
async function grouped(store: Store, table: 'usage_daily' | 'usage_account_daily', range: string[], accountId: number, endpointId?: number): Promise<[Sums, Sums]> {
  const base = () => {
    // Both roll-ups have these columns; only usage_daily has endpoint_id, asked only of it.
    let q = store.db.selectFrom(table as 'usage_daily').where('day', 'in', range).where('account_id', '=', accountId);
    if (endpointId !== undefined) q = q.where('endpoint_id', '=', endpointId);
    return q;
  };
  const sums = [sql<number>`sum(requests)`.as('requests'), sql<number>`sum(credits)`.as('credits')] as const;
  const byDay = await base().select(['day as key', ...sums]).groupBy('day').execute();
  // SQLite answers on this thread: a turn of the event loop between the two reads lets what
  // waits (the gateway's requests) in, instead of after both.
  if (store.kind === 'sqlite') await new Promise((r) => setImmediate(r));
  const byMethod = await base().select(['method as key', ...sums]).groupBy('method').execute();
  return [byDay, byMethod];
}

function totals(rows: readonly { key: string; requests: number; credits: number }[]): Map<string, { requests: number; credits: number }> {
  return new Map(rows.map((r) => [r.key, { requests: Number(r.requests), credits: Number(r.credits) }]));
}

/** Requests and credits of the account in a calendar month (`YYYY-MM`), all sources. */
export async function monthTotals(store: Store, accountId: number, period: string): Promise<{ requests: number; credits: number }> {
  const days = Array.from({ length: 31 }, (_, i) => `${period}-${String(i + 1).padStart(2, '0')}`);
  const row = await store.db.selectFrom('usage_account_daily')
    .select([sql<number>`coalesce(sum(requests), 0)`.as('requests'), sql<number>`coalesce(sum(credits), 0)`.as('credits')])
    .where('day', 'in', days)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  return { requests: Number(row?.requests ?? 0), credits: Number(row?.credits ?? 0) };
}
