import { type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listAudit } from '../src/store/index.js';
import { ANVIL_KEYS, startAnvil, type Anvil } from './helpers/anvil.js';
import { memberKey, rawCall, startTestService, type Merchant, type TestService } from './helpers/service.js';
import { until } from './helpers/wait.js';

/** BIP32 test vector 1's master xpub: order addresses nobody on anvil holds. */
const XPUB = 'xpub661MyMwAqRbcFtXgS5sYJABqqG9YLmC4Q1Rdap9gSE8NqtwybGhePY2gZ29ESFjqJoCu1Rupje8YtGqsefD265TMg7usUDFdp6W1EGMcet8';
/** An EIP-55 address nobody on anvil holds: the customer's. */
const CUSTOMER = '0x8ba1f109551bD432803012645Ac136ddd64DBA72';
const json = (o: unknown) => JSON.stringify(o);
type Call = (method: string, path: string, body?: string) => Promise<{ status: number; body: any }>;

let anvil: Anvil;
let t: TestService;
let m: Merchant;
let owner: Call;
let owner2: Call;
let developer: Call;
let viewer: Call;
let paidOrder: any;


beforeAll(async () => {
  anvil = await startAnvil();
  t = await startTestService({
    networks: [{ slug: 'anvil', name: 'Anvil', family: 'evm', environments: [{ slug: 'local', upstreams: [anvil.url], confirmations: 1 }] }],
    payments: { aml: { provider: 'none' }, tick_ms: 50, rates: { static: { 'ETH/USD': '2000' } } },
  }, { watch: { pollMs: 100, delivery: { pollMs: 100 } } });
  m = await t.merchant({ plan: 'pro' });
  owner = (await memberKey(t, m, 'owner', 'owner@example.com')).call;
  owner2 = (await memberKey(t, m, 'owner', 'owner2@example.com')).call;
  developer = (await memberKey(t, m, 'developer', 'dev@example.com')).call;
  viewer = (await memberKey(t, m, 'viewer', 'viewer@example.com')).call;
  expect((await owner('PUT', '/v1/payments/settings', json({ xpubs: { evm: XPUB } }))).status).toBe(200);
  const created = await owner('POST', '/v1/payments', json({ order_id: 'o-paid', network_slug: 'anvil', amount: '1' }));
  expect(created.status, json(created.body)).toBe(200);
  const [payer] = anvil.accounts as [Address];
  await anvil.wallet.sendTransaction({ account: payer, to: created.body.payment.address, value: 1_500_000_000_000_000_000n, chain: null });
  paidOrder = await until(async () => {
    const p = (await owner('GET', `/v1/payments/${created.body.payment.payment_id}`)).body.payment;
    return p.status === 'paid' ? p : undefined;
  });
}, 60_000);
afterAll(async () => {
  await t?.stop();
  await anvil?.stop();
});

const refunds = (id: string) => `/v1/payments/${id}/refunds`;

describe('refunds: bad input answers a 4xx naming it, and changes nothing', () => {
  it('an address of another network, a checksum error, more than received, an order with nothing received', async () => {
    const other = await owner('POST', refunds(paidOrder.payment_id), json({ address: 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq' }));
    expect(other.status).toBe(400);
    expect(other.body.error).toMatch(/^address: /);
    // One letter's case flipped: the EIP-55 checksum no longer holds.
    const bad = CUSTOMER.replace('ba1f', 'bA1f');
    const checksum = await owner('POST', refunds(paidOrder.payment_id), json({ address: bad }));
    expect(checksum.status).toBe(400);
    expect(checksum.body.error).toMatch(/^address: .*checksum/i);
    const more = await owner('POST', refunds(paidOrder.payment_id), json({ address: CUSTOMER, amount: '1.6' }));
    expect(more.status).toBe(400);
    expect(more.body.error).toMatch(/more than order .* has left to refund \(1\.5 of 1\.5 received\)/);
    const pending = await owner('POST', '/v1/payments', json({ order_id: 'o-pending', network_slug: 'anvil', amount: '1' }));
    const early = await owner('POST', refunds(pending.body.payment.payment_id), json({ address: CUSTOMER }));
    expect(early.status).toBe(409);
    expect((await owner('GET', refunds(paidOrder.payment_id))).body.refunds).toEqual([]);
  });
});

describe('refunds and the refund link', () => {
  it('the overpaid part to a given address: a payment request (EIP-681) at once; never more in total than received', async () => {
    const r = await owner('POST', refunds(paidOrder.payment_id), json({ address: CUSTOMER, amount: 'overpaid' }));
    expect(r.status, json(r.body)).toBe(200);
    expect(r.body.refund).toMatchObject({ amount: '0.5', amount_kind: 'overpaid', status: 'awaiting_payment', approval: 'not_needed', address: CUSTOMER, payment_id: paidOrder.payment_id });
    expect(r.body.refund.payment_request.uri).toMatch(/^ethereum:0x[0-9a-fA-F]{40}@31337\?value=5e17$|^ethereum:/);
    expect(r.body.refund.payment_request.qr_svg).toMatch(/^<svg/);
    const more = await owner('POST', refunds(paidOrder.payment_id), json({ address: CUSTOMER, amount: '1.1' }));
    expect(more.status).toBe(400);
    expect(more.body.error).toMatch(/\(1 of 1\.5 received\)/);
  });

  it('without an address: a link the customer uses once to give one; a second claim is refused', async () => {
    const r = await owner('POST', refunds(paidOrder.payment_id), json({ amount: '0.25' }));
    expect(r.status, json(r.body)).toBe(200);
    expect(r.body.refund).toMatchObject({ status: 'awaiting_address', payment_request: null, address: null });
    const url = new URL(r.body.refund.refund_link.url);
    const path = url.pathname;
    expect(path).toMatch(/^\/refund\/[A-Za-z0-9_-]{32}$/);
    const state = await rawCall(t.baseUrl, 'GET', `${path}/state`);
    expect(state.body).toMatchObject({ ok: true, status: 'awaiting_address', amount: '0.25', accepts_address: true });
    const wrong = await rawCall(t.baseUrl, 'POST', `${path}/address`, json({ address: 'TLsV52sRDL79HXGGm9yzwKibb6BeruhUzy' }), { 'content-type': 'application/json' });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error).toMatch(/^address: /);
    const ok = await rawCall(t.baseUrl, 'POST', `${path}/address`, json({ address: CUSTOMER }), { 'content-type': 'application/json' });
    expect(ok.status, json(ok.body)).toBe(200);
    expect(ok.body).toMatchObject({ status: 'awaiting_payment', address: CUSTOMER });
    const again = await rawCall(t.baseUrl, 'POST', `${path}/address`, json({ address: CUSTOMER }), { 'content-type': 'application/json' });
    expect(again.status).toBe(409);
    expect(again.body.error).toMatch(/already used/);
    const listed = (await viewer('GET', refunds(paidOrder.payment_id))).body.refunds;
    expect(listed.map((x: any) => [x.amount, x.status, x.refund_link?.claimed ?? null, x.refund_link?.url ?? null])).toEqual([
      ['0.25', 'awaiting_payment', true, null], ['0.5', 'awaiting_payment', null, null],
    ]);
    expect((await rawCall(t.baseUrl, 'GET', '/refund/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA/state')).status).toBe(404);
  });
});

describe('payouts: roles, approval by a second owner, audit', () => {
  const line = (amount: string) => ({ network: 'anvil', address: CUSTOMER, amount, reference: `ref-${amount}` });

  it('viewers see, developers prepare (an owner approves), owners create; a refused line names itself', async () => {
    expect((await viewer('POST', '/v1/payouts', json({ lines: [line('0.1')] }))).status).toBe(403);
    const bad = await owner('POST', '/v1/payouts', json({ lines: [line('0.1'), { ...line('0.1'), address: '0x123' }] }));
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/^lines\[1\]\.address: /);
    const prepared = await developer('POST', '/v1/payouts', json({ lines: [line('0.1'), line('0.2')] }));
    expect(prepared.status, json(prepared.body)).toBe(200);
    const p = prepared.body.payout;
    expect(p).toMatchObject({ status: 'awaiting_approval', approval: 'awaiting', approval_reason: 'role', line_count: 2 });
    expect(p.lines.map((l: any) => l.payment_request)).toEqual([null, null]);
    expect((await developer('POST', `/v1/payouts/${p.payout_id}/approve`)).status).toBe(403);
    const approved = await owner('POST', `/v1/payouts/${p.payout_id}/approve`);
    expect(approved.status, json(approved.body)).toBe(200);
    expect(approved.body.payout).toMatchObject({ status: 'awaiting_payment', approval: 'approved', approved_by: 'owner@example.com' });
    expect(approved.body.payout.lines[1].payment_request.uri).toMatch(/^ethereum:/);
    const direct = await owner('POST', '/v1/payouts', json({ lines: [line('0.3')] }));
    expect(direct.body.payout).toMatchObject({ approval: 'not_needed', status: 'awaiting_payment' });
    expect((await viewer('GET', '/v1/payouts')).body.payouts.map((x: any) => x.payout_id)).toEqual([direct.body.payout.payout_id, p.payout_id]);
    // The PSBT reserves a change index and keeps coins with the payout: preparing, not reading.
    expect((await viewer('GET', `/v1/payouts/${p.payout_id}/psbt`)).status).toBe(403);
  });

  it('above payouts_approval_over a second owner, not its maker, approves before any payment request is shown', async () => {
    expect((await owner('PUT', '/v1/payments/settings', json({ payouts_approval_over: { amount: '500', currency: 'USD' } }))).body.payouts_approval_over)
      .toEqual({ amount: '500', currency: 'USD' });
    const small = await owner('POST', '/v1/payouts', json({ lines: [line('0.2')] }));
    expect(small.body.payout).toMatchObject({ approval: 'not_needed', fiat_total: '400', fiat_currency: 'USD' });
    const big = await owner('POST', '/v1/payouts', json({ lines: [line('0.2'), line('0.1')] }));
    const id = big.body.payout.payout_id;
    expect(big.body.payout).toMatchObject({ approval: 'awaiting', approval_reason: 'amount', fiat_total: '600', status: 'awaiting_approval' });
    const self = await owner('POST', `/v1/payouts/${id}/approve`);
    expect(self.status).toBe(403);
    expect(self.body.error).toMatch(/second owner/);
    expect((await owner('GET', `/v1/payouts/${id}`)).body.payout.lines.map((l: any) => l.payment_request)).toEqual([null, null]);
    expect((await owner('GET', `/v1/payouts/${id}/psbt`)).status).toBe(409);
    const ok = await owner2('POST', `/v1/payouts/${id}/approve`);
    expect(ok.status).toBe(200);
    expect(ok.body.payout.approved_by).toBe('owner2@example.com');
    const refund = await owner('POST', refunds(paidOrder.payment_id), json({ address: CUSTOMER, price_amount: '600', rate: 'locked' }));
    expect(refund.status).toBe(400);
    expect(refund.body.error).toMatch(/priced in ETH/);
    const canceled = await owner('POST', `/v1/payouts/${id}/cancel`);
    expect(canceled.body.payout.status).toBe('canceled');
    const audit = await listAudit(t.store, { accountId: m.userId, limit: 100 });
    const mine = audit.entries.filter((e) => e.target.id === id).map((e) => [e.action, e.actor.label]);
    expect(mine.reverse()).toEqual([['payout.create', expect.any(String)], ['payout.approve', expect.any(String)], ['payout.cancel', expect.any(String)]]);
    expect(audit.entries.filter((e) => e.action === 'refund.create').length).toBe(2);
    expect((await owner('PUT', '/v1/payments/settings', json({ payouts_approval_over: null }))).body.payouts_approval_over).toBeNull();
  });

  it('a signed transaction that pays someone else is refused; the right one is recorded, broadcast and matched', async () => {
    const payer = privateKeyToAccount(ANVIL_KEYS[0]! as Hex);
    const p = (await owner('POST', '/v1/payouts', json({ lines: [line('0.01')] }))).body.payout;
    const nonce = await anvil.public.getTransactionCount({ address: payer.address });
    const sign = (to: Address) => payer.signTransaction({
      chainId: 31337, nonce, to, value: 10_000_000_000_000_000n, gas: 21_000n, maxFeePerGas: 50_000_000_000n, maxPriorityFeePerGas: 1n, type: 'eip1559',
    });
    const wrong = await owner('POST', `/v1/payouts/${p.payout_id}/transaction`, json({ signed_transaction: await sign('0x52908400098527886E0F7030069857D2E4169EE7') }));
    expect(wrong.status, json(wrong.body)).toBe(400);
    expect((await owner('GET', `/v1/payouts/${p.payout_id}`)).body.payout.lines[0].expected_tx).toBeNull();
    const right = await owner('POST', `/v1/payouts/${p.payout_id}/transaction`, json({ signed_transaction: await sign(CUSTOMER) }));
    expect(right.status, json(right.body)).toBe(200);
    expect(right.body.payout.lines[0].expected_tx).toBe(right.body.tx_hash);
    const sent = await until(async () => {
      const l = (await owner('GET', `/v1/payouts/${p.payout_id}`)).body.payout.lines[0];
      return l.status === 'sent' ? l : undefined;
    });
    expect(sent.tx_hash).toBe(right.body.tx_hash);
    const audit = await listAudit(t.store, { accountId: m.userId, limit: 10, action: 'payout.transaction' });
    expect(audit.entries.map((e) => e.changes)).toEqual([{ tx_hash: right.body.tx_hash }]);
  });
});

describe('a second signed transaction: only a replacement of the recorded one', () => {
  it('another payment of the line is refused (409); a fee bump (same nonce) is kept beside it, and the first one, mined, matches', async () => {
    const payer = privateKeyToAccount(ANVIL_KEYS[1]! as Hex);
    const p = (await owner('POST', '/v1/payouts', json({ lines: [{ network: 'anvil', address: CUSTOMER, amount: '0.02' }] }))).body.payout;
    const nonce = await anvil.public.getTransactionCount({ address: payer.address, blockTag: 'pending' });
    const sign = (n: number, fee: bigint) => payer.signTransaction({
      chainId: 31337, nonce: n, to: CUSTOMER, value: 20_000_000_000_000_000n, gas: 21_000n, maxFeePerGas: fee, maxPriorityFeePerGas: 1n, type: 'eip1559',
    });
    const submit = (raw: Hex) => owner('POST', `/v1/payouts/${p.payout_id}/transaction`, json({ signed_transaction: raw, broadcast: false }));
    const first = await sign(nonce, 50_000_000_000n);
    const recorded = await submit(first);
    expect(recorded.status, json(recorded.body)).toBe(200);
    // The next nonce: a transaction both could confirm beside the first, paying the line twice.
    const second = await submit(await sign(nonce + 1, 50_000_000_000n));
    expect(second.status, json(second.body)).toBe(409);
    expect(second.body.error).toMatch(new RegExp(`^A transaction is already recorded for line 1 of ${p.payout_id} \\(${recorded.body.tx_hash}\\)`));
    // The same one again changes nothing; a fee bump with the same nonce replaces it, both kept.
    expect((await submit(first)).status).toBe(200);
    const bump = await submit(await sign(nonce, 60_000_000_000n));
    expect(bump.status, json(bump.body)).toBe(200);
    expect(bump.body.payout.lines[0].expected_tx).toBe(bump.body.tx_hash);
    // The wallet broadcasts the first after all: it confirms and matches the line.
    await anvil.public.request({ method: 'eth_sendRawTransaction', params: [first] } as never);
    const sent = await until(async () => {
      const l = (await owner('GET', `/v1/payouts/${p.payout_id}`)).body.payout.lines[0];
      return l.status === 'sent' ? l : undefined;
    });
    expect(sent.tx_hash).toBe(recorded.body.tx_hash);
  });
});

describe('approve or a refund link\'s claim racing a cancel', () => {
  it('answers 200 or 409, never 500, and the payout ends canceled with each line\'s moves in order (approve + cancel)', async () => {
    for (let i = 0; i < 4; i++) {
      const p = (await developer('POST', '/v1/payouts', json({ lines: [{ network: 'anvil', address: CUSTOMER, amount: '0.001' }] }))).body.payout;
      const [approved, canceled] = await Promise.all([owner('POST', `/v1/payouts/${p.payout_id}/approve`), owner('POST', `/v1/payouts/${p.payout_id}/cancel`)]);
      expect(canceled.status, json(canceled.body)).toBe(200);
      expect([200, 409], json(approved.body)).toContain(approved.status);
      if (approved.status === 409) expect(approved.body.error).toBe(`${p.payout_id} was canceled: there is nothing to approve`);
      const after = (await owner('GET', `/v1/payouts/${p.payout_id}`)).body.payout;
      expect(after.status).toBe('canceled');
      expect(after.lines[0].lifecycle).toBe(approved.status === 200 ? 'awaiting_approval>awaiting_payment>canceled' : 'awaiting_approval>canceled');
      expect(after.approval).toBe(approved.status === 200 ? 'approved' : 'awaiting');
    }
  });

  it('the same for a claim racing a cancel of the refund', async () => {
    for (let i = 0; i < 4; i++) {
      const r = (await owner('POST', refunds(paidOrder.payment_id), json({ amount: '0.001' }))).body.refund;
      const path = new URL(r.refund_link.url).pathname;
      const [claimed, canceled] = await Promise.all([
        rawCall(t.baseUrl, 'POST', `${path}/address`, json({ address: CUSTOMER }), { 'content-type': 'application/json' }),
        owner('POST', `/v1/payouts/${r.refund_id}/cancel`),
      ]);
      expect(canceled.status, json(canceled.body)).toBe(200);
      expect([200, 409], json(claimed.body)).toContain(claimed.status);
      if (claimed.status === 409) expect(claimed.body.error).toBe('This refund was canceled');
      const after = (await owner('GET', `/v1/payouts/${r.refund_id}`)).body.payout;
      expect(after.status).toBe('canceled');
      expect(after.lines[0].lifecycle).toBe(claimed.status === 200 ? 'awaiting_address>awaiting_payment>canceled' : 'awaiting_address>canceled');
    }
  });
});

describe('every line announces its first state at creation', () => {
  it('awaiting_approval, awaiting_payment and a refund\'s awaiting_address each have a sequence-0 webhook, one per line', async () => {
    const prepared = (await developer('POST', '/v1/payouts', json({ lines: [{ network: 'anvil', address: CUSTOMER, amount: '0.001' }, { network: 'anvil', address: CUSTOMER, amount: '0.002' }] }))).body.payout;
    const direct = (await owner('POST', '/v1/payouts', json({ lines: [{ network: 'anvil', address: CUSTOMER, amount: '0.001' }] }))).body.payout;
    const refund = (await owner('POST', refunds(paidOrder.payment_id), json({ amount: '0.001' }))).body.refund;
    const ids = ((await owner('GET', '/v1/address-watch/deliveries?limit=200')).body.deliveries as any[]).map((d) => d.webhook_id as string);
    const of = (id: string) => ids.filter((w) => w.startsWith(`${id}_`)).sort();
    expect(of(prepared.payout_id)).toEqual([`${prepared.payout_id}_1_0`, `${prepared.payout_id}_2_0`]);
    expect(of(direct.payout_id)).toEqual([`${direct.payout_id}_1_0`]);
    expect(of(refund.refund_id)).toEqual([`${refund.refund_id}_1_0`]);
    await owner('POST', `/v1/payouts/${refund.refund_id}/cancel`);
  });
});

describe('GET /v1/payouts?status= filters in the query', () => {
  it('a page holds matches only, however many newer payouts do not match; total counts the matches', async () => {
    const all = (await viewer('GET', '/v1/payouts?per_page=200')).body.payouts as any[];
    const newest = (await owner('POST', '/v1/payouts', json({ lines: [{ network: 'anvil', address: CUSTOMER, amount: '0.003' }] }))).body.payout;
    const canceled = all.filter((x) => x.status === 'canceled').map((x) => x.payout_id);
    expect(canceled.length).toBeGreaterThan(1);
    const page1 = (await viewer('GET', '/v1/payouts?status=canceled&per_page=1')).body;
    expect(page1).toMatchObject({ page: 1, per_page: 1, total: canceled.length });
    expect(page1.payouts.map((x: any) => x.payout_id)).toEqual([canceled[0]]);
    const page2 = (await viewer('GET', '/v1/payouts?status=canceled&per_page=1&page=2')).body;
    expect(page2.payouts.map((x: any) => x.payout_id)).toEqual([canceled[1]]);
    const waiting = (await viewer('GET', '/v1/payouts?status=awaiting_payment&per_page=200')).body;
    expect(waiting.payouts[0].payout_id).toBe(newest.payout_id);
    expect(waiting.payouts.every((x: any) => x.status === 'awaiting_payment')).toBe(true);
    expect(waiting.total).toBe(waiting.payouts.length);
    expect((await viewer('GET', '/v1/payouts')).body.total).toBe(all.length + 1);
  });
});
