import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeEvmChain, type FakeEvm } from './helpers/fake-evm.js';
import { startTestService, type Merchant, type TestService } from './helpers/service.js';

const XPUB = 'xpub661MyMwAqRbcFtXgS5sYJABqqG9YLmC4Q1Rdap9gSE8NqtwybGhePY2gZ29ESFjqJoCu1Rupje8YtGqsefD265TMg7usUDFdp6W1EGMcet8';
const json = (o: unknown) => JSON.stringify(o);
let chain: FakeEvm;
let t: TestService;
let m: Merchant;

beforeAll(async () => {
  chain = await startFakeEvmChain();
  chain.mine();
  t = await startTestService({
    networks: [{
      slug: 'fake', name: 'Fake', family: 'evm', environments: [{ slug: 'local', upstreams: [chain.url] }],
      tokens: [{ symbol: 'USDX', address: '0x1111111111111111111111111111111111111111', decimals: 6 }],
    }],
    plans: [
      { id: 1, slug: 'free', name: 'Free', included_credits: 1000, rps_limit: 5, endpoints_limit: 1, webhook_address_slots: 0 },
      { id: 2, slug: 'tiny', name: 'Tiny', included_credits: 1000, rps_limit: 5, endpoints_limit: 1, webhook_address_slots: 2 },
      { id: 3, slug: 'pro', name: 'Pro', included_credits: 1000, rps_limit: 5, endpoints_limit: 1, webhook_address_slots: 1000 },
    ],
    webhooks: { allow_private_urls: false },
  });
  m = await t.merchant({ plan: 'pro' });
}, 60_000);
afterAll(async () => {
  await t?.stop();
  await chain?.close();
});

const create = (who: Merchant, body: Record<string, unknown>) => who.call('POST', '/v1/payments', json({ network_slug: 'fake', ...body }));

describe('payments API', () => {
  it('settings: defaults, xpub with its first derived address, validation', async () => {
    const fresh = await t.merchant({ plan: 'pro' });
    expect((await fresh.call('GET', '/v1/payments/settings')).body).toEqual({
      ok: true, xpubs: {}, wallets: {}, aml_fail_at: 'high', underpaid_tolerance_bps: 0, accept_late: false, display_name: null, redirect_url: null, payouts_approval_over: null, derived: {},
    });
    const put = await fresh.call('PUT', '/v1/payments/settings', json({ xpubs: { evm: XPUB }, underpaid_tolerance_bps: 50 }));
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ xpubs: { evm: XPUB }, underpaid_tolerance_bps: 50, derived: { evm: { first_address: expect.stringMatching(/^0x[0-9a-fA-F]{40}$/), next_index: 0 } } });
    const bad = [
      [{ xpubs: { evm: 'xprv9s21ZrQH143K3QTDL4LXw2F7HEK3wJUD2nW2nRk4stbPy6cq3jPPqjiChkVvvNKmPGJxWUtg6LnF5kejMRNNU3TGtRBeJgk33yuGBxrMPHi' } }, /xpubs.evm: .*PRIVATE/],
      [{ aml_fail_at: 'low' }, /aml_fail_at/],
      [{ underpaid_tolerance_bps: 10001 }, /underpaid_tolerance_bps/],
      [{ accept_late: 'yes' }, /accept_late/],
      [{ surprise: 1 }, /surprise/],
    ] as const;
    for (const [body, msg] of bad) {
      const r = await fresh.call('PUT', '/v1/payments/settings', json(body));
      expect(r.status, json(body)).toBe(400);
      expect(r.body.error).toMatch(msg);
    }
  });

  it('validates create bodies, naming the field', async () => {
    await m.call('PUT', '/v1/payments/settings', json({ xpubs: { evm: XPUB } }));
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ order_id: 'a', amount: 1.5 }, /amount.*decimal string/],
      [{ order_id: 'a', amount: '1.1234567', asset: 'USDX' }, /amount: has more than 6 decimal places/],
      [{ order_id: 'a', amount: '0' }, /amount: must be greater than 0/],
      [{ order_id: 'a', amount: '1e3' }, /amount: must be a decimal string/],
      [{ order_id: 'a', amount: '1', asset: 'DOGE' }, /asset: unknown asset "DOGE".*USDX/],
      [{ order_id: 'a', amount: '1', network_slug: 'nope' }, /network_slug: unknown network/],
      [{ order_id: 'a', amount: '1', expires_in: 5 }, /expires_in: must be at least 10/],
      [{ order_id: 'a', amount: '1', expires_in: 604801 }, /expires_in/],
      [{ order_id: 'a', amount: '1', address: '0x123' }, /address: must be a 20-byte hex address/],
      [{ order_id: 'a', amount: '1', webhook_url: 'http://127.0.0.1:9/x' }, /webhook_url: /],
      [{ amount: '1' }, /order_id/],
      [{ order_id: 'has space', amount: '1' }, /order_id/],
    ];
    for (const [body, msg] of cases) {
      const r = await create(m, body);
      expect(r.status, json(body)).toBe(400);
      expect(r.body.error).toMatch(msg);
    }
    expect((await m.call('POST', '/v1/payments', '{"order_id": ')).status).toBe(400);
  });

  it('order_id is idempotent under concurrency: 20 parallel creates give one order; another body is 409', async () => {
    const body = { order_id: 'race-1', amount: '10.01', asset: 'USDX', metadata: { b: 1, a: [1, 2] } };
    // The same body, each copy with trailing white space of its own: byte-identical signed
    // requests in one second would be refused as replays before they reach the route.
    const raw = json({ network_slug: 'fake', ...body });
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => m.call('POST', '/v1/payments', raw + ' '.repeat(i))));
    for (const r of results) expect(r.status, json(r.body)).toBe(200);
    const ids = new Set(results.map((r) => r.body.payment.payment_id));
    expect(ids.size).toBe(1);
    expect(results.filter((r) => r.body.created).length).toBe(1);
    const listed = (await m.call('GET', '/v1/payments?order_id=race-1')).body;
    expect(listed.total).toBe(1);
    expect(listed.payments[0]).toMatchObject({ amount: '10.01', amount_raw: '10010000', asset_symbol: 'USDX', status: 'pending', lifecycle: 'pending' });
    // The same body in another key order and amount spelling is the same request.
    const again = await create(m, { metadata: { a: [1, 2], b: 1 }, asset: 'usdx', amount: '10.010', order_id: 'race-1' });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ created: false, payment: { payment_id: [...ids][0] } });
    const other = await create(m, { ...body, amount: '10.02' });
    expect(other.status).toBe(409);
    expect(other.body.error).toMatch(/order_id: "race-1" already exists/);
    // One derived address was used: the next order gets the next index.
    const next = (await create(m, { order_id: 'race-2', amount: '1' })).body.payment;
    expect(next.derivation_index).toBe(listed.payments[0].derivation_index + 1);
  });

  it('concurrent orders at one given address: one is made, the others are 409 (never a 500 from the open-address index)', async () => {
    const fresh = await t.merchant({ plan: 'pro' });
    const address = '0x5555555555555555555555555555555555555555';
    const answers = await Promise.all(['c1', 'c2', 'c3', 'c4', 'c5', 'c6'].map((order_id) => create(fresh, { order_id, amount: '1', address })));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409, 409, 409, 409, 409]);
    for (const a of answers.filter((x) => x.status === 409)) expect(a.body.error).toMatch(/already backs open order c\d/);
  });

  it('an address backs one open order per network; a merchant address needs no xpub', async () => {
    const fresh = await t.merchant({ plan: 'pro' });
    expect((await create(fresh, { order_id: 'x', amount: '1' })).body.error).toMatch(/address: required, or set an extended public key/);
    const address = '0x2222222222222222222222222222222222222222';
    const first = await create(fresh, { order_id: 'x', amount: '1', address });
    expect(first.status).toBe(200);
    expect(first.body.payment).toMatchObject({ address, derivation_index: null, status: 'pending' });
    const clash = await create(fresh, { order_id: 'y', amount: '1', address });
    expect(clash.status).toBe(409);
    expect(clash.body.error).toMatch(/already backs open order x/);
    // Its watch cannot be deleted from under it.
    const del = await fresh.call('DELETE', '/v1/address-watch/addresses', JSON.stringify({ watch_id: first.body.payment.watch_id }));
    expect(del.status).toBe(409);
    expect(del.body.error).toMatch(/backs open payment order x/);
    // Canceled, the address is free again.
    await fresh.call('POST', `/v1/payments/${first.body.payment.payment_id}/cancel`, '');
    expect((await create(fresh, { order_id: 'y', amount: '1', address })).status).toBe(200);
  });

  it('orders hold watched-address slots: none on a plan without slots', async () => {
    const free = await t.merchant({ plan: 'free' });
    const r = await create(free, { order_id: 'f', amount: '1', address: '0x3333333333333333333333333333333333333333' });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatch(/no.*webhook_address_slots is 0|has none/);
    const tiny = await t.merchant({ plan: 'tiny' });
    await tiny.call('PUT', '/v1/payments/settings', json({ xpubs: { evm: XPUB } }));
    expect((await create(tiny, { order_id: '1', amount: '1' })).status).toBe(200);
    expect((await create(tiny, { order_id: '2', amount: '1' })).status).toBe(200);
    const third = await create(tiny, { order_id: '3', amount: '1' });
    expect(third.status).toBe(400);
    expect(third.body.error).toMatch(/limit reached/);
    const slots = (await tiny.call('GET', '/v1/address-watch/account')).body;
    expect(slots).toMatchObject({ slots_used: 2, slots_free: 0 });
  });

  it('openapi.json describes the payment routes and the Payment object', async () => {
    const res = await fetch(`${t.baseUrl}/v1/openapi.json`);
    const doc = await res.json() as { paths: Record<string, Record<string, unknown>>; components?: { schemas?: Record<string, unknown> } };
    expect(Object.keys(doc.paths['/v1/payments']!).sort()).toEqual(['get', 'post']);
    expect(Object.keys(doc.paths['/v1/payments/settings']!).sort()).toEqual(['get', 'put']);
    expect(doc.paths['/v1/payments/{payment_id}']).toHaveProperty('get');
    expect(doc.paths['/v1/payments/{payment_id}/cancel']).toHaveProperty('post');
    expect(JSON.stringify(doc)).toContain('"lifecycle"');
  });

  it('get, list and filters; unknown ids are 404', async () => {
    expect((await m.call('GET', '/v1/payments/pay_nope')).status).toBe(404);
    expect((await m.call('GET', '/v1/payments/whatever')).status).toBe(400);
    expect((await m.call('POST', '/v1/payments/pay_nope/cancel', '')).status).toBe(404);
    const list = (await m.call('GET', '/v1/payments?status=pending&per_page=1')).body;
    expect(list).toMatchObject({ ok: true, page: 1, per_page: 1, total: 2 });
    expect(list.payments).toHaveLength(1);
    expect((await m.call('GET', '/v1/payments?status=bogus')).status).toBe(400);
    expect((await m.call('GET', '/v1/payments?network=nope')).status).toBe(400);
    // Another account cannot see them.
    const other = await t.merchant({ plan: 'pro' });
    expect((await other.call('GET', `/v1/payments/${list.payments[0].payment_id}`)).status).toBe(404);
  });

  // Last: it moves the engine's clock past every order's expiry.
  it('an expired order keeps its address watched for the late window, then lets it go', async () => {
    const who = await t.merchant({ plan: 'pro' });
    const address = '0x4444444444444444444444444444444444444444';
    const p = (await create(who, { order_id: 'window', amount: '1', address })).body.payment;
    const slots = async () => (await who.call('GET', '/v1/address-watch/account')).body.slots_used;
    expect(await slots()).toBe(1);
    const engine = t.service.payments.engine;
    const start = Date.parse(p.created_at);
    await engine.step(start + 3600_000 + 1000);
    expect((await who.call('GET', `/v1/payments/${p.payment_id}`)).body.payment).toMatchObject({ status: 'expired', reason: null });
    expect(await slots()).toBe(1);
    // Still within the window: the address cannot back a new order yet.
    expect((await create(who, { order_id: 'window-2', amount: '1', address })).status).toBe(409);
    await engine.step(start + 3600_000 + 86_400_000 + 2000);
    expect(await slots()).toBe(0);
    expect((await create(who, { order_id: 'window-2', amount: '1', address })).status).toBe(200);
  });
});
