import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeHorizon, stellarAccount } from './helpers/fake-horizon.js';
import { startReceiver, type Receiver } from './helpers/receiver.js';
import { startTestService, type TestService } from './helpers/service.js';

const json = (o: unknown) => JSON.stringify(o);
const ISSUER = stellarAccount();
let horizon: Awaited<ReturnType<typeof startFakeHorizon>>;
let t: TestService;
let rx: Receiver;

beforeAll(async () => {
  [horizon, rx] = await Promise.all([startFakeHorizon(), startReceiver()]);
  t = await startTestService({
    networks: [{
      slug: 'stellar', name: 'Stellar', family: 'stellar', environments: [{ slug: 'testnet', upstreams: [horizon.url] }],
      tokens: [{ symbol: 'USDC', asset: `USDC:${ISSUER}`, decimals: 7 }],
    }],
    webhooks: { allow_private_urls: true, timeout_ms: 2000 },
    payments: { tick_ms: 50 },
  }, { watch: { pollMs: 50, delivery: { pollMs: 50 } } });
}, 60_000);
afterAll(async () => {
  await t?.stop();
  await Promise.all([horizon?.close(), rx?.close()]);
});

describe('payment orders on Stellar (Horizon)', () => {
  it('native XLM in stroops and an issued asset as CODE:ISSUER; another asset does not count', async () => {
    const m = await t.merchant({ plan: 'pro' });
    // No derivation on Stellar: the merchant's address is required.
    expect((await m.call('POST', '/v1/payments', json({ order_id: 'x', network_slug: 'stellar', amount: '1' }))).body.error).toMatch(/address: required on stellar/);
    const A = stellarAccount();
    const B = stellarAccount();
    const payer = stellarAccount();
    const xlm = (await m.call('POST', '/v1/payments', json({ order_id: 'xlm', network_slug: 'stellar', amount: '10.5', address: A, webhook_url: rx.url }))).body.payment;
    expect(xlm).toMatchObject({ asset: 'native', asset_symbol: 'XLM', decimals: 7, amount_raw: '105000000' });
    const usdc = (await m.call('POST', '/v1/payments', json({ order_id: 'usdc', network_slug: 'stellar', amount: '0.0000001', asset: 'USDC', address: B, webhook_url: rx.url }))).body.payment;
    expect(usdc).toMatchObject({ asset: `USDC:${ISSUER}`, amount_raw: '1' });
    expect((await m.call('POST', '/v1/payments', json({ order_id: 'y', network_slug: 'stellar', amount: '0.00000001', asset: 'USDC', address: stellarAccount() }))).body.error).toMatch(/more than 7 decimal places/);

    const [t1, t2, t3] = [randomBytes(32).toString('hex'), randomBytes(32).toString('hex'), randomBytes(32).toString('hex')];
    horizon.addLedger([
      { type: 'payment', transaction_hash: t1, from: payer, to: A, amount: '10.5000000', asset_type: 'native' },
      // Native XLM to the USDC order's address: not its asset.
      { type: 'payment', transaction_hash: t2, from: payer, to: B, amount: '5.0000000', asset_type: 'native' },
      { type: 'payment', transaction_hash: t3, from: payer, to: B, amount: '0.0000001', asset_type: 'credit_alphanum4', asset_code: 'USDC', asset_issuer: ISSUER },
    ]);
    const of = (id: string) => rx.received.map((r) => JSON.parse(r.body)).filter((b) => b.payment_id === id).map((b) => [b.event, b.tx_hash]);
    await rx.waitFor(() => of(xlm.payment_id).length >= 3 && of(usdc.payment_id).length >= 3);
    await new Promise((r) => setTimeout(r, 300));
    expect(of(xlm.payment_id)).toEqual([['seen', t1], ['aml_check', t1], ['paid', t1]]);
    expect(of(usdc.payment_id)).toEqual([['seen', t3], ['aml_check', t3], ['paid', t3]]);
    expect((await m.call('GET', `/v1/payments/${usdc.payment_id}`)).body.payment).toMatchObject({ status: 'paid', amount_received: '0.0000001', tx_hashes: [t3], overpaid: false });
  });
});
