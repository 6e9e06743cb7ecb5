import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeEvmChain, type FakeEvm } from './helpers/fake-evm.js';
import { startReceiver, type Receiver } from './helpers/receiver.js';
import { startTestService, type TestService } from './helpers/service.js';

const SENDER = `0x${'ab'.repeat(20)}`;
let chain: FakeEvm;
let t: TestService;
let rx: Receiver;

beforeAll(async () => {
  [chain, rx] = await Promise.all([startFakeEvmChain(), startReceiver()]);
  t = await startTestService({
    networks: [{ slug: 'slow', name: 'Slow', family: 'evm', environments: [{ slug: 'main', upstreams: [chain.url], confirmations: 3, finality_depth: 5 }] }],
    webhooks: { allow_private_urls: true, timeout_ms: 2000 },
    payments: { aml: { provider: 'none' }, tick_ms: 50 },
    plans: [
      { id: 1, slug: 'pro', name: 'Pro', included_credits: 1_000_000, rps_limit: 100, endpoints_limit: 5, webhook_address_slots: 10_000 },
      { id: 2, slug: 'one', name: 'One', included_credits: 1_000_000, rps_limit: 100, endpoints_limit: 5, webhook_address_slots: 1 },
    ],
  }, { watch: { pollMs: 50, delivery: { pollMs: 50 } } });
}, 60_000);

async function until(check: () => Promise<boolean>, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}
afterAll(async () => {
  await t?.stop();
  await Promise.all([chain?.close(), rx?.close()]);
});

const events = () => rx.received.map((r) => JSON.parse(r.body)).map((b) => [b.event, b.tx_hash]);

describe('delivery order and tolerance (one confirmation)', () => {
  let fast: FakeEvm;
  let u: TestService;
  let hooks: Receiver;
  beforeAll(async () => {
    [fast, hooks] = await Promise.all([startFakeEvmChain(), startReceiver()]);
    u = await startTestService({
      networks: [{ slug: 'fast', name: 'Fast', family: 'evm', environments: [{ slug: 'main', upstreams: [fast.url] }] }],
      webhooks: { allow_private_urls: true, timeout_ms: 2000 },
      payments: { tick_ms: 50 },
    }, { watch: { pollMs: 50, delivery: { pollMs: 50, schedule: [400, 400, 400] } } });
  }, 60_000);
  afterAll(async () => {
    await u?.stop();
    await Promise.all([fast?.close(), hooks?.close()]);
  });

  it('a failing first webhook holds back the later ones: the receiver gets them in transition order', async () => {
    const m = await u.merchant({ plan: 'pro' });
    const address = '0x7777777777777777777777777777777777777777';
    const { payment } = (await m.call('POST', '/v1/payments', JSON.stringify({ order_id: 'ord', network_slug: 'fast', amount: '1', address, webhook_url: hooks.url }))).body;
    let failures = 2;
    hooks.respond = (r) => (JSON.parse(r.body).event === 'seen' && failures-- > 0 ? 503 : 200);
    fast.mine([{ from: SENDER, to: address, wei: 10n ** 18n }]);
    await hooks.waitFor((all) => all.some((r) => JSON.parse(r.body).event === 'paid'), 15_000);
    await new Promise((r) => setTimeout(r, 300));
    const got = hooks.received.map((r) => [JSON.parse(r.body).event, r.headers['x-webhook-attempt']]);
    expect(got).toEqual([['seen', '1'], ['seen', '2'], ['seen', '3'], ['aml_check', '1'], ['paid', '1']]);
    expect((await m.call('GET', `/v1/payments/${payment.payment_id}`)).body.payment.status).toBe('paid');
  });

  it('underpaid tolerance in basis points: 0.996 of 1 with 50 bps is paid', async () => {
    const m = await u.merchant({ plan: 'pro' });
    await m.call('PUT', '/v1/payments/settings', JSON.stringify({ underpaid_tolerance_bps: 50 }));
    const a = '0x8888888888888888888888888888888888888888';
    const b = '0x9999999999999999999999999999999999999999';
    const ok = (await m.call('POST', '/v1/payments', JSON.stringify({ order_id: 'tol-ok', network_slug: 'fast', amount: '1', address: a }))).body.payment;
    const short = (await m.call('POST', '/v1/payments', JSON.stringify({ order_id: 'tol-short', network_slug: 'fast', amount: '1', address: b }))).body.payment;
    fast.mine([{ from: SENDER, to: a, wei: 996n * 10n ** 15n }, { from: SENDER, to: b, wei: 994n * 10n ** 15n }]);
    const status = async (id: string) => (await m.call('GET', `/v1/payments/${id}`)).body.payment;
    const deadline = Date.now() + 10_000;
    while ((await status(ok.payment_id)).status !== 'paid' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(await status(ok.payment_id)).toMatchObject({ status: 'paid', amount_received: '0.996', overpaid: false, lifecycle: 'pending>seen>aml_check>paid' });
    expect(await status(short.payment_id)).toMatchObject({ status: 'underpaid', amount_received: '0.994', lifecycle: 'pending>seen>underpaid' });
  });
});

describe('a network that waits for 3 confirmations', () => {
  it('says seen while the block is unconfirmed, once, and the rest when it is confirmed', async () => {
    const m = await t.merchant({ plan: 'pro' });
    const address = '0x5555555555555555555555555555555555555555';
    const { payment } = (await m.call('POST', '/v1/payments', JSON.stringify({ order_id: 'c3', network_slug: 'slow', amount: '1', address, webhook_url: rx.url }))).body;
    const { txs } = chain.mine([{ from: SENDER, to: address, wei: 10n ** 18n }]);
    await rx.waitFor((all) => all.length >= 1);
    await new Promise((r) => setTimeout(r, 500));
    // One confirmation of three: seen, nothing more.
    expect(events()).toEqual([['seen', txs[0]!.hash]]);
    expect((await m.call('GET', `/v1/payments/${payment.payment_id}`)).body.payment).toMatchObject({ status: 'seen', amount_received: '0', lifecycle: 'pending>seen' });
    chain.mine();
    await new Promise((r) => setTimeout(r, 400));
    expect(events()).toHaveLength(1);
    chain.mine();
    await rx.waitFor((all) => all.length >= 3);
    await new Promise((r) => setTimeout(r, 400));
    expect(events()).toEqual([['seen', txs[0]!.hash], ['aml_check', txs[0]!.hash], ['paid', txs[0]!.hash]]);
    const paid = (await m.call('GET', `/v1/payments/${payment.payment_id}`)).body.payment;
    expect(paid).toMatchObject({ status: 'paid', amount_received: '1', lifecycle: 'pending>seen>aml_check>paid', aml: { provider: 'none', risk_level: 'unknown' } });
  });

  it('keeps watching a paid order\'s address, holding no slot, until its payment is final (finality_depth 5), then lets it go', async () => {
    const m = await t.merchant({ plan: 'pro' });
    const address = '0x4444444444444444444444444444444444444444';
    const { payment } = (await m.call('POST', '/v1/payments', JSON.stringify({ order_id: 'final', network_slug: 'slow', amount: '1', address, webhook_url: rx.url }))).body;
    const status = async () => (await m.call('GET', `/v1/payments/${payment.payment_id}`)).body.payment.status as string;
    const watched = async () => ((await m.call('GET', '/v1/address-watch/addresses')).body.addresses as Array<{ address: string }>).map((w) => w.address.toLowerCase());
    const used = async () => (await m.call('GET', '/v1/address-watch/account')).body.slots_used as number;
    expect(await used()).toBe(1);
    chain.mine([{ from: SENDER, to: address, wei: 10n ** 18n }]);
    chain.mine();
    chain.mine();
    const deadline = Date.now() + 10_000;
    while ((await status()) !== 'paid' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(await status()).toBe('paid');
    // Three confirmations of five: still watched (a reorg would be seen), but the slot is free.
    expect(await watched()).toEqual([address]);
    expect(await used()).toBe(0);
    chain.mine();
    await new Promise((r) => setTimeout(r, 1500));
    expect(await watched()).toEqual([address]);
    chain.mine();
    const until = Date.now() + 10_000;
    while ((await watched()).length > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    expect(await watched()).toEqual([]);
    expect(await status()).toBe('paid');
  });

  it('a reorg past finality reopens a paid order whose address the merchant watches meanwhile: it shares that watch', async () => {
    const m = await t.merchant({ plan: 'pro' });
    const address = '0x6666666666666666666666666666666666666666';
    const { payment } = (await m.call('POST', '/v1/payments', JSON.stringify({ order_id: 'shared', network_slug: 'slow', amount: '1', address, webhook_url: rx.url }))).body;
    const get = async () => (await m.call('GET', `/v1/payments/${payment.payment_id}`)).body.payment;
    const watches = async () => (await m.call('GET', '/v1/address-watch/addresses')).body.addresses as Array<{ watch_id: string }>;
    const until = async (check: () => Promise<boolean>) => {
      const deadline = Date.now() + 15_000;
      while (!(await check())) {
        if (Date.now() > deadline) throw new Error('condition not met in time');
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    // Another open order keeps the network scanned: past finality, nothing else watches it.
    await m.call('POST', '/v1/payments', JSON.stringify({ order_id: 'keeps-scanning', network_slug: 'slow', amount: '1', address: '0x6767676767676767676767676767676767676767' }));
    const { height } = chain.mine([{ from: SENDER, to: address, wei: 10n ** 18n }]);
    for (let i = 0; i < 4; i++) chain.mine();
    await until(async () => (await get()).status === 'paid' && (await watches()).length === 1);
    // The merchant watches the address through the API; then a reorg deeper than finality.
    const own = (await m.call('POST', '/v1/address-watch/addresses', JSON.stringify({ network_slug: 'slow', address }))).body.watch as { watch_id: string };
    expect(own.watch_id).not.toBe(payment.watch_id);
    chain.orphan(height);
    // Longer than the old branch by more than the confirmations: the scanner reaches the fork.
    for (let i = 0; i < 10; i++) chain.mine();
    await until(async () => (await get()).status === 'underpaid');
    expect(await get()).toMatchObject({ status: 'underpaid', reason: 'reorg', amount_received: '0', watch_id: own.watch_id, lifecycle: 'pending>seen>aml_check>paid>underpaid' });
    expect((await watches()).map((w) => w.watch_id)).toContain(own.watch_id);
    expect((await watches()).map((w) => w.watch_id)).not.toContain(payment.watch_id);
  });

  it('a watch the merchant adds through the API for an order\'s address is theirs: it sends Address Watch webhooks and outlives the order', async () => {
    const m = await t.merchant({ plan: 'pro' });
    const hooks = await startReceiver();
    try {
      await m.call('PUT', '/v1/address-watch/webhook', JSON.stringify({ url: hooks.url, enabled: true }));
      const address = '0x3131313131313131313131313131313131313131';
      const other = '0x3232323232323232323232323232323232323232';
      const order = async (order_id: string, a: string) => (await m.call('POST', '/v1/payments', JSON.stringify({ order_id, network_slug: 'slow', amount: '1', address: a, webhook_url: rx.url }))).body.payment;
      const mine = await order('claimed', address);
      // Created after it: the release pass reaches it after the claimed order's.
      const control = await order('control', other);
      const added = await m.call('POST', '/v1/address-watch/addresses', JSON.stringify({ network_slug: 'slow', address }));
      expect(added.body).toMatchObject({ ok: true, created: false, watch_id: mine.watch_id });
      const status = async (id: string) => (await m.call('GET', `/v1/payments/${id}`)).body.payment.status as string;
      const watchIds = async () => ((await m.call('GET', '/v1/address-watch/addresses')).body.addresses as Array<{ watch_id: string }>).map((w) => w.watch_id);
      const used = async () => (await m.call('GET', '/v1/address-watch/account')).body.slots_used as number;
      const awPayments = (tx: string) => hooks.received.map((r) => JSON.parse(r.body)).filter((b) => b.type === 'payment' && b.tx_hash === tx);

      const { txs } = chain.mine([{ from: SENDER, to: address, wei: 10n ** 18n }, { from: SENDER, to: other, wei: 10n ** 18n }]);
      chain.mine();
      chain.mine();
      await until(async () => (await status(mine.payment_id)) === 'paid' && (await status(control.payment_id)) === 'paid');
      // The merchant's watch: its payments reach the Address Watch webhook; the order-only one's do not.
      await hooks.waitFor(() => awPayments(txs[0]!.hash).length === 1);
      expect(awPayments(txs[0]!.hash)[0]).toMatchObject({ watch_id: mine.watch_id, address, direction: 'in' });
      expect(awPayments(txs[1]!.hash)).toEqual([]);
      // Paid (held until final): the merchant's watch still holds its slot, the other order's does not.
      expect(await used()).toBe(1);
      chain.mine();
      chain.mine();
      await until(async () => !(await watchIds()).includes(control.watch_id));
      expect(await watchIds()).toContain(mine.watch_id);
      expect(await used()).toBe(1);
      // Still watched after the order let go: later payments keep coming.
      const later = chain.mine([{ from: SENDER, to: address, wei: 5n }]).txs[0]!.hash;
      chain.mine();
      chain.mine();
      await hooks.waitFor(() => awPayments(later).length === 1);
      expect((await m.call('DELETE', '/v1/address-watch/addresses', JSON.stringify({ watch_id: mine.watch_id }))).status).toBe(200);
    } finally {
      await hooks.close();
    }
  });

  it('adding through the API the address a paid order still holds needs a free slot: the held watch held none', async () => {
    const m = await t.merchant({ plan: 'one' });
    const address = '0x3333333333333333333333333333333333333333';
    const { payment } = (await m.call('POST', '/v1/payments', JSON.stringify({ order_id: 'held', network_slug: 'slow', amount: '1', address, webhook_url: rx.url }))).body;
    chain.mine([{ from: SENDER, to: address, wei: 10n ** 18n }]);
    chain.mine();
    chain.mine();
    await until(async () => (await m.call('GET', `/v1/payments/${payment.payment_id}`)).body.payment.status === 'paid');
    expect((await m.call('GET', '/v1/address-watch/account')).body.slots_used).toBe(0);
    const mine = await m.call('POST', '/v1/address-watch/addresses', JSON.stringify({ network_slug: 'slow', address: '0x3434343434343434343434343434343434343434' }));
    expect(mine.body).toMatchObject({ ok: true, created: true });
    const held = await m.call('POST', '/v1/address-watch/addresses', JSON.stringify({ network_slug: 'slow', address }));
    expect(held.status).toBe(400);
    expect(held.body.error).toMatch(/^Watched address limit reached: the One plan allows 1 watched address/);
    expect((await m.call('GET', '/v1/address-watch/account')).body.slots_used).toBe(1);
  });

  it('a new order on an address a paid order still holds needs a free slot: the held watch held none', async () => {
    const m = await t.merchant({ plan: 'one' });
    const address = '0x3535353535353535353535353535353535353535';
    const create = (order_id: string, a: string) => m.call('POST', '/v1/payments', JSON.stringify({ order_id, network_slug: 'slow', amount: '1', address: a, webhook_url: rx.url }));
    const { payment } = (await create('first', address)).body;
    chain.mine([{ from: SENDER, to: address, wei: 10n ** 18n }]);
    chain.mine();
    chain.mine();
    await until(async () => (await m.call('GET', `/v1/payments/${payment.payment_id}`)).body.payment.status === 'paid');
    const used = async () => (await m.call('GET', '/v1/address-watch/account')).body.slots_used as number;
    expect(await used()).toBe(0);
    expect((await create('other', '0x3636363636363636363636363636363636363636')).body).toMatchObject({ ok: true, created: true });
    expect(await used()).toBe(1);
    const again = await create('again', address);
    expect(again.status).toBe(400);
    expect(again.body.error).toMatch(/^Watched address limit reached: the One plan allows 1 \(webhook_address_slots\), and every open order holds one/);
    expect(await used()).toBe(1);
  });

  it('the merchant removing their watch of a paid order\'s address gives it back to the order\'s finality hold: gone once final', async () => {
    const m = await t.merchant({ plan: 'pro' });
    const address = '0x3737373737373737373737373737373737373737';
    const { payment } = (await m.call('POST', '/v1/payments', JSON.stringify({ order_id: 'given-back', network_slug: 'slow', amount: '1', address, webhook_url: rx.url }))).body;
    expect((await m.call('POST', '/v1/address-watch/addresses', JSON.stringify({ network_slug: 'slow', address }))).body).toMatchObject({ created: false, watch_id: payment.watch_id });
    chain.mine([{ from: SENDER, to: address, wei: 10n ** 18n }]);
    chain.mine();
    chain.mine();
    await until(async () => (await m.call('GET', `/v1/payments/${payment.payment_id}`)).body.payment.status === 'paid');
    const watchIds = async () => ((await m.call('GET', '/v1/address-watch/addresses')).body.addresses as Array<{ watch_id: string }>).map((w) => w.watch_id);
    const used = async () => (await m.call('GET', '/v1/address-watch/account')).body.slots_used as number;
    expect(await used()).toBe(1);
    expect((await m.call('DELETE', '/v1/address-watch/addresses', JSON.stringify({ watch_id: payment.watch_id }))).body).toEqual({ ok: true, watch_id: payment.watch_id });
    // Not final yet: the order still watches (a reorg would be seen), holding no slot.
    expect(await watchIds()).toEqual([payment.watch_id]);
    expect(await used()).toBe(0);
    chain.mine();
    chain.mine();
    await until(async () => (await watchIds()).length === 0);
  });
});
