import { type Address } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../src/store/index.js';
import { startAnvil, type Anvil } from './helpers/anvil.js';
import { memberKey, signedCall, startTestService, type Merchant, type TestService } from './helpers/service.js';
import { until } from './helpers/wait.js';

// Money going out must never exceed what the merchant means to send: these try to make a
// refund or payout line pay more (or count as paid for less) than it should.

const XPUB = 'xpub661MyMwAqRbcFtXgS5sYJABqqG9YLmC4Q1Rdap9gSE8NqtwybGhePY2gZ29ESFjqJoCu1Rupje8YtGqsefD265TMg7usUDFdp6W1EGMcet8';
const CUSTOMER = '0x8ba1f109551bD432803012645Ac136ddd64DBA72';
const json = (o: unknown) => JSON.stringify(o);
type Call = (method: string, path: string, body?: string) => Promise<{ status: number; body: any }>;

let anvil: Anvil;
let t: TestService;
let m: Merchant;
let owner: Call;

/** An order of 1 ETH (or of `price`) that received `paidWei`, once it is paid. */
async function paidOrder(orderId: string, paidWei: bigint, price: object = { amount: '1' }): Promise<{ payment_id: string; amount: string; overpaid: boolean }> {
  const created = await owner('POST', '/v1/payments', json({ order_id: orderId, network_slug: 'anvil', ...price }));
  expect(created.status, json(created.body)).toBe(200);
  const [payer] = anvil.accounts as [Address];
  await anvil.wallet.sendTransaction({ account: payer, to: created.body.payment.address, value: paidWei, chain: null });
  return until(async () => {
    const p = (await owner('GET', `/v1/payments/${created.body.payment.payment_id}`)).body.payment;
    return p.status === 'paid' ? p : undefined;
  });
}

beforeAll(async () => {
  anvil = await startAnvil();
  t = await startTestService({
    networks: [{ slug: 'anvil', name: 'Anvil', family: 'evm', environments: [{ slug: 'local', upstreams: [anvil.url], confirmations: 1 }] }],
    payments: { aml: { provider: 'none' }, tick_ms: 50, rates: { static: { 'ETH/USD': '2000', 'ETH/EUR': '3000' } } },
  }, { watch: { pollMs: 100, delivery: { pollMs: 100 } } });
  m = await t.merchant({ plan: 'pro' });
  owner = (await memberKey(t, m, 'owner', 'owner@example.com')).call;
  expect((await owner('PUT', '/v1/payments/settings', json({ xpubs: { evm: XPUB } }))).status).toBe(200);
}, 60_000);
afterAll(async () => {
  await t?.stop();
  await anvil?.stop();
});

const refunds = (id: string) => `/v1/payments/${id}/refunds`;

describe('refunds never give back more than they should', () => {
  it('`overpaid` twice: the second finds nothing overpaid left (it would refund part of the price)', async () => {
    const order = await paidOrder('o-over-twice', 1_500_000_000_000_000_000n);
    const first = await owner('POST', refunds(order.payment_id), json({ address: CUSTOMER, amount: 'overpaid' }));
    expect(first.status, json(first.body)).toBe(200);
    expect(first.body.refund.amount).toBe('0.5');
    const second = await owner('POST', refunds(order.payment_id), json({ address: CUSTOMER, amount: 'overpaid' }));
    expect(second.status, json(second.body)).toBe(400);
    expect(second.body.error).toMatch(/^amount: .*overpaid/);
    // A part refunded by amount first leaves only the rest of the overpaid part.
    const order2 = await paidOrder('o-over-after-part', 1_500_000_000_000_000_000n);
    expect((await owner('POST', refunds(order2.payment_id), json({ address: CUSTOMER, amount: '0.2' }))).status).toBe(200);
    const rest = await owner('POST', refunds(order2.payment_id), json({ address: CUSTOMER, amount: 'overpaid' }));
    expect(rest.status, json(rest.body)).toBe(200);
    expect(rest.body.refund.amount).toBe('0.3');
  });

  it('`overpaid` on a fiat order paid as its page showed: the display rounding is no overpayment', async () => {
    // 10 EUR at 3000 is 0.003333333333333334 ETH; the page shows (and the customer pays) 0.003334.
    const order = await paidOrder('o-fiat-shown', 3_334_000_000_000_000n, { price_amount: '10', price_currency: 'EUR' });
    expect(order).toMatchObject({ amount: '0.003333333333333334', overpaid: false });
    const r = await owner('POST', refunds(order.payment_id), json({ address: CUSTOMER, amount: 'overpaid' }));
    expect(r.status, json(r.body)).toBe(400);
    expect(r.body.error).toMatch(/^amount: .*overpaid/);
  });

  it('two refunds of the whole order at once: one is made, the other refused', async () => {
    const order = await paidOrder('o-race', 1_000_000_000_000_000_000n);
    const both = await Promise.all([1, 2].map(() => owner('POST', refunds(order.payment_id), json({ address: CUSTOMER, amount: 'full' }))));
    expect(both.map((r) => r.status).sort()).toEqual([200, 400]);
    const listed = (await owner('GET', refunds(order.payment_id))).body.refunds;
    expect(listed.map((r: any) => r.amount)).toEqual(['1']);
  });

  it('amounts that are not a positive decimal in the asset are refused', async () => {
    const order = await paidOrder('o-amounts', 1_000_000_000_000_000_000n);
    for (const amount of ['0', '-0.1', '1e-3', '0.0000000000000000001', ' 0.1', '0x10']) {
      const r = await owner('POST', refunds(order.payment_id), json({ address: CUSTOMER, amount }));
      expect(r.status, `${amount}: ${json(r.body)}`).toBe(400);
    }
    const zeroFiat = await owner('POST', refunds(order.payment_id), json({ address: CUSTOMER, price_amount: '0', rate: 'current' }));
    expect(zeroFiat.status).toBe(400);
  });
});

describe('a second owner approves: one person never approves their own', () => {
  it('two keys no member made are one maker: the second key cannot approve the first one\'s payout', async () => {
    const [k1, k2] = [await createApiKey(t.store, { accountId: m.userId }), await createApiKey(t.store, { accountId: m.userId })];
    const call = (k: typeof k1): Call => (method, path, body = '') => signedCall(t.baseUrl, k.api_key, k.secret, method, path, body);
    expect((await owner('PUT', '/v1/payments/settings', json({ payouts_approval_over: { amount: '1', currency: 'USD' } }))).status).toBe(200);
    try {
      const big = await call(k1)('POST', '/v1/payouts', json({ lines: [{ network: 'anvil', address: CUSTOMER, amount: '0.01' }] }));
      expect(big.body.payout, json(big.body)).toMatchObject({ approval: 'awaiting', approval_reason: 'amount' });
      const id = big.body.payout.payout_id;
      const self = await call(k2)('POST', `/v1/payouts/${id}/approve`);
      expect(self.status, json(self.body)).toBe(403);
      expect((await call(k2)('GET', `/v1/payouts/${id}`)).body.payout.lines[0].payment_request).toBeNull();
      // A member who is an owner is someone else.
      expect((await owner('POST', `/v1/payouts/${id}/approve`)).status).toBe(200);
    } finally {
      await owner('PUT', '/v1/payments/settings', json({ payouts_approval_over: null }));
    }
  });
});

describe('payout lines pay something', () => {
  it('a line priced at 0 in fiat is refused (any transfer, even a spoofed zero one, would "pay" it)', async () => {
    const r = await owner('POST', '/v1/payouts', json({ lines: [{ network: 'anvil', address: CUSTOMER, price_amount: '0', price_currency: 'USD' }] }));
    expect(r.status, json(r.body)).toBe(400);
    expect(r.body.error).toMatch(/^lines\[0\]\.price_amount: /);
  });
});
