import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { haveLitecoind, LITECOIND_MISSING, serveOn, startLitecoind, type Litecoind } from './helpers/litecoind.js';
import { signatureValid, startReceiver, type Receiver } from './helpers/receiver.js';
import { paymentOrders } from './helpers/payments.js';
import type { Merchant, TestService } from './helpers/service.js';

/**
 * Payment orders against a real UTXO node: Litecoin Core in regtest (Debian ships it, not
 * bitcoind), its own prefixes (`rltc`) from config, addresses derived from BIP84's testnet
 * account key; the node's wallet pays them, and `invalidateblock` + `generateblock` (a block
 * of only the transactions named) make a real reorg that drops the payment.
 */
if (!haveLitecoind) console.warn(`payments-litecoind: skipped: ${LITECOIND_MISSING}`);

/** BIP84's testnet account key of "abandon ... about" (m/84'/1'/0'). */
const VPUB = 'vpub5Y6cjg78GGuNLsaPhmYsiw4gYX3HoQiRBiSwDaBXKUafCt9bNwWQiitDk5VZ5BVxYnQdwoTyXSs2JHRPAgjAvtbBrf8ZhDYe2jWAqvZVnsc';
const json = (o: unknown) => JSON.stringify(o);
type Ev = Record<string, any>;

describe.skipIf(!haveLitecoind)('payment orders on a real UTXO node (litecoind -regtest)', () => {
  let node: Litecoind;
  let t: TestService;
  let rx: Receiver;
  let m: Merchant;
  let secret: string;
  let miner: string;
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
