import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getAccount, webhookSecretOf } from '../src/store/index.js';
import { FakeBitcoinCore, regtestAddress, type FakeTx } from './helpers/fake-bitcoin.js';
import { signatureValid, startReceiver, type Receiver } from './helpers/receiver.js';
import { paymentOrders } from './helpers/payments.js';
import { startTestService, type Merchant, type TestService } from './helpers/service.js';

/** BIP84's testnet account key of "abandon ... about" (m/84'/1'/0'): regtest orders take a test-network key. */
const VPUB = 'vpub5Y6cjg78GGuNLsaPhmYsiw4gYX3HoQiRBiSwDaBXKUafCt9bNwWQiitDk5VZ5BVxYnQdwoTyXSs2JHRPAgjAvtbBrf8ZhDYe2jWAqvZVnsc';
/** Its first receive address in regtest prefixes: BIP84's tb1q6rz28mcfaxtmd6v789l9rrlrusdprr9pqcpvkl, hrp bcrt. */
const FIRST = 'bcrt1q6rz28mcfaxtmd6v789l9rrlrusdprr9pz3cppk';
const ZPUB = 'zpub6rFR7y4Q2AijBEqTUquhVz398htDFrtymD9xYYfG1m4wAcvPhXNfE3EfH1r1ADqtfSdVCToUG868RvUUkgDKf31mGDtKsAYz2oz2AGutZYs';

const json = (o: unknown) => JSON.stringify(o);
type Ev = Record<string, any>;
let node: FakeBitcoinCore;
let t: TestService;
let rx: Receiver;
let m: Merchant;
let secret: string;
const payer = regtestAddress('wpkh');
const sanctioned = regtestAddress('pkh');
/** Unspent coinbase outputs the payers spend, one per payment. */
const coins: Record<string, Array<{ txid: string; vout: number }>> = { [payer]: [], [sanctioned]: [] };

beforeAll(async () => {
  [node, rx] = await Promise.all([new FakeBitcoinCore().start(), startReceiver()]);
  for (let i = 0; i < 12; i++) {
    const who = i % 4 === 3 ? sanctioned : payer;
    coins[who]!.push({ txid: node.mine([], who).tx[0]!.txid, vout: 0 });
  }
  const dir = mkdtempSync(join(tmpdir(), 'rpcctl-sanctions-'));
  writeFileSync(join(dir, 'sdn.txt'), `XBT ${sanctioned}\n`);
  t = await startTestService({
    // Bitcoin's own confirmations (2): `seen` comes from the unconfirmed block, the rest once it is confirmed.
    networks: [{ slug: 'bitcoin', name: 'Bitcoin', family: 'utxo', environments: [{ slug: 'regtest', upstreams: [node.url], confirmations: 2 }] }],
    webhooks: { allow_private_urls: true, timeout_ms: 2000 },
    gateway: { probe_interval_ms: 60_000 },
    payments: { aml: { provider: 'sanctions-list', sanctions_file: join(dir, 'sdn.txt') }, tick_ms: 50 },
  }, { watch: { pollMs: 50, delivery: { pollMs: 50 } } });
  m = await t.merchant({ plan: 'pro' });
  secret = webhookSecretOf(t.store, (await getAccount(t.store, m.userId))!);
}, 60_000);
afterAll(async () => {
  await t?.stop();
  await Promise.all([node?.stop(), rx?.close()]);
});

/** A payment from `from` (spending one of its coins): each output `[address, btc]`, change back to the payer. */
function pay(from: string, outputs: Array<[string, string]>): FakeTx {
  return node.tx([coins[from]!.shift()!], [...outputs.map(([address, btc]) => ({ address, btc })), { address: from, btc: '1.00000000' }]);
}

const { hooksOf, seq, settle, confirm, reorgOut, create, get } = paymentOrders(() => ({ rx, m }), 'bitcoin');

describe('payment orders on a UTXO chain (Bitcoin Core JSON-RPC)', () => {
  it('settings take a zpub/vpub (network-checked at the order) and show its first address', async () => {
    const bad = await m.call('PUT', '/v1/payments/settings', json({ xpubs: { utxo: 'zpub-nope' } }));
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/^xpubs\.utxo: is not a valid extended public key/);
    // A mainnet key: valid, but its wallet would never look for regtest coins.
    expect((await m.call('PUT', '/v1/payments/settings', json({ xpubs: { utxo: ZPUB } }))).status).toBe(200);
    const wrong = await m.call('POST', '/v1/payments', json({ order_id: 'wrong-net', network_slug: 'bitcoin', amount: '0.1' }));
    expect(wrong.status).toBe(400);
    expect(wrong.body.error).toMatch(/mainnet key \(zpub\); bitcoin-regtest takes a test-network key/);
    const s = await m.call('PUT', '/v1/payments/settings', json({ xpubs: { utxo: VPUB } }));
    expect(s.body).toMatchObject({ xpubs: { utxo: VPUB }, derived: { utxo: { first_address: FIRST, network: 'bitcoin', next_index: 0 } } });
    expect(s.body.derived.evm).toBeUndefined();
  });

  it('paid: the outputs of one transaction to the order address add up; seen early, paid once confirmed, signed webhooks, events feed', async () => {
    const p = await create({ order_id: 'btc-exact', amount: '0.015' });
    expect(p).toMatchObject({ address: FIRST, derivation_index: 0, asset: 'native', asset_symbol: 'BTC', decimals: 8, amount_raw: '1500000', confirmations: 2 });
    const tx = pay(payer, [[p.address, '0.01000000'], [regtestAddress('tr'), '0.30000000'], [p.address, '0.00500000']]);
    node.mine([tx]);
    // One block: below the confirmations, only `seen`.
    await settle(p.payment_id, 1);
    expect(seq(p.payment_id)).toEqual([['seen', tx.txid, null, '0']]);
    node.mine([]);
    await settle(p.payment_id, 3);
    expect(seq(p.payment_id)).toEqual([['seen', tx.txid, null, '0'], ['aml_check', tx.txid, null, '1500000'], ['paid', tx.txid, null, '1500000']]);
    hooksOf(p.payment_id).forEach((r, i) => {
      expect(signatureValid(secret, r)).toBe(true);
      expect(r.headers['x-webhook-id']).toBe(`${p.payment_id}_${i + 1}`);
    });
    expect(JSON.parse(hooksOf(p.payment_id)[2]!.body)).toMatchObject({
      product: 'payments', type: 'payment_order', network: 'bitcoin', address: FIRST, amount: '0.015', amount_received: '0.015', asset_symbol: 'BTC',
      lifecycle: 'pending>seen>aml_check>paid', aml: { provider: 'sanctions-list', risk_level: 'low' },
    });
    expect(await get(p.payment_id)).toMatchObject({ status: 'paid', amount_received_raw: '1500000', tx_hashes: [tx.txid], overpaid: false });
    const events = (await m.call('GET', '/v1/address-watch/events?limit=500')).body.events as Ev[];
    expect(events.filter((e) => e.watch_id === p.watch_id).map((e) => [e.type, e.direction, e.tx_hash, e.amount, e.from])).toEqual([
      ['payment', 'in', tx.txid, '1500000', payer],
    ]);
  });

  it('underpaid, then topped up by a second transaction: paid', async () => {
    const p = await create({ order_id: 'btc-under', amount: '0.02' });
    expect(p.derivation_index).toBe(1);
    const t1 = pay(payer, [[p.address, '0.01000000']]);
    await confirm(node, p.payment_id, [t1], 1, 2);
    expect(seq(p.payment_id)).toEqual([['seen', t1.txid, null, '0'], ['underpaid', t1.txid, null, '1000000']]);
    expect(await get(p.payment_id)).toMatchObject({ status: 'underpaid', amount_received: '0.01' });
    const t2 = pay(payer, [[p.address, '0.01000000']]);
    await confirm(node, p.payment_id, [t2], 3, 5);
    expect(seq(p.payment_id).slice(2)).toEqual([['seen', t2.txid, null, '1000000'], ['aml_check', t2.txid, null, '2000000'], ['paid', t2.txid, null, '2000000']]);
    expect((await get(p.payment_id)).tx_hashes).toEqual([t1.txid, t2.txid]);
  });

  it('overpaid: more than asked is paid, overpaid: true', async () => {
    const p = await create({ order_id: 'btc-over', amount: '0.001' });
    const tx = pay(payer, [[p.address, '0.00150000']]);
    await confirm(node, p.payment_id, [tx], 1, 3);
    expect(seq(p.payment_id)).toEqual([['seen', tx.txid, null, '0'], ['aml_check', tx.txid, null, '150000'], ['paid', tx.txid, null, '150000']]);
    expect(await get(p.payment_id)).toMatchObject({ status: 'paid', overpaid: true, amount_received: '0.0015' });
  });

  it('a sanctioned sender (the input\'s address) fails the order', async () => {
    const p = await create({ order_id: 'btc-sanctioned', amount: '0.001' });
    const tx = pay(sanctioned, [[p.address, '0.00100000']]);
    await confirm(node, p.payment_id, [tx], 1, 3);
    expect(seq(p.payment_id).map((s) => s[0])).toEqual(['seen', 'aml_check', 'failed']);
    expect(await get(p.payment_id)).toMatchObject({ status: 'failed', reason: 'aml_rejected', aml: { risk_level: 'severe', details: [{ address: sanctioned }] } });
  });

  it('rewound by a reorg: the paid order goes back to underpaid (reason reorg, webhook), then is paid when the transaction is mined again', async () => {
    // Another open order keeps the network scanned (a shop has some): with nothing watched the
    // scanner stops and would not see a reorg deeper than the confirmations after `paid`.
    await create({ order_id: 'btc-open', amount: '1' });
    const p = await create({ order_id: 'btc-reorg', amount: '0.005' });
    const tx = pay(payer, [[p.address, '0.00500000']]);
    await confirm(node, p.payment_id, [tx], 1, 3);
    expect(seq(p.payment_id).map((s) => s[0])).toEqual(['seen', 'aml_check', 'paid']);
    // Both blocks replaced by a longer chain without the transaction.
    await reorgOut(node, p.payment_id, 4, secret);
    expect(await get(p.payment_id)).toMatchObject({ status: 'underpaid', reason: 'reorg', amount_received_raw: '0', tx_hashes: [] });
    const events = (await m.call('GET', '/v1/address-watch/events?limit=500')).body.events as Ev[];
    expect(events.some((e) => e.tx_hash === tx.txid)).toBe(false);
    // The transaction is mined again: the order, payable again, completes.
    node.mine([tx]);
    node.mine([]);
    // Counted again with the usual webhooks: its sighting left with its block, so it is `seen` again (issue 23).
    await settle(p.payment_id, 7);
    expect(seq(p.payment_id).slice(4).map((s) => s[0])).toEqual(['seen', 'aml_check', 'paid']);
    expect(await get(p.payment_id)).toMatchObject({ status: 'paid', amount_received_raw: '500000', tx_hashes: [tx.txid], lifecycle: 'pending>seen>aml_check>paid>underpaid>seen>aml_check>paid' });
  });
});
