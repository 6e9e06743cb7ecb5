import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { haveLitecoind, LITECOIND_MISSING, serveOn, startLitecoind, until, type Litecoind } from './helpers/litecoind.js';
import { signatureValid, startReceiver, type Receiver } from './helpers/receiver.js';
import type { Merchant, TestService } from './helpers/service.js';
import { describeUnless } from './helpers/skips.js';

/**
 * A real UTXO node: Litecoin Core in regtest (Debian ships it; not bitcoind). It speaks
 * Bitcoin Core's JSON-RPC of its 0.21 base: `getblock` verbosity 3 is answered as 2 (no
 * `prevout`), so payouts are resolved through `getrawtransaction` (-txindex), and
 * `invalidateblock` makes a real reorg.
 */

const json = (o: unknown) => JSON.stringify(o);
type Ev = Record<string, any>;

describeUnless(!haveLitecoind && LITECOIND_MISSING, 'a real UTXO node (litecoind -regtest)', () => {
  let node: Litecoind;
  let t: TestService;
  let rx: Receiver;
  let m: Merchant;
  let secret: string;
  const rpc = <T = any>(method: string, params: unknown[] = [], wallet?: string) => node.rpc<T>(method, params, wallet);

  const mine = async (n: number, to: string): Promise<string[]> => rpc<string[]>('generatetoaddress', [n, to]);
  const feed = async (): Promise<Ev[]> => (await m.call('GET', '/v1/address-watch/events?limit=500')).body.events.filter((e: Ev) => e.type !== 'block');

  beforeAll(async () => {
    node = await startLitecoind();
    await rpc('createwallet', ['w']);
    // The watched addresses live in a wallet of their own, so the payer's wallet never spends
    // their coins as its own (it would, and the scanner would rightly report payouts).
    await rpc('createwallet', ['shop']);
    rx = await startReceiver();
    ({ t, m, secret } = await serveOn(node));
    await m.call('PUT', '/v1/address-watch/webhook', json({ url: rx.url, enabled: true, events: { block: false } }));
  }, 90_000);

  afterAll(async () => {
    await t?.stop();
    await rx?.close();
    await node?.stop();
  }, 40_000);

  it('payments to bech32, legacy and P2SH addresses, a payout with change, and a real reorg two blocks deep', async () => {
    const miner = await rpc<string>('getnewaddress', ['', 'bech32'], 'w');
    await mine(101, miner);
    const W = await rpc<string>('getnewaddress', ['', 'bech32'], 'shop');
    const L = await rpc<string>('getnewaddress', ['', 'legacy'], 'shop');
    const S = await rpc<string>('getnewaddress', ['', 'p2sh-segwit'], 'shop');
    const other = await rpc<string>('getnewaddress', ['', 'bech32'], 'w');
    for (const address of [W.toUpperCase(), L, S]) {
      const r = await m.call('POST', '/v1/address-watch/addresses', json({ network_slug: 'litecoin', address }));
      expect(r.body.created, json(r.body)).toBe(true);
    }

    const txW = await rpc<string>('sendtoaddress', [W, 1.5], 'w');
    const txL = await rpc<string>('sendtoaddress', [L, 0.25], 'w');
    const txS = await rpc<string>('sendtoaddress', [S, 0.1], 'w');
    const [h1] = await mine(1, miner);
    await until(async () => (await feed()).length >= 3);
    const row = (e: Ev) => [e.tx_hash, e.address, e.type, e.direction, e.amount, e.block_hash];
    expect((await feed()).map(row).sort()).toEqual([
      [txW, W, 'payment', 'in', '150000000', h1],
      [txL, L, 'payment', 'in', '25000000', h1],
      [txS, S, 'payment', 'in', '10000000', h1],
    ].sort());

    // Spend W's output: 1.0 to another address, 0.4999 back to W (change), 0.0001 fee: a payout of 1.0001 net.
    const [utxo] = await rpc<Array<{ txid: string; vout: number }>>('listunspent', [1, 9999999, [W]], 'shop');
    const raw = await rpc<string>('createrawtransaction', [[{ txid: utxo!.txid, vout: utxo!.vout }], [{ [other]: 1.0 }, { [W]: 0.4999 }]]);
    const signed = await rpc<{ hex: string }>('signrawtransactionwithwallet', [raw], 'shop');
    const spend = await rpc<string>('sendrawtransaction', [signed.hex]);
    const [h2] = await mine(1, miner);
    const txL2 = await rpc<string>('sendtoaddress', [L, 0.05], 'w');
    const [h3] = await mine(1, miner);
    await until(async () => (await feed()).some((e) => e.tx_hash === txL2));
    expect((await feed()).filter((e) => e.block_hash !== h1).map(row)).toEqual([
      [spend, W, 'payout', 'out', '100010000', h2],
      [spend, W, 'other', 'in', '0', h2],
      [txL2, L, 'payment', 'in', '5000000', h3],
    ]);
    expect((await feed()).find((e) => e.type === 'payout')).toMatchObject({ from: W, to: other, token: null });

    // A real reorg two blocks deep: h2 and h3 are invalidated, their transactions go back
    // to the mempool and are mined again on a longer chain.
    await rpc('invalidateblock', [h2]);
    // Another coinbase address: the same second, payee and transactions would rebuild the very block just invalidated.
    const fresh = await mine(3, await rpc<string>('getnewaddress', ['', 'legacy'], 'w'));
    // What the node re-mined is the truth: the spend goes back in; whether the wallet's own
    // transaction does depends on its coin choice (it may have spent an orphaned output).
    const reMined = new Set<string>();
    for (const h of fresh) for (const tx of (await rpc<{ tx: string[] }>('getblock', [h, 1])).tx) reMined.add(tx);
    expect(reMined.has(spend)).toBe(true);
    await until(async () => (await feed()).some((e) => e.tx_hash === spend && fresh.includes(e.block_hash)));
    await until(async () => !reMined.has(txL2) || (await feed()).some((e) => e.tx_hash === txL2 && fresh.includes(e.block_hash)));
    await new Promise((r) => setTimeout(r, 500)); // nothing more comes
    const now = await feed();
    expect(now.some((e) => e.block_hash === h2 || e.block_hash === h3)).toBe(false);
    expect(now.filter((e) => e.block_hash !== h1).map((e) => [e.tx_hash, e.type, e.amount, fresh.includes(e.block_hash)])).toEqual([
      [spend, 'payout', '100010000', true],
      [spend, 'other', '0', true],
      ...(reMined.has(txL2) ? [[txL2, 'payment', '5000000', true]] : []),
    ]);
    const newEvents = reMined.has(txL2) ? 3 : 2;
    await rx.waitFor(() => rx.received.filter((r) => fresh.includes(JSON.parse(r.body).block_hash)).length >= newEvents);
    for (const r of rx.received) expect(signatureValid(secret, r)).toBe(true);
    // In the store: the spend's events of h2 marked removed, its re-mined ones new rows of the
    // new block, and each event exactly one delivery.
    const rows = await t.store.db.selectFrom('watch_events').select(['id', 'block_hash', 'removed']).where('body', 'like', `%${spend}%`).orderBy('id').execute();
    expect(rows.map((e) => [e.block_hash === h2 ? 'h2' : fresh.includes(e.block_hash) ? 'new block' : e.block_hash, e.removed]))
      .toEqual([['h2', 1], ['h2', 1], ['new block', 0], ['new block', 0]]);
    const deliveries = await t.store.db.selectFrom('webhook_deliveries').select('event_id').where('event_id', 'in', rows.map((e) => e.id)).execute();
    expect(deliveries.map((d) => Number(d.event_id)).sort((a, b) => a - b)).toEqual(rows.map((e) => e.id));
  }, 120_000);
});
