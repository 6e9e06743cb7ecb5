import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { haveLitecoind, LITECOIND_MISSING, serveOn, startLitecoind, type Litecoind } from './helpers/litecoind.js';
import { signatureValid, startReceiver, type Receiver } from './helpers/receiver.js';
import { paymentOrders } from './helpers/payments.js';
import type { Merchant, TestService } from './helpers/service.js';
import { describeUnless } from './helpers/skips.js';

/**
 * Payment orders against a real UTXO node: Litecoin Core in regtest (Debian ships it, not
 * bitcoind), its own prefixes (`rltc`) from config, addresses derived from BIP84's testnet
 * account key; the node's wallet pays them, and `invalidateblock` + `generateblock` (a block
 * of only the transactions named) make a real reorg that drops the payment.
 */

/** BIP84's testnet account key of "abandon ... about" (m/84'/1'/0'). */
const VPUB = 'vpub5Y6cjg78GGuNLsaPhmYsiw4gYX3HoQiRBiSwDaBXKUafCt9bNwWQiitDk5VZ5BVxYnQdwoTyXSs2JHRPAgjAvtbBrf8ZhDYe2jWAqvZVnsc';
const json = (o: unknown) => JSON.stringify(o);
type Ev = Record<string, any>;

describeUnless(!haveLitecoind && LITECOIND_MISSING, 'payment orders on a real UTXO node (litecoind -regtest)', () => {
  let node: Litecoind;
  let t: TestService;
  let rx: Receiver;
  let m: Merchant;
  let secret: string;
  let miner: string;
  let s0: string;
  const rpc = <T = any>(method: string, params: unknown[] = [], wallet?: string) => node.rpc<T>(method, params, wallet);

  const mine = async (n: number): Promise<string[]> => rpc<string[]>('generatetoaddress', [n, miner]);
  const { seq, settle, create } = paymentOrders(() => ({ rx, m }), 'litecoin', { waitMs: 30_000, quietMs: 500 });

  beforeAll(async () => {
    node = await startLitecoind();
    await rpc('createwallet', ['w']);
    miner = await rpc<string>('getnewaddress', ['', 'bech32'], 'w');
    await mine(101);
    rx = await startReceiver();
    ({ t, m, secret } = await serveOn(node, { payments: { tick_ms: 50 } }));
    const s = await m.call('PUT', '/v1/payments/settings', json({ xpubs: { utxo: VPUB } }));
    expect(s.body.derived.utxo, json(s.body)).toMatchObject({ network: 'litecoin', next_index: 0 });
    expect(s.body.derived.utxo.first_address).toMatch(/^rltc1q/);
    s0 = s.body.derived.utxo.first_address;
  }, 90_000);

  afterAll(async () => {
    await t?.stop();
    await rx?.close();
    await node?.stop();
  }, 40_000);

  it('LTC orders at derived addresses: one paid, one underpaid, and a paid one rewound by a real reorg', async () => {
    const paid = await create({ order_id: 'ltc-paid', amount: '1.25' });
    const under = await create({ order_id: 'ltc-under', amount: '2' });
    const reorged = await create({ order_id: 'ltc-reorg', amount: '0.5' });
    expect([paid, under, reorged].map((p) => [p.derivation_index, p.asset_symbol, p.decimals])).toEqual([[0, 'LTC', 8], [1, 'LTC', 8], [2, 'LTC', 8]]);
    // The node validates the derived addresses as its own network's.
    for (const p of [paid, under, reorged]) expect((await rpc<{ isvalid: boolean }>('validateaddress', [p.address])).isvalid).toBe(true);
    // The same key with its origin (what payout PSBTs need) is no new key: the counter stays.
    const withOrigin = await m.call('PUT', '/v1/payments/settings', json({ xpubs: { utxo: `[73c5da0a/84'/1'/0']${VPUB}` } }));
    expect(withOrigin.body.derived.utxo, json(withOrigin.body)).toMatchObject({ next_index: 3, first_address: s0 });

    const txPaid = await rpc<string>('sendtoaddress', [paid.address, 1.25], 'w');
    const txUnder = await rpc<string>('sendtoaddress', [under.address, 0.75], 'w');
    await mine(1);
    await settle(paid.payment_id, 3);
    await settle(under.payment_id, 2);
    expect(seq(paid.payment_id)).toEqual([['seen', txPaid, null, '125000000'], ['aml_check', txPaid, null, '125000000'], ['paid', txPaid, null, '125000000']]);
    expect(seq(under.payment_id)).toEqual([['seen', txUnder, null, '75000000'], ['underpaid', txUnder, null, '75000000']]);

    const txR = await rpc<string>('sendtoaddress', [reorged.address, 0.5], 'w');
    const [h] = await mine(1);
    await settle(reorged.payment_id, 3);
    expect(seq(reorged.payment_id).map((s) => s[0])).toEqual(['seen', 'aml_check', 'paid']);
    // A real reorg: the block is invalidated and two blocks without the payment outgrow it
    // (`generateblock` mines only what it is given; the payment waits in the mempool).
    await rpc('invalidateblock', [h]);
    await rpc('generateblock', [miner, []]);
    await rpc('generateblock', [miner, []]);
    await settle(reorged.payment_id, 4);
    expect(seq(reorged.payment_id)[3]).toEqual(['underpaid', null, 'reorg', '0']);
    expect((await m.call('GET', `/v1/payments/${reorged.payment_id}`)).body.payment).toMatchObject({ status: 'underpaid', reason: 'reorg', tx_hashes: [] });
    const feed = (await m.call('GET', '/v1/address-watch/events?limit=500')).body.events as Ev[];
    expect(feed.some((e) => e.tx_hash === txR)).toBe(false);
    expect(feed.filter((e) => e.type === 'payment').map((e) => [e.tx_hash, e.amount]).sort()).toEqual([[txPaid, '125000000'], [txUnder, '75000000']].sort());
    for (const r of rx.received) expect(signatureValid(secret, r)).toBe(true);
  }, 120_000);
});

/**
 * Issue 23 on the real node, two confirmations (as Bitcoin's default): a paid payment lost in a
 * reorg that mines it again, and a `seen` payment whose only block is invalidated.
 */
describeUnless(!haveLitecoind && LITECOIND_MISSING, 'payment orders through real reorgs (litecoind -regtest, 2 confirmations)', () => {
  let node: Litecoind;
  let t: TestService;
  let rx: Receiver;
  let m: Merchant;
  let secret: string;
  let miner: string;
  const rpc = <T = any>(method: string, params: unknown[] = [], wallet?: string) => node.rpc<T>(method, params, wallet);
  const mine = async (n: number): Promise<string[]> => rpc<string[]>('generatetoaddress', [n, miner]);
  const { seq, settle, create, get, hooksOf } = paymentOrders(() => ({ rx, m }), 'litecoin', { waitMs: 30_000, quietMs: 800 });
  const shopAddress = () => rpc<string>('getnewaddress', ['', 'bech32'], 'shop');

  beforeAll(async () => {
    node = await startLitecoind();
    await rpc('createwallet', ['w']);
    await rpc('createwallet', ['shop']);
    miner = await rpc<string>('getnewaddress', ['', 'bech32'], 'w');
    await mine(101);
    rx = await startReceiver();
    const network = node.network();
    network.environments = network.environments.map((e) => ({ ...e, confirmations: 2 }));
    ({ t, m, secret } = await serveOn(node, { networks: [network], payments: { tick_ms: 50 } }));
  }, 90_000);

  afterAll(async () => {
    await t?.stop();
    await rx?.close();
    await node?.stop();
  }, 40_000);

  it('paid, its block invalidated, the same transaction mined again: underpaid (reorg), then seen, aml_check, paid again with the amount', async () => {
    const p = await create({ order_id: 'ltc-remine', amount: '0.5', address: await shopAddress() });
    const tx = await rpc<string>('sendtoaddress', [p.address, 0.5], 'w');
    const [h] = await mine(1);
    await settle(p.payment_id, 1);
    await mine(1);
    await settle(p.payment_id, 3);
    expect(seq(p.payment_id)).toEqual([['seen', tx, null, '0'], ['aml_check', tx, null, '50000000'], ['paid', tx, null, '50000000']]);
    // The payment's block leaves the chain; its transaction goes back to the mempool and the
    // next block (to another address, so no block is mined twice) takes it again.
    await rpc('invalidateblock', [h]);
    miner = await rpc<string>('getnewaddress', ['', 'bech32'], 'w');
    await mine(3);
    await settle(p.payment_id, 7);
    // `seen` from the look-ahead (nothing counted yet) or from the record (counted): either is one.
    expect(seq(p.payment_id).slice(3).map((s) => (s[0] === 'seen' ? s.slice(0, 3) : s))).toEqual([
      ['underpaid', null, 'reorg', '0'], ['seen', tx, null], ['aml_check', tx, null, '50000000'], ['paid', tx, null, '50000000'],
    ]);
    for (const r of hooksOf(p.payment_id)) expect(signatureValid(secret, r)).toBe(true);
    expect(await get(p.payment_id)).toMatchObject({
      status: 'paid', amount_received: '0.5', tx_hashes: [tx], lifecycle: 'pending>seen>aml_check>paid>underpaid>seen>aml_check>paid',
    });
    // The events feed has the transaction once, in its new block.
    const block = (await rpc<{ blockhash: string }>('getrawtransaction', [tx, true])).blockhash;
    const feed = (await m.call('GET', '/v1/address-watch/events?limit=500')).body.events as Ev[];
    expect(feed.filter((e) => e.tx_hash === tx).map((e) => e.block_hash)).toEqual([block]);
  }, 120_000);

  it('seen, then its only block invalidated: underpaid (reorg) at once; mined again: seen, aml_check, paid', async () => {
    const p = await create({ order_id: 'ltc-vanish', amount: '0.25', address: await shopAddress() });
    const tx = await rpc<string>('sendtoaddress', [p.address, 0.25], 'w');
    const [h] = await mine(1);
    await settle(p.payment_id, 1);
    expect(seq(p.payment_id)).toEqual([['seen', tx, null, '0']]);
    await rpc('invalidateblock', [h]);
    await settle(p.payment_id, 2);
    expect(seq(p.payment_id)[1]).toEqual(['underpaid', null, 'reorg', '0']);
    expect(await get(p.payment_id)).toMatchObject({ status: 'underpaid', reason: 'reorg', amount_received: '0', tx_hashes: [] });
    miner = await rpc<string>('getnewaddress', ['', 'bech32'], 'w');
    await mine(2);
    await settle(p.payment_id, 5);
    expect(seq(p.payment_id).slice(2).map((s) => (s[0] === 'seen' ? s.slice(0, 3) : s))).toEqual([['seen', tx, null], ['aml_check', tx, null, '25000000'], ['paid', tx, null, '25000000']]);
    expect(await get(p.payment_id)).toMatchObject({ status: 'paid', amount_received: '0.25', lifecycle: 'pending>seen>underpaid>seen>aml_check>paid' });
  }, 120_000);
});
