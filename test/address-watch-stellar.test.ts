import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeHorizon, stellarAccount } from './helpers/fake-horizon.js';
import { startReceiver, type Receiver } from './helpers/receiver.js';
import { startTestService, type Merchant, type TestService } from './helpers/service.js';

const json = (o: unknown) => JSON.stringify(o);
let horizon: Awaited<ReturnType<typeof startFakeHorizon>>;
let t: TestService;
let rx: Receiver;
let m: Merchant;
const A = stellarAccount();
const B = stellarAccount();
const X = stellarAccount();
const ISSUER = stellarAccount();

beforeAll(async () => {
  [horizon, rx] = await Promise.all([startFakeHorizon(), startReceiver()]);
  t = await startTestService({
    networks: [{ slug: 'stellar', name: 'Stellar', family: 'stellar', environments: [{ slug: 'testnet', upstreams: [horizon.url] }] }],
    webhooks: { allow_private_urls: true, timeout_ms: 2000 },
  }, { watch: { pollMs: 100 } });
  m = await t.merchant({ plan: 'pro' });
  await m.call('PUT', '/v1/address-watch/webhook', json({ url: rx.url, enabled: true }));
  for (const address of [A, B.toLowerCase()]) expect((await m.call('POST', '/v1/address-watch/addresses', json({ network_slug: 'stellar', address }))).body.created).toBe(true);
});
afterAll(async () => {
  await t?.stop();
  await Promise.all([horizon?.close(), rx?.close()]);
});

describe('Stellar (Horizon) scanning', () => {
  it('payments, path payments and account creations; amounts in stroops; issued assets as CODE:ISSUER; paging', async () => {
    const tx = () => randomBytes(32).toString('hex');
    const [t1, t2, t3, t4] = [tx(), tx(), tx(), tx()];
    const l1 = horizon.addLedger([
      { type: 'payment', transaction_hash: t1, from: X, to: A, amount: '10.5000000', asset_type: 'native' },
      { type: 'path_payment_strict_send', transaction_hash: t2, from: A, to: B, amount: '2.5000000', asset_type: 'credit_alphanum4', asset_code: 'USD', asset_issuer: ISSUER, source_amount: '5.0000000', source_asset_type: 'native' },
      { type: 'create_account', transaction_hash: t3, funder: A, account: X, starting_balance: '1.0000000' },
      { type: 'payment', transaction_hash: t4, from: X, to: A, amount: '99.0000000', asset_type: 'native', transaction_successful: false },
    ]);
    // A busy ledger: the hit is on the second page of payments.
    const busy: Array<Record<string, unknown>> = Array.from({ length: 250 }, () => ({ type: 'payment', transaction_hash: tx(), from: X, to: stellarAccount(), amount: '1.0000000', asset_type: 'native' }));
    busy[230] = { ...busy[230]!, to: B, amount: '0.0000001', asset_type: 'credit_alphanum12', asset_code: 'USDC', asset_issuer: ISSUER };
    const l2 = horizon.addLedger(busy);

    // In event order: deliveries run concurrently, so arrival order is not the contract.
    const wallet = () => rx.received.map((r) => JSON.parse(r.body)).filter((b) => b.type !== 'block').sort((a, b) => Number(a.id) - Number(b.id));
    await rx.waitFor(() => wallet().length >= 5);
    await new Promise((r) => setTimeout(r, 400));
    expect(wallet().map((e) => [e.tx_hash, e.address, e.type, e.direction, e.token, e.amount, e.block_height])).toEqual([
      [t1, A, 'payment', 'in', null, '105000000', l1.sequence],
      [t2, A, 'payout', 'out', null, '50000000', l1.sequence],
      [t2, B, 'payment', 'in', `USD:${ISSUER}`, '25000000', l1.sequence],
      [t3, A, 'payout', 'out', null, '10000000', l1.sequence],
      [busy[230]!.transaction_hash as string, B, 'payment', 'in', `USDC:${ISSUER}`, '1', l2.sequence],
    ]);
    expect(wallet()[0]).toMatchObject({ network: 'stellar', block_hash: l1.hash, from: X, to: A });

    // Block events (all on by default, for the networks the account watches): the ledger's transactions.
    const blocks = rx.received.map((r) => JSON.parse(r.body)).filter((b) => b.type === 'block');
    const b2 = blocks.find((b) => b.block_height === l2.sequence);
    expect(b2).toMatchObject({ network: 'stellar', block_hash: l2.hash, tx_count: 250 });
    expect(b2.transactions).toEqual(l2.txs.map((x) => x.hash));
    const usage = (await m.call('GET', '/v1/account/usage?days=7')).body.usage;
    const block = usage.methods.find((x: { method: string }) => x.method === 'webhook:block');
    expect(block.credits).toBe(block.requests * 20);
  });
});
