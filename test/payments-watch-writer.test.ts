import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Store } from '../src/store/index.js';
import { startAddressWatch, type AddressWatch } from '../src/watch/service.js';
import { startTestService, storeUrlOf, type Merchant, type TestService } from './helpers/service.js';
import { testDatabaseUrl } from './helpers/shared-stores.js';
import { itUnless } from './helpers/skips.js';

/**
 * A payment order's watched address is written through Address Watch's writers (issue 21):
 * the instance that creates or releases it knows at once, and on PostgreSQL every other
 * instance hears of it by the store's notification, as it does of an address watched
 * through the API. The upstream is dead: nothing is scanned, only the watch sets are read.
 */
const onSqlite = 'RPCCTL_TEST_DATABASE_URL is not set: on SQLite there is one instance by design, and no other one to tell';
if (!testDatabaseUrl) console.warn(`payments-watch-writer: the other-instance test is skipped: ${onSqlite}`);
const json = (o: unknown) => JSON.stringify(o);
const address = (n: number) => `0x${n.toString(16).padStart(40, '0')}`;
const later = (o: { expires_at: string }) => Date.parse(o.expires_at) + 3 * 86_400_000;

let t: TestService;
let m: Merchant;
let envId: number;

beforeAll(async () => {
  t = await startTestService({
    networks: [{ slug: 'eth', name: 'Ethereum', family: 'evm', environments: [{ slug: 'mainnet', upstreams: ['http://127.0.0.1:1'] }] }],
    plans: [{ id: 1, slug: 'pro', name: 'Pro', included_credits: 1_000_000, rps_limit: 100, endpoints_limit: 5, webhook_address_slots: 3 }],
    // The engine is stepped by the tests.
    payments: { tick_ms: 60_000 },
  }, { watch: { pollMs: 100 } });
  m = await t.merchant({ plan: 'pro' });
  envId = t.store.catalog.environmentBySlug('eth')!.id;
});
afterAll(async () => {
  await t?.stop();
});

let n = 0x5000;
async function order(): Promise<{ payment_id: string; address: string; watch_id: string; expires_at: string }> {
  const r = await m.call('POST', '/v1/payments', json({ order_id: `w-${n}`, network_slug: 'eth', amount: '1', address: address(n++) }));
  expect(r.status, json(r.body)).toBe(200);
  return r.body.payment;
}
const watchedBy = (w: AddressWatch, o: { address: string }) => w.registry.lookup(envId, o.address.toLowerCase())?.map((r) => r.watchId) ?? [];

async function until(check: () => boolean, ms = 5000): Promise<boolean> {
  for (const deadline = Date.now() + ms; !check() && Date.now() < deadline;) await new Promise((r) => setTimeout(r, 20));
  return check();
}

describe('payment orders watch their addresses through Address Watch', () => {
  it('an order\'s watch is matched by this instance at once and let go when the order is canceled or its late window ends', async () => {
    const here = t.service.addressWatch;
    const canceled = await order();
    const expired = await order();
    expect(watchedBy(here, canceled)).toEqual([canceled.watch_id]);
    expect(watchedBy(here, expired)).toEqual([expired.watch_id]);
    expect(here.scannedEnvIds()).toContain(envId);

    expect((await m.call('POST', `/v1/payments/${canceled.payment_id}/cancel`)).status).toBe(200);
    expect(watchedBy(here, canceled)).toEqual([]);
    await t.service.payments.engine.step(later(expired));
    expect((await m.call('GET', `/v1/payments/${expired.payment_id}`)).body.payment.status).toBe('expired');
    expect(watchedBy(here, expired)).toEqual([]);
  });

  it('and the slot it takes is counted with the Address Watch API\'s under one limit', async () => {
    const pro = t.store.catalog.planBySlug('pro')!;
    const slots = pro.webhook_address_slots;
    const other = await t.merchant({ plan: 'pro' });
    const add = (i: number) => other.call('POST', '/v1/address-watch/addresses', json({ network_slug: 'eth', address: address(0x9000 + i) }));
    for (let i = 0; i < slots - 1; i++) expect((await add(i)).status).toBe(200);
    const last = await other.call('POST', '/v1/payments', json({ order_id: 'last-slot', network_slug: 'eth', amount: '1', address: address(0x8fff) }));
    expect(last.status, json(last.body)).toBe(200);
    const over = await other.call('POST', '/v1/payments', json({ order_id: 'over', network_slug: 'eth', amount: '1', address: address(0x8ffe) }));
    expect(over.status).toBe(400);
    expect(over.body.error).toMatch(/Watched address limit reached: the .* plan allows \d+ \(webhook_address_slots\)/);
    expect((await add(slots)).body.error).toMatch(/Watched address limit reached/);
  });

  itUnless(!testDatabaseUrl && 'set RPCCTL_TEST_DATABASE_URL', 'another instance on the same PostgreSQL hears of an order\'s watch and of its release', async () => {
    const store = await Store.open({ dataDir: t.dataDir, config: t.service.config, syncCatalog: 'if-empty', url: storeUrlOf(t.dataDir), env: {} });
    const there = await startAddressWatch({ store, config: t.service.config, log: () => {}, pollMs: 100, webhooks: { kick() {} } });
    try {
      const canceled = await order();
      const expired = await order();
      expect(await until(() => watchedBy(there, canceled).length === 1 && watchedBy(there, expired).length === 1)).toBe(true);
      expect(watchedBy(there, canceled)).toEqual([canceled.watch_id]);
      // It runs a scanner for the network too: it may be the one holding the lease.
      expect(await until(() => there.scannedEnvIds().includes(envId))).toBe(true);

      expect((await m.call('POST', `/v1/payments/${canceled.payment_id}/cancel`)).status).toBe(200);
      expect(await until(() => watchedBy(there, canceled).length === 0)).toBe(true);
      await t.service.payments.engine.step(later(expired));
      expect(await until(() => watchedBy(there, expired).length === 0)).toBe(true);
    } finally {
      await there.stop();
      await store.close();
    }
  });

  it('watched_addresses has one writer: src/watch/watches.ts', () => {
    const src = new URL('../src', import.meta.url).pathname;
    const writes = /(insertInto|deleteFrom|updateTable|replaceInto|mergeInto)\(\s*['"]watched_addresses['"]|(INSERT\s+INTO|DELETE\s+FROM|UPDATE)\s+watched_addresses/i;
    const writers = readdirSync(src, { recursive: true, encoding: 'utf8' })
      // The migrations write the schema (0029 fills the holder columns once), not the watches.
      .filter((f) => f.endsWith('.ts') && f !== 'store/migrations.ts' && writes.test(readFileSync(join(src, f), 'utf8')))
      .map((f) => relative(src, join(src, f)));
    expect(writers).toEqual(['watch/watches.ts']);
  });
});
