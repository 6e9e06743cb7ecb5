import { base64 } from '@scure/base';
import { Transaction } from '@scure/btc-signer';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { haveLitecoind, LITECOIND_MISSING, type Litecoind, walletMerchant, type WalletMerchant } from './helpers/litecoind.js';
import { paymentOrders } from './helpers/payments.js';
import { signatureValid, type Receiver } from './helpers/receiver.js';
import type { Merchant, TestService } from './helpers/service.js';
import { describeUnless } from './helpers/skips.js';
import { until } from './helpers/wait.js';

/**
 * A payout's transaction replaced by a fee bump (BIP125), whole, on Litecoin Core in regtest:
 * rpcctl's PSBT signals replaceability, the merchant's wallet (BIP84's test-vector keys, as in
 * payouts-e2e-litecoind) signs it, rpcctl broadcasts it; the wallet then signs a bump of it (the
 * same inputs, less change: what "increase fee" in a wallet builds) and rpcctl takes it as the
 * replacement and relays it, the node evicting the first. The lines follow whichever of the two
 * the chain keeps: the bump when it is mined; the first when the bump never reached the node;
 * the first when a reorg drops the bump's block and mines the first in its place. A second
 * payment sharing no input with the first is refused (409) and never relayed.
 */
/** BIP125: an input's nSequence below 0xfffffffe opts the transaction in to replacement. */
const RBF_SEQUENCE = 0xfffffffd;
/** What a bump takes from the change: well above the first's fee, as BIP125 asks of a replacement. */
const BUMP_SATS = 20_000n;
const json = (o: unknown) => JSON.stringify(o);

type Line = { line: number; status: string; tx_hash: string | null; expected_tx: string | null; amount: string; address: string };

describeUnless(!haveLitecoind && LITECOIND_MISSING, 'a payout fee-bumped by a BIP125 replacement (litecoind -regtest)', () => {
  let node: Litecoind;
  let t: TestService;
  let rx: Receiver;
  let m: Merchant;
  let secret: string;
  let miner: string;
  const rpc = <T = any>(method: string, params: unknown[] = [], wallet?: string) => node.rpc<T>(method, params, wallet);
  const mine = (n: number) => rpc<string[]>('generatetoaddress', [n, miner]);
  const mempool = async () => (await rpc<string[]>('getrawmempool')).sort();
  const { create } = paymentOrders(() => ({ rx, m }), 'litecoin', { waitMs: 30_000 });

  let merchant: WalletMerchant;
  beforeAll(async () => {
    // Litecoin Core relays no replacement unless told to (Bitcoin Core does by default).
    merchant = await walletMerchant({ finalityDepth: 2, wallets: ['payee'], args: ['-mempoolreplacement=1'] });
    ({ node, t, m, secret, rx, miner } = merchant);
    expect((await m.call('PUT', '/v1/address-watch/webhook', json({ url: rx.url, enabled: true }))).status).toBeLessThan(300);
    // The merchant's coins: five paid orders of 1 LTC, one per PSBT below.
    const orders = [];
    for (let i = 0; i < 5; i++) orders.push(await create({ order_id: `funds-${i}`, amount: '1' }));
    for (const o of orders) await rpc('sendtoaddress', [o.address, 1], 'w');
    await mine(1);
    for (const o of orders) await until(async () => ((await m.call('GET', `/v1/payments/${o.payment_id}`)).body.payment.status === 'paid' ? true : undefined), 30_000);
  }, 120_000);

  afterAll(async () => { await merchant?.stop(); }, 40_000);

  /** A payout of `amounts` to new addresses of the payee's wallet. */
  async function payout(amounts: string[]): Promise<{ id: string; addresses: string[] }> {
    const addresses: string[] = [];
    for (const _ of amounts) addresses.push(await rpc<string>('getnewaddress', ['', 'bech32'], 'payee'));
    const r = await m.call('POST', '/v1/payouts', json({ lines: amounts.map((amount, i) => ({ network: 'litecoin', address: addresses[i], amount })) }));
    expect(r.status, json(r.body)).toBe(200);
    return { id: r.body.payout.payout_id, addresses };
  }
  const linesOf = async (id: string) => (await m.call('GET', `/v1/payouts/${id}`)).body.payout.lines as Line[];
  const linesAre = (id: string, status: string) => until(async () => {
    const lines = await linesOf(id);
    return lines.every((l) => l.status === status) ? lines : undefined;
  }, 30_000);
  /** The unsigned PSBT the API builds for what the payout still owes. */
  const psbtOf = async (id: string) => {
    const r = await m.call('GET', `/v1/payouts/${id}/psbt`);
    expect(r.status, json(r.body)).toBe(200);
    return r.body.psbt as string;
  };
  /** Signed by the merchant's wallet and finalized: the raw transaction, hex. */
  const sign = async (psbt: string) => {
    const processed = await rpc<{ psbt: string; complete: boolean }>('walletprocesspsbt', [psbt], 'merchant');
    expect(processed.complete).toBe(true);
    const final = await rpc<{ hex: string; complete: boolean }>('finalizepsbt', [processed.psbt]);
    expect(final.complete).toBe(true);
    return final.hex;
  };
  /** The same PSBT paying BUMP_SATS more fee out of its change (the last output), signed: a replacement. */
  const bump = (psbt: string) => {
    const tx = Transaction.fromPSBT(base64.decode(psbt));
    const change = tx.outputsLength - 1;
    tx.updateOutput(change, { amount: tx.getOutput(change).amount! - BUMP_SATS });
    return sign(base64.encode(tx.toPSBT()));
  };
  const submit = (id: string, signed: string, broadcast = true) => m.call('POST', `/v1/payouts/${id}/transaction`, json({ signed_transaction: signed, broadcast }));
  const submitted = async (id: string, signed: string, broadcast = true) => {
    const r = await submit(id, signed, broadcast);
    expect(r.status, json(r.body)).toBe(200);
    return r.body.tx_hash as string;
  };
  /** Each line's signed `payout.*` webhooks past its first, as [line, event, tx_hash], once `n` of them are in. */
  const movesOf = async (id: string, n: number) => {
    const of = () => rx.received.filter((r) => JSON.parse(r.body).payout_id === id && JSON.parse(r.body).sequence > 0);
    await rx.waitFor(() => of().length >= n, 30_000);
    expect(of().every((r) => signatureValid(secret, r))).toBe(true);
    return of().map((r) => JSON.parse(r.body)).sort((a, b) => a.line - b.line || a.sequence - b.sequence).map((b) => [b.line, b.event, b.tx_hash]);
  };
  const received = (address: string) => rpc<number>('getreceivedbyaddress', [address, 0], 'payee');

  it('a fee bump replaces the first: taken, relayed (the first evicted), the lines sent and completed on the bump; a second PSBT is refused 409', async () => {
    const { id, addresses } = await payout(['0.1', '0.2']);
    const psbt = await psbtOf(id);
    const decoded = await rpc<{ tx: { vin: Array<{ txid: string; vout: number; sequence: number }> }; fee: number }>('decodepsbt', [psbt]);
    expect(decoded.tx.vin.map((i) => i.sequence)).toEqual(decoded.tx.vin.map(() => RBF_SEQUENCE));
    const first = await submitted(id, await sign(psbt));
    expect(await mempool()).toEqual([first]);
    // The node reads it as BIP125-replaceable: what lets it take the bump below.
    expect((await rpc<Record<string, unknown>>('getmempoolentry', [first]))['bip125-replaceable']).toBe(true);

    // A second PSBT for the lines would spend another coin (the first's is spent in the mempool):
    // signed by a wallet that broadcasts as it signs, both could confirm and pay twice. Refused
    // before it exists; what may follow is a replacement of the first.
    const again = await m.call('GET', `/v1/payouts/${id}/psbt`);
    expect(again.status, json(again.body)).toBe(409);
    expect(again.body.error).toBe(`${id}: lines 1, 2 already have a signed transaction recorded (${first}): `
      + 'bump its fee in your wallet (a BIP125 replacement spending the same coins) and submit that, or cancel the lines');
    expect(await mempool()).toEqual([first]);
    expect((await linesOf(id)).map((l) => l.expected_tx)).toEqual([first, first]);

    // The bump: the same inputs, a higher fee. Taken as the replacement, relayed; the node evicts the first.
    const bumpHex = await bump(psbt);
    const second = await submitted(id, bumpHex);
    expect(second).not.toBe(first);
    expect(await mempool()).toEqual([second]);
    const bumpFee = (await rpc<{ fees: { base: number } }>('getmempoolentry', [second])).fees.base;
    expect(Math.round((bumpFee - decoded.fee) * 1e8)).toBe(Number(BUMP_SATS));
    expect((await linesOf(id)).map((l) => [l.status, l.expected_tx])).toEqual([['awaiting_payment', second], ['awaiting_payment', second]]);
    // The same bump again changes nothing.
    expect(await submitted(id, bumpHex)).toBe(second);

    await mine(1);
    expect((await linesAre(id, 'sent')).map((l) => l.tx_hash)).toEqual([second, second]);
    // finality_depth 2: one block on top.
    await mine(1);
    expect((await linesAre(id, 'completed')).map((l) => l.tx_hash)).toEqual([second, second]);
    expect(await movesOf(id, 4)).toEqual([[1, 'payout.sent', second], [1, 'payout.completed', second], [2, 'payout.sent', second], [2, 'payout.completed', second]]);
    expect(await Promise.all(addresses.map(received))).toEqual([0.1, 0.2]);
    // Paid: no line takes a transaction any more.
    expect((await submit(id, bumpHex)).status).toBe(409);
    // Each transaction taken is in the audit log (the bump twice: submitted twice); the refused ones are not.
    const audit = (await m.call('GET', '/v1/account/audit?limit=50')).body.entries as Array<{ action: string; target: { id: string }; changes: { tx_hash: string } }>;
    expect(audit.filter((e) => e.target.id === id).map((e) => [e.action, e.changes.tx_hash]).reverse())
      .toEqual([['payout.create', undefined], ['payout.transaction', first], ['payout.transaction', second], ['payout.transaction', second]]);
  }, 120_000);

  it('the first confirms though its bump was recorded (the bump never reached the node): the line follows the first', async () => {
    const { id, addresses } = await payout(['0.3']);
    const psbt = await psbtOf(id);
    const first = await submitted(id, await sign(psbt));
    // Kept by the merchant, never relayed (`broadcast: false`): recorded beside the first.
    const second = await submitted(id, await bump(psbt), false);
    expect((await linesOf(id))[0]!.expected_tx).toBe(second);
    expect(await mempool()).toEqual([first]);

    await mine(1);
    expect((await linesAre(id, 'sent'))[0]!.tx_hash).toBe(first);
    await mine(1);
    expect((await linesAre(id, 'completed'))[0]!.tx_hash).toBe(first);
    expect(await movesOf(id, 2)).toEqual([[1, 'payout.sent', first], [1, 'payout.completed', first]]);
    expect(await received(addresses[0]!)).toBe(0.3);
  }, 60_000);

  it('the bump mined, then a reorg mines the first in its place: taken back, sent and completed on the first, never completed on the bump', async () => {
    const { id, addresses } = await payout(['0.4']);
    const psbt = await psbtOf(id);
    const firstHex = await sign(psbt);
    const first = await submitted(id, firstHex);
    const second = await submitted(id, await bump(psbt));
    expect(await mempool()).toEqual([second]);
    const [block] = await mine(1);
    expect((await linesAre(id, 'sent'))[0]!.tx_hash).toBe(second);

    // The bump's block leaves the chain; a block with the first takes its place (the bump,
    // back in the mempool, conflicts with it and goes), and the chain grows past where the
    // bump's block would have been final.
    await rpc('invalidateblock', [block]);
    expect(await mempool()).toEqual([second]);
    await rpc('generateblock', [miner, [firstHex]]);
    expect(await mempool()).toEqual([]);
    for (let i = 0; i < 2; i++) await rpc('generateblock', [miner, []]);
    expect((await linesAre(id, 'completed'))[0]!.tx_hash).toBe(first);
    expect(await movesOf(id, 4)).toEqual([
      [1, 'payout.sent', second], [1, 'payout.awaiting_payment', null], [1, 'payout.sent', first], [1, 'payout.completed', first],
    ]);
    expect(await received(addresses[0]!)).toBe(0.4);
  }, 60_000);
});
