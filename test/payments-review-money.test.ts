import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PaymentEngine } from '../src/payments/engine.js';
import type { OrderRow } from '../src/payments/orders.js';
import { sightings } from '../src/payments/sightings.js';
import type { TipWatcher } from '../src/payments/tip.js';
import { startFakeEvmChain, type FakeEvm } from './helpers/fake-evm.js';
import { startTestService, type Merchant, type TestService } from './helpers/service.js';

/*
 * An independent review of the payments core after the split (issue 32): the paths where one
 * transfer could pay two orders, or a watch be lost or kept, driven step by step on the store
 * (the service's own engine stopped, so nothing races the test).
 */

let chain: FakeEvm;
let t: TestService;
let m: Merchant;
let engine: PaymentEngine;

beforeAll(async () => {
  chain = await startFakeEvmChain();
  chain.mine();
  t = await startTestService({
    networks: [{ slug: 'fake', name: 'Fake', family: 'evm', environments: [{ slug: 'local', upstreams: [chain.url], confirmations: 3, finality_depth: 1000 }] }],
  });
  m = await t.merchant({ plan: 'pro' });
  await t.service.payments.engine.stop();
  engine = new PaymentEngine({
    store: t.store, config: t.service.config,
    aml: { name: 'test', screen: async () => ({ provider: 'test', score: 10, risk_level: 'low', details: [], report_url: null, checked_at: new Date().toISOString() }) } as never,
    watches: { added() {}, removed() {} }, log: () => {}, onDeliveries() {}, tickMs: 60_000, amlLeaseMs: 1000,
  });
}, 60_000);
afterAll(async () => {
  await engine?.stop();
  await t?.stop();
  await chain?.close();
});

async function order(paymentId: string): Promise<OrderRow> {
  return t.store.db.selectFrom('payment_orders').selectAll().where('payment_id', '=', paymentId).executeTakeFirstOrThrow();
}

async function create(orderId: string, address: string): Promise<OrderRow> {
  const res = await m.call('POST', '/v1/payments', JSON.stringify({ network_slug: 'fake', order_id: orderId, amount: '1', address }));
  expect(res.status).toBe(200);
  return order(res.body.payment.payment_id);
}

let eventAt = Date.now() + 60_000;
/** A confirmed transfer of `amount` to the order's watch, recorded as the scanner would. */
async function pay(o: OrderRow, tx: string, height: number, amount = o.amount_raw): Promise<number> {
  eventAt += 1000;
  const hash = `0x${height.toString(16).padStart(64, '0')}`;
  const r = await t.store.db.insertInto('watch_events').values({
    account_id: o.account_id, watch_id: o.watch_id, network_environment_id: o.network_environment_id, network: o.network, type: 'payment',
    block_height: height, block_hash: hash, removed: 0, created_at: new Date(eventAt).toISOString(),
    body: JSON.stringify({ watch_id: o.watch_id, network: o.network, address: o.address, tx_hash: tx, block_height: height, type: 'payment', direction: 'in', block_hash: hash, from: `0x${'51'.repeat(20)}`, to: o.address, token: null, amount, log_index: null }),
    tx_hash: tx, direction: 'in', address: o.address, from_address: `0x${'51'.repeat(20)}`, to_address: o.address, token: null, amount, log_index: null,
  }).returning('id').executeTakeFirstOrThrow();
  return r.id;
}

async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) {
    const n = (await engine.step(eventAt)) + (await engine.screenDue(eventAt));
    if (n === 0) return;
  }
}

describe('one transfer pays one order', () => {
  it('a paid order\'s transfer that a reorg took off and the chain mined again is not counted by a newer order on the same address', async () => {
    const address = `0x${'a1'.repeat(20)}`;
    const a = await create('remine-a', address);
    const tx = `0x${'e1'.repeat(32)}`;
    const first = await pay(a, tx, 7);
    await settle();
    expect((await order(a.payment_id)).status).toBe('paid');
    // The address is free again: a second order on it (a given address reused), same watch.
    const b = await create('remine-b', address);
    expect(b.watch_id).toBe(a.watch_id);
    // The reorg takes the block off; the chain mines the same transaction again.
    await t.store.db.updateTable('watch_events').set({ removed: 1 }).where('id', '=', first).execute();
    await settle();
    await pay(a, tx, 8);
    await settle();
    const [after, other] = [await order(a.payment_id), await order(b.payment_id)];
    expect(after.status).toBe('paid');
    // The customer of the first order paid once: the second order has received nothing.
    expect({ status: other.status, received: other.received_raw }).toEqual({ status: 'pending', received: '0' });
  }, 60_000);

  it('nor is it seen on the newer order when the chain mines it again in a block not yet confirmed', async () => {
    const address = `0x${'a5'.repeat(20)}`;
    const a = await create('unconfirmed-a', address);
    const tx = `0x${'e5'.repeat(32)}`;
    const first = await pay(a, tx, 11);
    await settle();
    expect((await order(a.payment_id)).status).toBe('paid');
    const b = await create('unconfirmed-b', address);
    await t.store.db.updateTable('watch_events').set({ removed: 1 }).where('id', '=', first).execute();
    await settle();
    // The look at the unconfirmed blocks finds the transaction again, on the address B listens to.
    const tip = { hits: async () => ({ hits: [{ envId: b.network_environment_id, watchId: b.watch_id, txHash: tx, token: null, amount: b.amount_raw }], present: undefined }) } as unknown as TipWatcher;
    const deps = {
      store: t.store, config: t.service.config, aml: undefined as never, watches: { added() {}, removed() {} }, log: () => {},
      onDeliveries() {}, kick() {}, amlLeaseMs: 1000,
    };
    await sightings(deps, tip, eventAt);
    expect((await order(b.payment_id)).status).toBe('pending');
  }, 60_000);
});

/*
 * A rolling upgrade (migration 0029): an instance of the previous release reads and writes
 * `payment_orders.owns_watch` as the holder, and adds an order's watch without `holder` (the
 * column's default, the merchant's). What it wrote is made here on the store, as it would.
 */
describe('beside an instance of the previous release', () => {
  const watchRow = (id: string) => t.store.db.selectFrom('watched_addresses').selectAll().where('watch_id', '=', id).executeTakeFirst();

  it('an order\'s watch the previous release added (no holder) goes when the order is canceled', async () => {
    const a = await create('old-made', `0x${'a2'.repeat(20)}`);
    // As the previous release inserts it: the new columns at their defaults, the order owning it.
    await t.store.db.updateTable('watched_addresses').set({ holder: 'merchant', order_open: 0, order_held: 0 }).where('watch_id', '=', a.watch_id).execute();
    expect(a.owns_watch).toBe(1);
    const res = await m.call('POST', `/v1/payments/${a.payment_id}/cancel`);
    expect(res.status).toBe(200);
    expect(await watchRow(a.watch_id)).toBeUndefined();
  }, 60_000);

  it('a merchant watching an order\'s address takes owns_watch off the order, so the previous release never removes the merchant\'s watch', async () => {
    const address = `0x${'a3'.repeat(20)}`;
    const a = await create('claimed', address);
    expect(a.owns_watch).toBe(1);
    const w = await m.call('POST', '/v1/address-watch/addresses', JSON.stringify({ network_slug: 'fake', address }));
    expect(w.status).toBe(200);
    expect(w.body.watch.watch_id).toBe(a.watch_id);
    expect((await order(a.payment_id)).owns_watch).toBe(0);
    // And this release, canceling the order, keeps the merchant's watch (the order no longer says it owns it).
    expect((await m.call('POST', `/v1/payments/${a.payment_id}/cancel`)).status).toBe(200);
    expect((await watchRow(a.watch_id))?.holder).toBe('merchant');
  }, 60_000);

  it('a merchant letting go of a watch a paid order holds until final gives owns_watch to that order, so the previous release removes it when final', async () => {
    const address = `0x${'a4'.repeat(20)}`;
    const w = await m.call('POST', '/v1/address-watch/addresses', JSON.stringify({ network_slug: 'fake', address }));
    expect(w.status).toBe(200);
    const a = await create('let-go', address);
    expect(a.owns_watch).toBe(0);
    await pay(a, `0x${'e4'.repeat(32)}`, 9);
    await settle();
    expect((await order(a.payment_id)).status).toBe('paid');
    const del = await m.call('DELETE', '/v1/address-watch/addresses', JSON.stringify({ watch_id: a.watch_id }));
    expect(del.status).toBe(200);
    expect((await watchRow(a.watch_id))?.holder).toBe('order');
    expect((await order(a.payment_id)).owns_watch).toBe(1);
  }, 60_000);
});
