import { mnemonicToSeedSync } from '@scure/bip39';
import { HDKey } from '@scure/bip32';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getAccount, webhookSecretOf } from '../src/store/index.js';
import { parseTronAddress } from '../src/chains/tron/address.js';
import { FakeTron, tronAccount, USDT } from './helpers/fake-tron.js';
import { signatureValid, startReceiver, type Receiver } from './helpers/receiver.js';
import { paymentOrders } from './helpers/payments.js';
import { startTestService, type Merchant, type TestService } from './helpers/service.js';

/** The Tron account key (m/44'/195'/0') of "abandon ... about"; its first address is TUEZSd…. */
const XPUB = HDKey.fromMasterSeed(mnemonicToSeedSync('abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about'))
  .derive("m/44'/195'/0'").publicExtendedKey;

const json = (o: unknown) => JSON.stringify(o);
type Ev = Record<string, any>;
let node: FakeTron;
let t: TestService;
let rx: Receiver;
let m: Merchant;
let secret: string;
const X = tronAccount();
const hexOf = (address: string) => parseTronAddress(address).key;

beforeAll(async () => {
  [node, rx] = await Promise.all([new FakeTron().start(), startReceiver()]);
  for (let i = 0; i < 3; i++) node.mine([]);
  t = await startTestService({
    // Two confirmations here (mainnet takes 19): `seen` comes from the unconfirmed block.
    networks: [{
      slug: 'tron', name: 'Tron', family: 'tron', environments: [{ slug: 'nile', upstreams: [node.url], confirmations: 2 }],
      tokens: [{ symbol: 'USDT', address: USDT.base58, decimals: 6 }],
    }],
    webhooks: { allow_private_urls: true, timeout_ms: 2000 },
    gateway: { probe_interval_ms: 60_000 },
    payments: { tick_ms: 50 },
  }, { watch: { pollMs: 50, delivery: { pollMs: 50 } } });
  m = await t.merchant({ plan: 'pro' });
  secret = webhookSecretOf(t.store, (await getAccount(t.store, m.userId))!);
}, 60_000);
afterAll(async () => {
  await t?.stop();
  await Promise.all([node?.stop(), rx?.close()]);
});

const { hooksOf, seq, settle, confirm, reorgOut, create, get } = paymentOrders(() => ({ rx, m }), 'tron');
const feed = async () => (await m.call('GET', '/v1/address-watch/events?limit=500')).body.events as Ev[];

describe('payment orders on Tron (TRX and USDT-TRC20)', () => {
  it('settings take the xpub of m/44\'/195\'/0\' and show its first address', async () => {
    const bad = await m.call('PUT', '/v1/payments/settings', json({ xpubs: { tron: 'TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH' } }));
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/^xpubs\.tron: /);
    const s = await m.call('PUT', '/v1/payments/settings', json({ xpubs: { tron: XPUB } }));
    expect(s.body).toMatchObject({ xpubs: { tron: XPUB }, derived: { tron: { first_address: 'TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH', next_index: 0 } } });
  });

  it('TRX paid to a derived address: seen early, aml_check and paid once confirmed, signed webhooks, events feed', async () => {
    const p = await create({ order_id: 'trx-1', amount: '12.5' });
    expect(p).toMatchObject({ address: 'TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH', derivation_index: 0, asset: 'native', asset_symbol: 'TRX', decimals: 6, amount_raw: '12500000' });
    const tx = node.trx(X.hex, hexOf(p.address), '12500000');
    node.mine([tx]);
    await settle(p.payment_id, 1);
    expect(seq(p.payment_id)).toEqual([['seen', tx.txID, null, '0']]);
    node.mine([]);
    await settle(p.payment_id, 3);
    expect(seq(p.payment_id)).toEqual([['seen', tx.txID, null, '0'], ['aml_check', tx.txID, null, '12500000'], ['paid', tx.txID, null, '12500000']]);
    for (const r of hooksOf(p.payment_id)) expect(signatureValid(secret, r)).toBe(true);
    expect(JSON.parse(hooksOf(p.payment_id)[2]!.body)).toMatchObject({ network: 'tron', asset_symbol: 'TRX', amount: '12.5', lifecycle: 'pending>seen>aml_check>paid', aml: { risk_level: 'low' } });
    expect((await feed()).filter((e) => e.watch_id === p.watch_id).map((e) => [e.type, e.direction, e.tx_hash, e.token, e.amount, e.from])).toEqual([
      ['payment', 'in', tx.txID, null, '12500000', X.base58],
    ]);
  });

  it('USDT underpaid; a failed TRC-20 transfer and TRX to the address never count; the rest paid', async () => {
    const p = await create({ order_id: 'usdt-1', amount: '100', asset: 'USDT' });
    expect(p).toMatchObject({ asset: USDT.base58, asset_symbol: 'USDT', decimals: 6, amount_raw: '100000000', derivation_index: 1 });
    const to = hexOf(p.address);
    const t1 = node.trc20(USDT.hex, X.hex, to, 60_000_000n);
    await confirm(node, p.payment_id, [t1], 1, 2);
    expect(seq(p.payment_id)).toEqual([['seen', t1.txID, null, '0'], ['underpaid', t1.txID, null, '60000000']]);
    // The rest, but the call reverts; and TRX, which is not the order's asset.
    const failed = node.trc20(USDT.hex, X.hex, to, 40_000_000n, 'REVERT');
    const trx = node.trx(X.hex, to, '40000000');
    node.mine([failed, trx]);
    node.mine([]);
    await waitFor(async () => (await feed()).some((e) => e.tx_hash === trx.txID));
    await new Promise((r) => setTimeout(r, 400));
    expect(seq(p.payment_id)).toHaveLength(2);
    expect((await feed()).filter((e) => e.watch_id === p.watch_id).map((e) => [e.type, e.tx_hash, e.token, e.amount])).toEqual([
      ['payment', t1.txID, USDT.base58, '60000000'],
      ['other', failed.txID, USDT.base58, '0'],
      ['payment', trx.txID, null, '40000000'],
    ]);
    expect(await get(p.payment_id)).toMatchObject({ status: 'underpaid', amount_received: '60', tx_hashes: [t1.txID] });
    const t2 = node.trc20(USDT.hex, X.hex, to, 40_000_000n);
    await confirm(node, p.payment_id, [t2], 3, 5);
    expect(seq(p.payment_id).slice(2)).toEqual([['seen', t2.txID, null, '60000000'], ['aml_check', t2.txID, null, '100000000'], ['paid', t2.txID, null, '100000000']]);
    expect(await get(p.payment_id)).toMatchObject({ status: 'paid', amount_received: '100', tx_hashes: [t1.txID, t2.txID] });
  });

  it('one seen per transaction under any interleaving: the look-ahead answered after the scanner recorded the block and the engine funded it (issue 23)', async () => {
    const p = await create({ order_id: 'usdt-race', amount: '100', asset: 'USDT' });
    const to = hexOf(p.address);
    const t1 = node.trc20(USDT.hex, X.hex, to, 60_000_000n);
    // The look-ahead's request for the payment's block is held while the block is confirmed,
    // recorded and funded: the order is `underpaid` when the look finally sees the transfer.
    const look = node.hold(node.chain.length);
    node.mine([t1]);
    await look.arrived;
    node.mine([]);
    await settle(p.payment_id, 2);
    const asked = node.paths.length;
    look.release();
    // The look-ahead has moved on (it asks the node again) and a quiet moment passes.
    await waitFor(async () => node.paths.length > asked + 2);
    await settle(p.payment_id, 2);
    expect(seq(p.payment_id)).toEqual([['seen', t1.txID, null, '60000000'], ['underpaid', t1.txID, null, '60000000']]);
    const t2 = node.trc20(USDT.hex, X.hex, to, 40_000_000n);
    await confirm(node, p.payment_id, [t2], 3, 5);
    expect(seq(p.payment_id).slice(2)).toEqual([['seen', t2.txID, null, '60000000'], ['aml_check', t2.txID, null, '100000000'], ['paid', t2.txID, null, '100000000']]);
    expect(await get(p.payment_id)).toMatchObject({ status: 'paid', lifecycle: 'pending>seen>underpaid>seen>aml_check>paid', amount_received: '100' });
  });

  it('USDT to a merchant-given address, rewound by a reorg: back to underpaid (reason reorg, webhook)', async () => {
    // Another open order keeps the network scanned: with nothing watched the scanner stops.
    await create({ order_id: 'usdt-open', amount: '1', asset: 'USDT' });
    const shop = tronAccount();
    const p = await create({ order_id: 'usdt-reorg', amount: '5', asset: USDT.base58, address: shop.hex });
    expect(p).toMatchObject({ address: shop.base58, derivation_index: null, asset: USDT.base58 });
    const tx = node.trc20(USDT.hex, X.hex, shop.hex, 5_000_000n);
    await confirm(node, p.payment_id, [tx], 1, 3);
    expect(seq(p.payment_id).map((s) => s[0])).toEqual(['seen', 'aml_check', 'paid']);
    await reorgOut(node, p.payment_id, 4, secret);
    expect(await get(p.payment_id)).toMatchObject({ status: 'underpaid', reason: 'reorg', amount_received_raw: '0', tx_hashes: [], lifecycle: 'pending>seen>aml_check>paid>underpaid' });
    expect((await feed()).some((e) => e.tx_hash === tx.txID)).toBe(false);
  });
});

async function waitFor(check: () => Promise<boolean>, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}
