import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kysely, Migrator, sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config/index.js';
import { addUsage, createAccount, dayRange, monthTotals, Store, usageReport, utcDay, type UsageDelta } from '../src/store/index.js';
import { migrationProvider } from '../src/store/migrations.js';
import { openSqlite } from '../src/store/sqlite-dialect.js';
import { openPostgres, PostgresSchemaPlugin } from '../src/store/dialect.js';
import { UsageMeter } from '../src/gateway/meter.js';
import { Metrics } from '../src/metrics/index.js';
import { freshSchema, reachable, testDatabaseUrl, type TestSchema } from './helpers/shared-stores.js';
import { describeUnless } from './helpers/skips.js';

const pgWhy = !testDatabaseUrl ? 'RPCCTL_TEST_DATABASE_URL is not set' : !(await reachable(testDatabaseUrl)) ? `no PostgreSQL answers at ${testDatabaseUrl}` : undefined;

const config = parseConfig({});
const DAY = 86_400_000;
const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => { for (const c of cleanups.reverse()) await c(); });

async function openStore(kind: 'sqlite' | 'postgres'): Promise<Store> {
  const dataDir = mkdtempSync(join(tmpdir(), 'rpcctl-usage-'));
  let schema: TestSchema | undefined;
  if (kind === 'postgres') schema = await freshSchema();
  const store = await Store.open({ dataDir, config, syncCatalog: 'always', env: { RPCCTL_MASTER_KEY: 'cd'.repeat(32) }, url: schema?.url });
  cleanups.push(async () => { await store.close(); await schema?.drop(); rmSync(dataDir, { recursive: true, force: true }); });
  return store;
}

/** What the reports must say, computed from the endpoint rows alone, the way they were read before the roll-ups. */
async function naive(store: Store, accountId: number, days: number, pick: (r: UsageDelta) => boolean) {
  const range = dayRange(days, Date.now());
  const rows = (await store.db.selectFrom('usage_daily').selectAll().where('account_id', '=', accountId).execute())
    .map((r) => ({ ...r, requests: Number(r.requests), credits: Number(r.credits) }))
    .filter((r) => range.includes(r.day) && pick(r));
  const series = range.map((date) => {
    const of = rows.filter((r) => r.day === date);
    return { date, requests: of.reduce((s, r) => s + r.requests, 0), credits: of.reduce((s, r) => s + r.credits, 0) };
  });
  const byMethod = new Map<string, { method: string; requests: number; credits: number }>();
  for (const r of rows) {
    const m = byMethod.get(r.method) ?? { method: r.method, requests: 0, credits: 0 };
    m.requests += r.requests;
    m.credits += r.credits;
    byMethod.set(r.method, m);
  }
  const methods = [...byMethod.values()].sort((a, b) => b.requests - a.requests || b.credits - a.credits || a.method.localeCompare(b.method));
  return {
    days, series, methods,
    total_requests: series.reduce((s, p) => s + p.requests, 0),
    total_credits: series.reduce((s, p) => s + p.credits, 0),
  };
}

async function rollupMismatches(store: Store): Promise<number> {
  const raw = await store.db.selectFrom('usage_daily')
    .select(['day', 'account_id', 'method', sql<number>`sum(requests)`.as('requests'), sql<number>`sum(credits)`.as('credits')])
    .groupBy(['day', 'account_id', 'method']).execute();
  const rolled = await store.db.selectFrom('usage_account_daily').selectAll().execute();
  const key = (r: { day: string; account_id: number; method: string }) => `${r.day}|${Number(r.account_id)}|${r.method}`;
  const want = new Map(raw.map((r) => [key(r), `${Number(r.requests)}/${Number(r.credits)}`]));
  const got = new Map(rolled.map((r) => [key(r), `${Number(r.requests)}/${Number(r.credits)}`]));
  expect(got.size).toBe(want.size);
  let bad = 0;
  for (const [k, v] of want) if (got.get(k) !== v) bad++;
  return bad;
}

/** Fails every insert into the account roll-up of method `boom`: a failure after the endpoint rows were written. */
async function injectFailure(store: Store): Promise<() => Promise<void>> {
  if (store.kind === 'sqlite') {
    await sql`CREATE TRIGGER usage_boom BEFORE INSERT ON usage_account_daily WHEN NEW.method = 'boom' BEGIN SELECT RAISE(ABORT, 'injected failure'); END`.execute(store.db);
    return async () => { await sql`DROP TRIGGER usage_boom`.execute(store.db); };
  }
  await sql.raw(`CREATE FUNCTION usage_boom() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF NEW.method = 'boom' THEN RAISE EXCEPTION 'injected failure'; END IF; RETURN NEW; END $$`).execute(store.db);
  await sql`CREATE TRIGGER usage_boom BEFORE INSERT ON usage_account_daily FOR EACH ROW EXECUTE FUNCTION usage_boom()`.execute(store.db);
  return async () => { await sql`DROP TRIGGER usage_boom ON usage_account_daily`.execute(store.db); };
}

const kinds = [
  { kind: 'sqlite' as const, why: undefined },
  { kind: 'postgres' as const, why: pgWhy },
];

for (const { kind, why } of kinds) {
  describeUnless(why, `usage roll-ups (${kind})`, () => {
    it('the account roll-up equals the sums of the endpoint rows, and every report reads as it did from them', async () => {
      const store = await openStore(kind);
      const plan = store.catalog.plans[0]!.id;
      const a = (await createAccount(store, { planId: plan })).id;
      const b = (await createAccount(store, { planId: plan })).id;
      const methods = ['eth_call', 'eth_getLogs', 'eth_blockNumber', 'webhook:payment'];
      let seed = 7;
      const rnd = (n: number) => { seed = (seed * 1103515245 + 12345) % 2 ** 31; return seed % n; };
      for (let flush = 0; flush < 12; flush++) {
        const deltas: UsageDelta[] = [];
        for (let i = 0; i < 700; i++) {
          const account = rnd(3) === 0 ? b : a;
          const endpoint = rnd(5) === 0 ? 0 : 1 + rnd(40);
          const method = endpoint === 0 ? 'webhook:payment' : methods[rnd(3)]!;
          deltas.push({ account_id: account, endpoint_id: endpoint, day: utcDay(Date.now() - rnd(120) * DAY), method, requests: 1 + rnd(3), credits: rnd(50) });
        }
        await addUsage(store, deltas);
      }
      expect(await rollupMismatches(store)).toBe(0);
      for (const days of [1, 7, 30, 90]) {
        expect(await usageReport(store, { kind: 'account', accountId: a }, days)).toEqual(await naive(store, a, days, () => true));
        expect(await usageReport(store, { kind: 'endpoints', accountId: a }, days)).toEqual(await naive(store, a, days, (r) => r.endpoint_id !== 0));
        expect(await usageReport(store, { kind: 'endpoint', accountId: b, endpointId: 3 }, days)).toEqual(await naive(store, b, days, (r) => r.endpoint_id === 3));
      }
      const period = utcDay(Date.now()).slice(0, 7);
      const month = (await store.db.selectFrom('usage_daily').selectAll().where('account_id', '=', a).execute()).filter((r) => r.day.startsWith(period));
      expect(await monthTotals(store, a, period)).toEqual({
        requests: month.reduce((s, r) => s + Number(r.requests), 0), credits: month.reduce((s, r) => s + Number(r.credits), 0),
      });
    });

    it('a flush across UTC midnight writes each day to its own rows', async () => {
      const store = await openStore(kind);
      const a = (await createAccount(store, { planId: store.catalog.plans[0]!.id })).id;
      const meter = new UsageMeter(store);
      const now = Date.now();
      const midnight = (Math.floor(now / DAY) + 1) * DAY;
      meter.record(5, a, 'eth_call', 10, 1, now);
      meter.record(5, a, 'eth_call', 10, 1, now);
      meter.record(5, a, 'eth_call', 7, 1, midnight + 1);
      meter.record(6, a, 'eth_getLogs', 3, 1, midnight + 2);
      // Counted by a gateway worker before midnight and handed over after it: still that day.
      meter.record(5, a, 'eth_call', 5, 1, midnight - DAY);
      await meter.flush();
      const rows = await store.db.selectFrom('usage_account_daily').selectAll().where('account_id', '=', a).orderBy('day').orderBy('method').execute();
      expect(rows.map((r) => [r.day, r.method, Number(r.requests), Number(r.credits)])).toEqual([
        [utcDay(now), 'eth_call', 3, 25],
        [utcDay(midnight), 'eth_call', 1, 7],
        [utcDay(midnight), 'eth_getLogs', 1, 3],
      ]);
      expect(await rollupMismatches(store)).toBe(0);
    });

    it('while the store refuses, kept usage merges per row and stays under its bound; past it new rows are dropped and counted; the rest is written exactly once it is back', async () => {
      const store = await openStore(kind);
      const a = (await createAccount(store, { planId: store.catalog.plans[0]!.id })).id;
      const metrics = new Metrics({ processMetrics: false });
      const meter = new UsageMeter(store, () => {}, { maxPendingRows: 3 });
      meter.observe(metrics);
      const gauge = async (name: string) => (await metrics.registry.getSingleMetric(name)!.get()).values[0]?.value ?? 0;
      const heal = await injectFailure(store);
      // Ten failed flushes of the same three rows: still three rows kept, not thirty.
      for (let i = 0; i < 10; i++) {
        meter.record(1, a, 'eth_call', 2, 1);
        meter.record(1, a, 'eth_getLogs', 3, 1);
        meter.record(1, a, 'boom', 1, 1);
        await meter.flush();
      }
      expect(await gauge('rpcctl_usage_pending_rows')).toBe(3);
      meter.record(2, a, 'eth_call', 5, 4); // a fourth row: over the bound
      await meter.flush();
      expect(meter.dropped).toEqual({ rows: 1, requests: 4, credits: 5 });
      expect(await gauge('rpcctl_usage_dropped_requests_total')).toBe(4);
      expect(await gauge('rpcctl_usage_pending_rows')).toBe(3);

      await heal();
      await meter.flush();
      expect(await gauge('rpcctl_usage_pending_rows')).toBe(0);
      const rows = await store.db.selectFrom('usage_daily').select(['endpoint_id', 'method', 'requests', 'credits']).where('account_id', '=', a).orderBy('method').execute();
      expect(rows.map((r) => [r.endpoint_id, r.method, Number(r.requests), Number(r.credits)])).toEqual([
        [1, 'boom', 10, 10], [1, 'eth_call', 10, 20], [1, 'eth_getLogs', 10, 30],
      ]);
      expect(await rollupMismatches(store)).toBe(0);
    });

    it('a flush of many counters is one transaction: a failure half-way writes nothing, and the meter writes it all on retry', async () => {
      const store = await openStore(kind);
      const a = (await createAccount(store, { planId: store.catalog.plans[0]!.id })).id;
      const day = utcDay(Date.now());
      await addUsage(store, [{ account_id: a, endpoint_id: 1, day, method: 'eth_call', requests: 1, credits: 1 }]);
      const before = async () => (await store.db.selectFrom('usage_daily').select([sql<number>`count(*)`.as('n'), sql<number>`sum(requests)`.as('r')]).executeTakeFirstOrThrow());

      // A row no store accepts, sorted last: the chunks before it are written, then rolled back.
      const bad = Array.from({ length: 1500 }, (_, i): UsageDelta => ({ account_id: a, endpoint_id: 2 + i, day, method: 'eth_call', requests: 1, credits: 1 }));
      bad.push({ account_id: a, endpoint_id: 9999, day: '9999-12-31', method: null as unknown as string, requests: 1, credits: 1 });
      await expect(addUsage(store, bad)).rejects.toThrow();
      expect(Number((await before()).n)).toBe(1);

      const lines: string[] = [];
      const meter = new UsageMeter(store, (l) => lines.push(l));
      for (let e = 0; e < 3000; e++) meter.record(100 + e, a, e % 2 ? 'eth_call' : 'eth_getLogs', 2, 1);
      meter.record(1, a, 'boom', 5, 1);
      const heal = await injectFailure(store);
      await meter.flush();
      expect(lines.join('\n')).toMatch(/usage flush failed, counts kept/);
      expect(Number((await before()).n)).toBe(1);
      expect(await store.db.selectFrom('usage_account_daily').select('method').where('method', '=', 'eth_getLogs').execute()).toEqual([]);

      await heal();
      meter.record(1, a, 'boom', 5, 1);
      await meter.flush();
      expect(lines.join('\n')).toMatch(/usage flush works again/);
      const after = await before();
      expect(Number(after.n)).toBe(1 + 3000 + 1);
      expect(Number(after.r)).toBe(1 + 3000 + 2);
      expect(await rollupMismatches(store)).toBe(0);
      const report = await usageReport(store, { kind: 'account', accountId: a }, 1);
      expect(report.total_requests).toBe(1 + 3000 + 2);
    });

    it('migration 0018 carries existing usage over and builds the roll-up from it', async () => {
      let db: Kysely<any>;
      if (kind === 'sqlite') {
        const dir = mkdtempSync(join(tmpdir(), 'rpcctl-usage-mig-'));
        db = new Kysely({ dialect: openSqlite(join(dir, 'rpcctl.db')).dialect });
        cleanups.push(async () => { await db.destroy(); rmSync(dir, { recursive: true, force: true }); });
      } else {
        const schema = await freshSchema();
        db = new Kysely({ dialect: openPostgres(schema.url).dialect, plugins: [new PostgresSchemaPlugin()] });
        cleanups.push(async () => { await db.destroy(); await schema.drop(); });
      }
      const migrationTableSchema = kind === 'postgres' ? (await sql<{ s: string }>`select current_schema() as s`.execute(db)).rows[0]!.s : undefined;
      const migrator = new Migrator({ db, provider: migrationProvider, migrationTableSchema });
      expect((await migrator.migrateTo('0017_utxo_address_format')).error).toBeUndefined();
      const old = [
        { account_id: 1, endpoint_id: 1, day: '2026-01-01', method: 'eth_call', requests: 3, credits: 30 },
        { account_id: 1, endpoint_id: 2, day: '2026-01-01', method: 'eth_call', requests: 4, credits: 40 },
        { account_id: 1, endpoint_id: 0, day: '2026-01-01', method: 'webhook:payment', requests: 1, credits: 5 },
        { account_id: 1, endpoint_id: 1, day: '2026-01-02', method: 'eth_getLogs', requests: 2, credits: 150 },
        { account_id: 2, endpoint_id: 3, day: '2026-01-01', method: 'eth_call', requests: 9, credits: 90 },
      ];
      await db.insertInto('usage_daily').values(old).execute();
      expect((await migrator.migrateToLatest()).error).toBeUndefined();
      const kept = await db.selectFrom('usage_daily').selectAll().orderBy('account_id').orderBy('day').orderBy('endpoint_id').execute();
      expect(kept.map((r) => ({ ...r, account_id: Number(r.account_id), endpoint_id: Number(r.endpoint_id), requests: Number(r.requests), credits: Number(r.credits) })))
        .toEqual([old[2], old[0], old[1], old[3], old[4]]);
      const rolled = await db.selectFrom('usage_account_daily').selectAll().orderBy('account_id').orderBy('day').orderBy('method').execute();
      expect(rolled.map((r) => [Number(r.account_id), r.day, r.method, Number(r.requests), Number(r.credits)])).toEqual([
        [1, '2026-01-01', 'eth_call', 7, 70],
        [1, '2026-01-01', 'webhook:payment', 1, 5],
        [1, '2026-01-02', 'eth_getLogs', 2, 150],
        [2, '2026-01-01', 'eth_call', 9, 90],
      ]);
    });
  });
}
