import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type Merchant, type TestService } from './helpers/service.js';

/**
 * A rolling upgrade mixes the previous release and this one on one store for as long as the
 * roll takes (docs/operations.md, "Upgrades"). This release's migrations are 0029_watch_holder
 * and 0030_endpoint_names_unique. Here the previous release's own writes (its statements, as
 * 6d15075 ran them: watches without the holder columns, orders that say `owns_watch`,
 * endpoints of any name) run against a store this release migrated, beside a service of this
 * release, on SQLite and, with RPCCTL_TEST_DATABASE_URL, on PostgreSQL. 0032_watch_event_hit_columns
 * comes after: the previous release's events (the body alone) get their hit columns from its trigger.
 */
const json = (o: unknown) => JSON.stringify(o);
const XPUB = 'xpub661MyMwAqRbcFtXgS5sYJABqqG9YLmC4Q1Rdap9gSE8NqtwybGhePY2gZ29ESFjqJoCu1Rupje8YtGqsefD265TMg7usUDFdp6W1EGMcet8';
let t: TestService;
let m: Merchant;
let envId: number;

beforeAll(async () => {
  t = await startTestService({
    networks: [{ slug: 'eth', name: 'Ethereum', family: 'evm', environments: [{ slug: 'mainnet', upstreams: ['http://127.0.0.1:1'] }] }],
    plans: [{ id: 1, slug: 'pro', name: 'Pro', included_credits: 1_000_000, rps_limit: 100, endpoints_limit: 5, webhook_address_slots: 3 }],
    payments: { tick_ms: 60_000 },
  });
  m = await t.merchant({ plan: 'pro' });
  envId = t.store.catalog.environmentBySlug('eth')!.id;
  expect((await m.call('PUT', '/v1/payments/settings', json({ xpubs: { evm: XPUB } }))).status).toBe(200);
});
afterAll(async () => {
  await t?.stop();
});

describe('the previous release beside this one, on a store this one migrated', () => {
  it('0029: a watch the previous release adds (no holder columns) is the merchant\'s, listed, counted and removable here', async () => {
    const address = '0x00000000000000000000000000000000000a0029';
    // addWatchIn of the previous release: these columns and no others.
    await sql`INSERT INTO watched_addresses (watch_id, account_id, network_environment_id, network_slug, address, address_key, created_at, start_height)
      VALUES ('w_previous_release', ${m.userId}, ${envId}, 'eth', ${address}, ${address}, ${new Date().toISOString()}, 0)`.execute(t.store.db);
    const row = await t.store.db.selectFrom('watched_addresses').selectAll().where('watch_id', '=', 'w_previous_release').executeTakeFirstOrThrow();
    expect([row.holder, row.order_open, row.order_held]).toEqual(['merchant', 0, 0]);
    // This release reads it as the merchant's watch: listed, and it takes a slot.
    const listed = (await m.call('GET', '/v1/address-watch/addresses?network=eth')).body.addresses as Array<{ watch_id: string }>;
    expect(listed.map((a) => a.watch_id)).toContain('w_previous_release');
    expect((await m.call('GET', '/v1/address-watch/account')).body.slots_used).toBe(1);
    expect((await m.call('DELETE', '/v1/address-watch/addresses', json({ watch_id: 'w_previous_release' }))).status).toBe(200);
    expect((await m.call('GET', '/v1/address-watch/account')).body.slots_used).toBe(0);
  });

  it('0029: an order this release creates still says owns_watch, which the previous release reads to decide who holds the watch', async () => {
    const order = (await m.call('POST', '/v1/payments', json({ order_id: 'roll-1', network_slug: 'eth', amount: '1' }))).body.payment;
    const row = await t.store.db.selectFrom('payment_orders').select(['owns_watch', 'watch_id']).where('payment_id', '=', order.payment_id).executeTakeFirstOrThrow();
    expect(row.owns_watch).toBe(1);
    const watch = await t.store.db.selectFrom('watched_addresses').select(['holder', 'order_open']).where('watch_id', '=', row.watch_id).executeTakeFirstOrThrow();
    expect([watch.holder, watch.order_open]).toEqual(['order', 1]);
  });

  it('0030: the previous release creates endpoints of new names as before; a name taken in the account is refused by the index (its create fails) and is never stored twice', async () => {
    const insert = (name: string) => sql`INSERT INTO endpoints (uuid, account_id, name, status, network_environment_id, allowed_ips, created_at, updated_at)
      VALUES (${crypto.randomUUID()}, ${m.userId}, ${name}, 'active', ${envId}, '[]', ${new Date().toISOString()}, ${new Date().toISOString()})`.execute(t.store.db);
    await insert('from-the-previous-release');
    const names = ((await m.call('GET', '/v1/endpoints')).body.endpoints as Array<{ name: string }>).map((e) => e.name);
    expect(names).toContain('from-the-previous-release');
    await expect(insert('from-the-previous-release')).rejects.toThrow(/unique|duplicate/i);
    const count = await t.store.db.selectFrom('endpoints').select((eb) => eb.fn.countAll<number>().as('n'))
      .where('account_id', '=', m.userId).where('name', '=', 'from-the-previous-release').executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(1);
  });
  it('0032: a payment event the previous release records (the body alone, no hit columns) is funded here as any other', async () => {
    const order = (await m.call('POST', '/v1/payments', json({ order_id: 'roll-0032', network_slug: 'eth', amount: '0.5' }))).body.payment;
    const row = await t.store.db.selectFrom('payment_orders').selectAll().where('payment_id', '=', order.payment_id).executeTakeFirstOrThrow();
    const tx = `0x${'32'.repeat(32)}`;
    const body = JSON.stringify({
      watch_id: row.watch_id, network: 'eth', address: row.address, tx_hash: tx, block_height: 32, type: 'payment', direction: 'in',
      block_hash: '0x32', from: `0x${'51'.repeat(20)}`, to: row.address, token: null, amount: row.amount_raw, log_index: null,
    });
    // insertEvent of the previous release: these columns and no others.
    await sql`INSERT INTO watch_events (account_id, watch_id, network_environment_id, network, type, block_height, block_hash, body, removed, created_at)
      VALUES (${m.userId}, ${row.watch_id}, ${envId}, 'eth', 'payment', 32, '0x32', ${body}, 0, ${new Date(Date.parse(row.created_at) + 1000).toISOString()})`.execute(t.store.db);
    await t.service.payments.engine.step(Date.now());
    const funding = await t.store.db.selectFrom('payment_funding').select(['tx_hash', 'from_address', 'amount_raw', 'counted']).where('order_pk', '=', row.id).execute();
    expect(funding).toEqual([{ tx_hash: tx, from_address: `0x${'51'.repeat(20)}`, amount_raw: row.amount_raw, counted: 1 }]);
    expect((await m.call('GET', `/v1/payments/${order.payment_id}`)).body.payment.amount_received).toBe('0.5');
  });
});
