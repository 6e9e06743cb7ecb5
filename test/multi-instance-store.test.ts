import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config/index.js';
import { Kysely } from 'kysely';
import pg from 'pg';
import { addUsage, CHANNELS, createAccount, insertEndpointChecked, notifyIn, Store, usageReport } from '../src/store/index.js';
import { openPostgres } from '../src/store/dialect.js';
import { Notifications } from '../src/store/notify.js';
import { freshSchema, reachable, testDatabaseUrl, type TestSchema } from './helpers/shared-stores.js';
import { startReceiver } from './helpers/receiver.js';
import { enqueueDelivery } from '../src/webhooks/outbox.js';
import { putWebhook } from '../src/webhooks/config.js';
import { DEFAULT_FILTERS } from '../src/webhooks/filters.js';
import { DeliveryWorker } from '../src/webhooks/worker.js';
import { watchFacts } from '../src/watch/facts.js';
import { EndpointRegistry } from '../src/gateway/registry.js';
import { setAccountPlan, updateEndpointRow } from '../src/store/index.js';
import { describeUnless } from './helpers/skips.js';
import { parseSanctionsList, replaceSanctions, sanctionsCount } from '../src/payments/aml/sanctions.js';

const why = !testDatabaseUrl ? 'RPCCTL_TEST_DATABASE_URL is not set (e.g. postgres://postgres@127.0.0.1:5432/test)'
  : !(await reachable(testDatabaseUrl)) ? `no PostgreSQL answers at ${testDatabaseUrl}` : undefined;

const config = parseConfig({ webhooks: { allow_private_urls: true, timeout_ms: 1000 } });
const masterKey = 'ab'.repeat(32);

describeUnless(why, 'several instances on one PostgreSQL', () => {
  let schema: TestSchema;
  let stores: Store[] = [];
  beforeAll(async () => {
    schema = await freshSchema();
    // Three instances starting together on an empty database: one migrates, the others wait.
    stores = await Promise.all([0, 1, 2].map(() => Store.open({
      dataDir: mkdtempSync(join(tmpdir(), 'rpcctl-mi-')), config, syncCatalog: 'always',
      env: { RPCCTL_MASTER_KEY: masterKey }, url: schema.url,
    })));
  });
  afterAll(async () => {
    await Promise.all(stores.map((s) => s.close()));
    await schema?.drop();
  });

  it('migrate once and see one catalog', async () => {
    const applied = await stores[0]!.db.selectFrom('kysely_migration' as never).select('name' as never).execute();
    expect(applied.length).toBeGreaterThan(0);
    expect(new Set(applied.map((r) => (r as { name: string }).name)).size).toBe(applied.length);
    for (const s of stores) expect(s.catalog.plans.map((p) => p.slug)).toEqual(stores[0]!.catalog.plans.map((p) => p.slug));
  });

  it('instances loading the sanctions list at once all succeed and leave one copy of it', async () => {
    const list = parseSanctionsList(`ETH 0x8589427373D6D84E98730D7795D8f6f8731FDA16\nXBT 12QtD5BFwRsdNsAZY76UVE1xyCGNTojH9h`);
    const loads = await Promise.all(stores.map((s) => replaceSanctions(s.db, list, 'together')));
    expect(loads).toEqual([2, 2, 2]);
    expect(await sanctionsCount(stores[0]!.db)).toBe(2);
  });

  it('usage flushed by every instance for the same endpoint/day/method adds up, nothing lost or doubled', async () => {
    const account = await createAccount(stores[0]!, { planId: stores[0]!.catalog.plans[0]!.id });
    const day = new Date().toISOString().slice(0, 10);
    const delta = (n: number) => [{ account_id: account.id, endpoint_id: 7, day, method: 'eth_call', requests: n, credits: n * 20 }];
    await Promise.all(Array.from({ length: 30 }, (_, i) => addUsage(stores[i % 3]!, delta(i + 1))));
    // A batch kept after a failed flush may hold one row twice.
    await addUsage(stores[2]!, [...delta(5), ...delta(6)]);
    const report = await usageReport(stores[1]!, { kind: 'account', accountId: account.id }, 1);
    expect(report.total_requests).toBe((30 * 31) / 2 + 11);
    expect(report.total_credits).toBe(20 * ((30 * 31) / 2 + 11));
  });

  it('an account limit checked in one instance holds against creates through the others', async () => {
    const account = await createAccount(stores[0]!, { planId: stores[0]!.catalog.plans[0]!.id });
    const envId = stores[0]!.catalog.networks[0]!.environments[0]!.id;
    const results = await Promise.allSettled(Array.from({ length: 9 }, (_, i) => insertEndpointChecked(stores[i % 3]!, { accountId: account.id, name: `e${i}`, environmentId: envId }, (existing) => {
      if (existing.length >= 4) throw new Error('limit');
    })));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(4);
  });

  it('an instance started with another master key refuses to start, saying why', async () => {
    await expect(Store.open({
      dataDir: mkdtempSync(join(tmpdir(), 'rpcctl-mi-')), config, syncCatalog: 'if-empty', env: { RPCCTL_MASTER_KEY: 'ef'.repeat(32) }, url: schema.url,
    })).rejects.toThrow(/same RPCCTL_MASTER_KEY/);
  });

  it('a secret sealed by one instance opens in another (one master key for all)', async () => {
    const { createApiKey, findActiveKey } = await import('../src/store/index.js');
    const account = await createAccount(stores[0]!, { planId: stores[0]!.catalog.plans[0]!.id });
    const key = await createApiKey(stores[0]!, { accountId: account.id });
    expect((await findActiveKey(stores[2]!, key.api_key))?.secret).toBe(key.secret);
  });

  it('outbox: three workers deliver every delivery exactly once; a delivery written by one instance wakes the others at once; a dead claim is recovered', async () => {
    const rx = await startReceiver();
    const account = await createAccount(stores[0]!, { planId: stores[0]!.catalog.plans[0]!.id });
    await putWebhook(stores[0]!, account.id, { url: rx.url, enabled: true, filters: DEFAULT_FILTERS });
    // A long poll: anything delivered quickly was woken by NOTIFY.
    const workers = stores.map((store) => new DeliveryWorker({ watch: watchFacts, store, config, log: () => {}, pollMs: 60_000, perAccount: 8 }));
    try {
      workers.forEach((w) => w.start());
      await new Promise((r) => setTimeout(r, 300)); // every worker idle, its first look done
      const t0 = Date.now();
      for (let i = 0; i < 60; i++) {
        await enqueueDelivery(stores[i % 3]!.db, { accountId: account.id, eventId: null, webhookId: `wh_${i}`, type: 'payment', network: 'eth', body: `{"n":${i}}`, credits: 1, isTest: false });
      }
      await rx.waitFor((all) => all.length >= 60, 20_000);
      await new Promise((r) => setTimeout(r, 300));
      const ids = rx.received.map((r) => r.headers['x-webhook-id']);
      expect(new Set(ids).size).toBe(60);
      expect(ids).toHaveLength(60);
      expect(Date.now() - t0).toBeLessThan(15_000);
      // Marked delivered once the receiver's answer is recorded, a moment after it arrived.
      const pending = () => stores[0]!.db.selectFrom('webhook_deliveries').select('id').where('account_id', '=', account.id).where('status', '!=', 'delivered').execute();
      const deadline = Date.now() + 10_000;
      while ((await pending()).length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      expect(await pending()).toEqual([]);

      // One delivery written while every worker sleeps its 60 s poll: NOTIFY brings it within a second or two.
      const t1 = Date.now();
      await enqueueDelivery(stores[1]!.db, { accountId: account.id, eventId: null, webhookId: 'wh_wake', type: 'payment', network: 'eth', body: '{}', credits: 1, isTest: false });
      await rx.waitFor((all) => all.some((r) => r.headers['x-webhook-id'] === 'wh_wake'), 5000);
      expect(Date.now() - t1).toBeLessThan(5000);

      // An instance died holding a claim: once its lease runs out another instance sends it.
      await enqueueDelivery(stores[2]!.db, { accountId: account.id, eventId: null, webhookId: 'wh_orphan', type: 'payment', network: 'eth', body: '{}', credits: 1, isTest: false }, Date.now() + 60_000);
      await stores[2]!.db.updateTable('webhook_deliveries').set({ lease_owner: 'dead-instance', lease_until: Date.now() + 500, next_attempt_at: Date.now(), attempts: 1 })
        .where('webhook_id', '=', 'wh_orphan').execute();
      // Nothing wakes the workers for an expiring lease; their poll does. Shorten it for this part.
      workers.forEach((w) => w.kick());
      const w4 = new DeliveryWorker({ watch: watchFacts, store: stores[1]!, config, log: () => {}, pollMs: 200 });
      w4.start();
      try {
        await rx.waitFor((all) => all.some((r) => r.headers['x-webhook-id'] === 'wh_orphan'), 10_000);
      } finally {
        await w4.stop();
      }
      const orphan = await stores[0]!.db.selectFrom('webhook_deliveries').select(['status', 'attempts']).where('webhook_id', '=', 'wh_orphan').executeTakeFirstOrThrow();
      expect(orphan).toEqual({ status: 'delivered', attempts: 2 });
    } finally {
      await Promise.all(workers.map((w) => w.stop()));
      await rx.close();
    }
  });

  it('an endpoint created or paused through one instance reaches the others\' gateways within a second', async () => {
    // A reload period far beyond the test: only the notification (or the 1 s version check) can do it.
    const registries = stores.map((s) => new EndpointRegistry(s, config));
    await Promise.all(registries.map((r) => r.start(600_000)));
    const within = async (ms: number, ok: () => boolean) => {
      const t0 = Date.now();
      while (!ok()) {
        if (Date.now() - t0 > ms) throw new Error(`not within ${ms} ms`);
        await new Promise((r) => setTimeout(r, 20));
      }
      return Date.now() - t0;
    };
    try {
      const small = stores[0]!.catalog.plans[0]!;
      const big = stores[0]!.catalog.plans[stores[0]!.catalog.plans.length - 1]!;
      const account = await createAccount(stores[0]!, { planId: small.id });
      const envId = stores[0]!.catalog.networks[0]!.environments[0]!.id;
      const e = await insertEndpointChecked(stores[0]!, { accountId: account.id, name: 'x', environmentId: envId }, () => {});
      await within(1000, () => registries[1]!.get(e.uuid) !== undefined && registries[2]!.get(e.uuid) !== undefined);
      await updateEndpointRow(stores[0]!, account.id, e.id, { status: 'paused' });
      await within(1000, () => registries[1]!.get(e.uuid)!.paused && registries[2]!.get(e.uuid)!.paused);
      await setAccountPlan(stores[1]!, account.id, big.id);
      await within(1000, () => registries[0]!.get(e.uuid)!.rpsLimit === big.rps_limit && registries[2]!.get(e.uuid)!.rpsLimit === big.rps_limit);
    } finally {
      registries.forEach((r) => r.stop());
    }
  });

  it('notifications stay in their schema: a deployment in another schema of the database hears none of them, its own still arrive', async () => {
    // Channels are the database's: a bare name would carry this schema's ids to the other one.
    const other = await freshSchema(testDatabaseUrl, `_${'long'.repeat(12)}`.slice(0, 49)); // 63 bytes: its channel names are hashed
    const otherStore = await Store.open({ dataDir: mkdtempSync(join(tmpdir(), 'rpcctl-mi-')), config, syncCatalog: 'always', env: { RPCCTL_MASTER_KEY: masterKey }, url: other.url });
    const heard = (n: Notifications) => {
      const got: string[] = [];
      for (const channel of Object.values(CHANNELS)) n.on(channel, (p) => got.push(`${channel} ${p}`));
      return got;
    };
    const here = heard(stores[1]!.notifications);
    const there = heard(otherStore.notifications);
    try {
      expect(Buffer.byteLength(other.schema)).toBe(63);
      await Promise.all([stores[1]!.notifications.listening(), otherStore.notifications.listening()]);
      const all = (from: string) => Object.values(CHANNELS).map((c) => `${c} ${from}`).sort();
      const send = (store: Store, from: string) => store.db.transaction().execute(async (trx) => {
        for (const channel of Object.values(CHANNELS)) await notifyIn(trx, channel, from);
      });
      // A writer's own path too: an endpoint created here announces itself here.
      const account = await createAccount(stores[0]!, { planId: stores[0]!.catalog.plans[0]!.id });
      const e = await insertEndpointChecked(stores[0]!, { accountId: account.id, name: 'scoped', environmentId: stores[0]!.catalog.networks[0]!.environments[0]!.id }, () => {});
      await send(stores[0]!, 'here');
      // PostgreSQL delivers in commit order: once the other schema's own later notifications are
      // in, any of this schema's it were to hear would be in too.
      await send(otherStore, 'there');
      const deadline = Date.now() + 5000;
      while (!(all('here').every((x) => here.includes(x)) && all('there').every((x) => there.includes(x))) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(here).toContain(`${CHANNELS.endpoints} e:${e.id}`);
      expect(here.filter((x) => x.endsWith(' here')).sort()).toEqual(all('here'));
      expect(there.sort()).toEqual(all('there'));
      expect(here.filter((x) => x.endsWith(' there'))).toEqual([]);
    } finally {
      await otherStore.close();
      await other.drop();
    }
  });

  it('the public schema keeps the channel names of the releases before (a default deployment\'s upgrade changes nothing)', async () => {
    const { dialect } = openPostgres(`${testDatabaseUrl!}${testDatabaseUrl!.includes('?') ? '&' : '?'}options=${encodeURIComponent('-c search_path=public')}`);
    const db = new Kysely<never>({ dialect });
    const legacy = new pg.Client({ connectionString: testDatabaseUrl });
    await legacy.connect();
    try {
      const got: string[] = [];
      legacy.on('notification', (n) => got.push(`${n.channel} ${n.payload}`));
      await legacy.query(`LISTEN ${CHANNELS.auth}`);
      const payload = `p${Date.now()}`;
      await notifyIn(db, CHANNELS.auth, payload);
      const deadline = Date.now() + 5000;
      while (!got.includes(`${CHANNELS.auth} ${payload}`) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(got).toContain(`${CHANNELS.auth} ${payload}`);
    } finally {
      await legacy.end();
      await db.destroy();
    }
  });
});
