import { base64, hex } from '@scure/base';
import { Address as BtcAddress, OutScript, Transaction } from '@scure/btc-signer';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { haveLitecoind, LITECOIND_MISSING, until, type Litecoind, walletMerchant, type WalletMerchant } from './helpers/litecoind.js';
import { paymentOrders } from './helpers/payments.js';
import { signatureValid, type Receiver } from './helpers/receiver.js';
import { rawCall, type Merchant, type TestService } from './helpers/service.js';
import { describeUnless } from './helpers/skips.js';

/**
 * The refund of an overpaid Litecoin order, whole: the API answers a refund link, the customer
 * gives an address of their own wallet through it, the merchant fetches the PSBT, Litecoin Core
 * (the merchant's wallet: BIP84's test-vector keys, imported by `importmulti` into a legacy
 * wallet) signs and finalizes it, rpcctl takes the signed transaction and broadcasts it; mined,
 * `invalidateblock` and a longer chain take it back before it is final, mined again it is sent
 * and final (`finality_depth` 3): `completed`; a reorg deeper than that after completed takes it
 * back too (its watch is held a second window), and mined again it completes again. Signed
 * webhooks in order and the audit log of each step.
 */
const REGTEST = { bech32: 'rltc', pubKeyHash: 111, scriptHash: 58, wif: 0xef };
const json = (o: unknown) => JSON.stringify(o);

describeUnless(!haveLitecoind && LITECOIND_MISSING, 'a refund through its link, signed by Litecoin Core, tracked through a reorg (litecoind -regtest)', () => {
  let node: Litecoind;
  let t: TestService;
  let rx: Receiver;
  let m: Merchant;
  let secret: string;
  let miner: string;
  const rpc = <T = any>(method: string, params: unknown[] = [], wallet?: string) => node.rpc<T>(method, params, wallet);
  const mine = (n: number) => rpc<string[]>('generatetoaddress', [n, miner]);
  const { settle, create } = paymentOrders(() => ({ rx, m }), 'litecoin', { waitMs: 30_000, quietMs: 300 });

  let merchant: WalletMerchant;
  beforeAll(async () => {
    merchant = await walletMerchant({ finalityDepth: 3, wallets: ['customer'] });
    ({ node, t, m, secret, rx, miner } = merchant);
  }, 90_000);

  afterAll(async () => { await merchant?.stop(); }, 40_000);

  const refundOf = async (id: string) => (await m.call('GET', `/v1/payouts/${id}`)).body.payout;
  const lineIs = async (id: string, status: string) => {
    let line: any;
    await until(async () => (line = (await refundOf(id)).lines[0]).status === status, 30_000);
    return line;
  };
  const refundHooks = (id: string) => rx.received.filter((r) => JSON.parse(r.body).refund_id === id);

  it('overpaid, refunded through the link to the customer\'s wallet, signed by the wallet, sent, reorged out, sent again and completed', async () => {
    const order = await create({ order_id: 'ltc-over', amount: '1.25' });
    const funding = await rpc<string>('sendtoaddress', [order.address, 1.5], 'w');
    await mine(1);
    await until(async () => (await m.call('GET', `/v1/payments/${order.payment_id}`)).body.payment.status === 'paid');

    // The refund of what arrived beyond the amount, to an address the customer will give.
    const created = await m.call('POST', `/v1/payments/${order.payment_id}/refunds`, json({ amount: 'overpaid' }));
    expect(created.status, json(created.body)).toBe(200);
    const refund = created.body.refund;
    expect(refund).toMatchObject({ amount: '0.25', amount_kind: 'overpaid', status: 'awaiting_address', address: null, payment_request: null });
    const id: string = refund.refund_id;
    const link = new URL(refund.refund_link.url).pathname;
    expect((await rawCall(t.baseUrl, 'GET', `${link}/state`)).body).toMatchObject({ status: 'awaiting_address', amount: '0.25', accepts_address: true });
    // Nothing to sign before there is an address.
    expect((await m.call('GET', `/v1/payouts/${id}/psbt`)).status).toBe(409);

    const customer = await rpc<string>('getnewaddress', ['', 'bech32'], 'customer');
    const claimed = await rawCall(t.baseUrl, 'POST', `${link}/address`, json({ address: customer }), { 'content-type': 'application/json' });
    expect(claimed.status, json(claimed.body)).toBe(200);
    expect(claimed.body).toMatchObject({ status: 'awaiting_payment', address: customer });
    expect((await refundOf(id)).lines[0].payment_request.uri).toMatch(/^litecoin:rltc1/i);

    // The PSBT spends the order's coin; the wallet signs it as it is.
    const psbt = await m.call('GET', `/v1/payouts/${id}/psbt`);
    expect(psbt.status, json(psbt.body)).toBe(200);
    const decoded = await rpc<{ tx: { vin: Array<{ txid: string }> }; outputs: Array<unknown> }>('decodepsbt', [psbt.body.psbt]);
    expect(decoded.tx.vin.map((i) => i.txid)).toEqual([funding]);

    // Edited to pay the miner in place of the customer, signed by the wallet: refused, nothing changes.
    const edited = Transaction.fromPSBT(base64.decode(psbt.body.psbt));
    const customerScript = outScript(customer);
    const toCustomer = [...Array(edited.outputsLength).keys()].find((i) => hex.encode(edited.getOutput(i).script!) === customerScript)!;
    expect(toCustomer).toBeGreaterThanOrEqual(0);
    edited.updateOutput(toCustomer, { script: hex.decode(outScript(miner)) });
    const editedSigned = await rpc<{ psbt: string; complete: boolean }>('walletprocesspsbt', [base64.encode(edited.toPSBT())], 'merchant');
    expect(editedSigned.complete).toBe(true);
    const editedHex = (await rpc<{ hex: string }>('finalizepsbt', [editedSigned.psbt])).hex;
    const refused = await m.call('POST', `/v1/payouts/${id}/transaction`, json({ signed_transaction: editedHex }));
    expect(refused.status, json(refused.body)).toBe(400);
    expect(refused.body.error).toMatch(/is not paid/);
    expect((await refundOf(id)).lines[0]).toMatchObject({ status: 'awaiting_payment', expected_tx: null, tx_hash: null });
    expect((await rpc<string[]>('getrawmempool')).length).toBe(0);

    const signed = await rpc<{ psbt: string; complete: boolean }>('walletprocesspsbt', [psbt.body.psbt], 'merchant');
    expect(signed.complete).toBe(true);
    const final = await rpc<{ hex: string; complete: boolean }>('finalizepsbt', [signed.psbt]);
    expect(final.complete).toBe(true);
    const submitted = await m.call('POST', `/v1/payouts/${id}/transaction`, json({ signed_transaction: final.hex }));
    expect(submitted.status, json(submitted.body)).toBe(200);
    const txHash: string = submitted.body.tx_hash;
    expect(await rpc<string[]>('getrawmempool')).toEqual([txHash]);

    const [block] = await mine(1);
    expect(await lineIs(id, 'sent')).toMatchObject({ tx_hash: txHash });

    // Before it is final, the block with the refund leaves the chain (a longer chain without it):
    // back to awaiting payment, the transaction back in the mempool.
    await rpc('invalidateblock', [block]);
    expect(await rpc<string[]>('getrawmempool')).toContain(txHash);
    for (let i = 0; i < 2; i++) await rpc('generateblock', [miner, []]);
    expect(await lineIs(id, 'awaiting_payment')).toMatchObject({ tx_hash: null });
    // Mined again: sent, then completed three blocks deep.
    await mine(1);
    expect(await lineIs(id, 'sent')).toMatchObject({ tx_hash: txHash });
    await mine(2);
    expect((await refundOf(id)).lines[0].status).toBe('sent');
    await mine(1);
    const completed = await lineIs(id, 'completed');
    expect(completed).toMatchObject({ tx_hash: txHash });

    // After completed, a reorg deeper than finality_depth takes the block off (a longer chain
    // without it): the watch is held for a second window, so it is seen, and the line goes back.
    const watched = async () => ((await m.call('GET', '/v1/address-watch/addresses')).body.addresses as Array<{ address: string }>).some((a) => a.address === customer);
    expect(await watched()).toBe(true);
    const height = (await rpc<{ blockheight: number }>('gettransaction', [txHash], 'merchant')).blockheight;
    await rpc('invalidateblock', [await rpc<string>('getblockhash', [height])]);
    for (let i = 0; i < 4; i++) await rpc('generateblock', [miner, []]);
    expect(await lineIs(id, 'awaiting_payment')).toMatchObject({ tx_hash: null });
    // Mined again, it counts again: sent, completed; a second window later the watch goes.
    await mine(1);
    expect(await lineIs(id, 'sent')).toMatchObject({ tx_hash: txHash });
    await mine(2);
    expect(await lineIs(id, 'completed')).toMatchObject({ tx_hash: txHash });
    expect(await watched()).toBe(true);
    await mine(3);
    await until(async () => !(await watched()), 30_000);
    // The customer's wallet holds the refund.
    expect(await rpc<number>('getreceivedbyaddress', [customer, 1], 'customer')).toBe(0.25);

    // One signed webhook per state, the first one's at creation, in order, each naming the order.
    await settle(order.payment_id, 3);
    await rx.waitFor(() => refundHooks(id).length >= 9, 30_000);
    const hooks = refundHooks(id);
    const events = hooks.map((h) => JSON.parse(h.body));
    expect(events.map((e) => [e.event, e.tx_hash])).toEqual([['refund.awaiting_address', null], ['refund.awaiting_payment', null], ['refund.sent', txHash],
      ['refund.awaiting_payment', null], ['refund.sent', txHash], ['refund.completed', txHash],
      ['refund.awaiting_payment', null], ['refund.sent', txHash], ['refund.completed', txHash]]);
    for (const e of events) expect(e).toMatchObject({ type: 'refund', refund_id: id, payment_id: order.payment_id, order_id: 'ltc-over' });
    expect(hooks.every((h) => signatureValid(secret, h))).toBe(true);

    // Each step in the audit log.
    const audit = (await m.call('GET', '/v1/account/audit?limit=50')).body.entries as Array<{ action: string; target: { id: string }; changes: unknown }>;
    const steps = audit.filter((e) => e.target.id === id || e.target.id === order.payment_id).map((e) => [e.action, e.changes]).reverse();
    expect(steps).toEqual([
      ['payment.create', expect.objectContaining({ order_id: 'ltc-over', amount: '1.25' })],
      ['refund.create', expect.objectContaining({ payment_id: order.payment_id, amount: '0.25', amount_kind: 'overpaid', address: 'refund link' })],
      ['payout.transaction', { tx_hash: txHash }],
    ]);
  }, 180_000);

  it('refuses two lines to one address in one asset (one transaction is one event of its watch: one line would never complete)', async () => {
    const order = await create({ order_id: 'ltc-twice', amount: '0.1' });
    const line = { network: order.network, address: order.address, amount: '0.01' };
    const r = await m.call('POST', '/v1/payouts', json({ lines: [line, { ...line, address: order.address }, { ...line, amount: '0.02' }] }));
    expect(r.status).toBe(400);
    expect(r.body.error).toMatch(/^lines\[1\]: pays the same address in the same asset as lines\[0\]/);
    expect((await m.call('GET', '/v1/payouts')).body.payouts.filter((p: { lines: Array<{ address: string }> }) => p.lines.some((l) => l.address === order.address))).toEqual([]);
  });
});

/** The output script of a regtest Litecoin address, hex. */
function outScript(address: string): string {
  return hex.encode(OutScript.encode(BtcAddress(REGTEST).decode(address)));
}
