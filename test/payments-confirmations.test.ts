import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeEvmChain, type FakeEvmChain } from './helpers/fake-evm.js';
import { startReceiver, type Receiver } from './helpers/receiver.js';
import { startTestService, type TestService } from './helpers/service.js';

const SENDER = `0x${'ab'.repeat(20)}`;
let chain: FakeEvmChain;
let t: TestService;
let rx: Receiver;

beforeAll(async () => {
  [chain, rx] = await Promise.all([startFakeEvmChain(), startReceiver()]);
  t = await startTestService({
    networks: [{ slug: 'slow', name: 'Slow', family: 'evm', environments: [{ slug: 'main', upstreams: [chain.url], confirmations: 3 }] }],
    webhooks: { allow_private_urls: true, timeout_ms: 2000 },
    payments: { aml: { provider: 'none' }, tick_ms: 50 },
  }, { watch: { pollMs: 50, delivery: { pollMs: 50 } } });
}, 60_000);
afterAll(async () => {
  await t?.stop();
  await Promise.all([chain?.close(), rx?.close()]);
});

const events = () => rx.received.map((r) => JSON.parse(r.body)).map((b) => [b.event, b.tx_hash]);

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
});
