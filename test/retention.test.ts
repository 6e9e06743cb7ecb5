import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pruneOnce } from '../src/retention/index.js';
import { startTestService, type Merchant, type TestService } from './helpers/service.js';

let t: TestService;
let m: Merchant;
const DAY = 86_400_000;
const iso = (daysAgo: number) => new Date(Date.now() - daysAgo * DAY).toISOString();

beforeAll(async () => {
  t = await startTestService({
    retention: { events_days: 90, deliveries_days: 30, audit_days: 365, batch_size: 2, interval_ms: 200 },
    limits: { webhook_tests_per_minute: 3 },
    webhooks: { allow_private_urls: true, timeout_ms: 500, egress_ips: [] },
    plans: [{ id: 1, slug: 'pro', name: 'Pro', included_credits: 1_000_000, rps_limit: 100, endpoints_limit: 10, webhook_address_slots: 10 }],
  }, { watch: { pollMs: 60_000 } });
  m = await t.merchant();
});
afterAll(() => t.stop());

/** Seeds rows dated `daysAgo` before `nowMs`. */
async function seed(nowMs = Date.now()) {
  const db = t.store.db;
  const iso = (daysAgo: number) => new Date(nowMs - daysAgo * DAY).toISOString();
  const event = (daysAgo: number) => ({
    account_id: m.userId, watch_id: null, network_environment_id: 1, network: 'eth', type: 'payment', block_height: 1,
    block_hash: '0x00', body: '{}', removed: 0, created_at: iso(daysAgo),
  });
  await db.insertInto('watch_events').values([event(120), event(100), event(95), event(10), event(1)]).execute();
  const delivery = (n: number, daysAgo: number, status: string) => ({
    webhook_id: `wh_${n}_${Math.random()}`, account_id: m.userId, event_id: null, type: 'payment', network: 'eth', body: '{}', credits: 0,
    bill_method: 'x', is_test: 1, status, attempts: 1, next_attempt_at: Date.now() + DAY, lease_owner: null, lease_until: null,
    last_status_code: 200, last_error: null, created_at: iso(daysAgo), delivered_at: null,
  });
  const entry = (daysAgo: number) => ({
    account_id: m.userId, created_at: iso(daysAgo), actor_kind: 'admin', actor_id: 'admin', actor_label: 'rpcctl admin',
    action: 'endpoint.rename', target_type: 'endpoint', target_id: '1', changes: null, ip: null,
  });
  await db.insertInto('audit_log').values([entry(400), entry(380), entry(366), entry(300)]).execute();
  const ids: number[] = [];
  for (const [i, [days, status]] of ([[40, 'delivered'], [35, 'failed'], [31, 'delivered'], [40, 'pending'], [5, 'delivered']] as const).entries()) {
    const r = await db.insertInto('webhook_deliveries').values(delivery(i, days, status)).returning('id').executeTakeFirstOrThrow();
    ids.push(r.id);
    await db.insertInto('webhook_attempts').values([1, 2].map((attempt) => ({
      delivery_id: r.id, attempt, started_at: iso(days), status_code: 500, duration_ms: 5, error: null, next_retry_at: null,
    }))).execute();
  }
  return ids;
}

describe('retention', () => {
  it('deletes old events, finished deliveries with their attempts and old audit entries, in small batches; pending ones stay', async () => {
    // Dated against a clock 1000 days ahead: the service's own pruner, running every 200 ms
    // against today, finds nothing of these due and cannot take part of the count.
    const ahead = Date.now() + 1000 * DAY;
    const ids = await seed(ahead);
    // Batches of 2: one run deletes everything that is due (several batches), nothing else.
    const r = await pruneOnce(t.store, { eventsDays: 90, deliveriesDays: 30, auditDays: 365, batchSize: 2 }, ahead);
    expect(r).toEqual({ events: 3, deliveries: 3, attempts: 6, audit: 3 });
    const audit = await t.store.db.selectFrom('audit_log').select('created_at').where('account_id', '=', m.userId).execute();
    expect(audit).toHaveLength(1);
    const events = await t.store.db.selectFrom('watch_events').select('created_at').where('account_id', '=', m.userId).execute();
    expect(events).toHaveLength(2);
    const left = await t.store.db.selectFrom('webhook_deliveries').select(['id', 'status']).where('account_id', '=', m.userId).orderBy('id').execute();
    expect(left.map((d) => d.id)).toEqual([ids[3], ids[4]]);
    const attempts = await t.store.db.selectFrom('webhook_attempts').select('delivery_id').where('delivery_id', 'in', ids).execute();
    expect(new Set(attempts.map((a) => a.delivery_id))).toEqual(new Set([ids[3], ids[4]]));
    expect(await pruneOnce(t.store, { eventsDays: 90, deliveriesDays: 30, auditDays: 365, batchSize: 2 }, ahead)).toEqual({ events: 0, deliveries: 0, attempts: 0, audit: 0 });
  });

  it('runs on its own in serve, from config', async () => {
    await seed();
    for (let i = 0; i < 50; i++) {
      const old = await t.store.db.selectFrom('watch_events').select('id').where('created_at', '<', iso(90)).execute();
      if (old.length === 0) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(await t.store.db.selectFrom('watch_events').select('id').where('created_at', '<', iso(90)).execute()).toEqual([]);
    expect(await t.store.db.selectFrom('webhook_deliveries').select('id').where('created_at', '<', iso(30)).where('status', '!=', 'pending').execute()).toEqual([]);
    for (let i = 0; i < 50; i++) {
      if ((await t.store.db.selectFrom('audit_log').select('id').where('created_at', '<', iso(365)).execute()).length === 0) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(await t.store.db.selectFrom('audit_log').select('id').where('created_at', '<', iso(365)).execute()).toEqual([]);
  });

  it('the events feed and the deliveries list say how far back they go', async () => {
    expect((await m.call('GET', '/v1/address-watch/events')).body.retention_days).toBe(90);
    expect((await m.call('GET', '/v1/address-watch/deliveries')).body.retention_days).toBe(30);
    expect((await m.call('GET', '/v1/account/audit')).body.retention_days).toBe(365);
  });

  it('webhook test sends are limited per account', async () => {
    expect((await m.call('PUT', '/v1/address-watch/webhook', JSON.stringify({ url: 'http://127.0.0.1:9/hook', enabled: true }))).status).toBe(200);
    const body = JSON.stringify({ type: 'payment', network: 'eth' });
    // The allowance is per clock minute: start well inside one, or four slow sends can span two.
    const leftOfMinute = 60_000 - (Date.now() % 60_000);
    if (leftOfMinute < 20_000) await new Promise((r) => setTimeout(r, leftOfMinute + 50));
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await m.client.raw('POST', '/v1/address-watch/webhook/test', { body })).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
    const r = await m.client.raw('POST', '/v1/address-watch/webhook/test', { body });
    expect(r.status).toBe(429);
    expect(r.json).toEqual({ ok: false, error: 'Too many test deliveries: at most 3 a minute' });
    expect(Number(r.headers['retry-after'])).toBeGreaterThan(0);
    // Another account has its own allowance.
    const other = await t.merchant();
    await other.call('PUT', '/v1/address-watch/webhook', JSON.stringify({ url: 'http://127.0.0.1:9/hook', enabled: true }));
    expect((await other.call('POST', '/v1/address-watch/webhook/test', body)).status).toBe(200);
  }, 60_000);
});
