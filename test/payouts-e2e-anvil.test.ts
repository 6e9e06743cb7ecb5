import { parse as parseEthUrl } from 'eth-url-parser';
import { encodeFunctionData, erc20Abi, getAddress, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getAccount, webhookSecretOf } from '../src/store/index.js';
import { ANVIL_KEYS, deployToken, startAnvil, type Anvil } from './helpers/anvil.js';
import { paymentOrders } from './helpers/payments.js';
import { signatureValid, startReceiver, type Receiver } from './helpers/receiver.js';
import { rawCall, startTestService, type Merchant, type TestService } from './helpers/service.js';
import { until as waitUntil } from './helpers/wait.js';

/** Anvil's finalized block is 64 under the head: its waits get 30 s. */
const until = <T>(fn: () => Promise<T | undefined>) => waitUntil(fn, 30_000);

/**
 * Refunds of overpaid orders on anvil, whole: an ETH order and an ERC-20 order are overpaid, each
 * refunded `overpaid` through its refund link; the merchant's wallet (viem) pays each from the
 * EIP-681 request the API answers, read by `eth-url-parser` (an independent parser, not
 * rpcctl's); a signed transaction to another address is refused first. Both go `sent`, then
 * `completed` at anvil's `finalized` block, with signed webhooks in order and the audit log.
 */
const XPUB = 'xpub661MyMwAqRbcFtXgS5sYJABqqG9YLmC4Q1Rdap9gSE8NqtwybGhePY2gZ29ESFjqJoCu1Rupje8YtGqsefD265TMg7usUDFdp6W1EGMcet8';
const CUSTOMER = getAddress('0x90f79bf6eb2c4f870365e785982e1f101e93b906');
const STRANGER = getAddress('0x52908400098527886e0f7030069857d2e4169ee7');
const merchantWallet = privateKeyToAccount(ANVIL_KEYS[0]);
const json = (o: unknown) => JSON.stringify(o);

let anvil: Anvil;
let t: TestService;
let rx: Receiver;
let m: Merchant;
let secret: string;
let token: Address;
let buyer: Address;
const { create, get } = paymentOrders(() => ({ rx, m }), 'anvil');

beforeAll(async () => {
  [anvil, rx] = await Promise.all([startAnvil(), startReceiver()]);
  buyer = anvil.accounts[1]!;
  token = getAddress(await deployToken(anvil, buyer, 10n ** 24n));
  t = await startTestService({
    networks: [{
      slug: 'anvil', name: 'Anvil', family: 'evm',
      environments: [{ slug: 'local', upstreams: [anvil.url], confirmations: 1 }],
      tokens: [{ symbol: 'TST', address: token, decimals: 18 }],
    }],
    webhooks: { allow_private_urls: true, timeout_ms: 2000 },
    payments: { aml: { provider: 'none' }, tick_ms: 50 },
  }, { watch: { pollMs: 100, delivery: { pollMs: 100 } } });
  m = await t.merchant({ plan: 'pro' });
  secret = webhookSecretOf(t.store, (await getAccount(t.store, m.userId))!);
  expect((await m.call('PUT', '/v1/payments/settings', json({ xpubs: { evm: XPUB } }))).status).toBe(200);
}, 60_000);
afterAll(async () => {
  await t?.stop();
  await Promise.all([anvil?.stop(), rx?.close()]);
});

const lineOf = async (id: string) => (await m.call('GET', `/v1/payouts/${id}`)).body.payout.lines[0];
const lineIs = (id: string, status: string) => until(async () => {
  const l = await lineOf(id);
  return l.status === status ? l : undefined;
});
const refundHooks = (id: string) => rx.received.filter((r) => JSON.parse(r.body).refund_id === id);

/** An overpaid order refunded `overpaid` through its link to CUSTOMER: the refund's id and its EIP-681 request. */
async function overpaidRefund(orderId: string, pay: (address: Address) => Promise<unknown>, body: Record<string, unknown>) {
  const order = await create({ order_id: orderId, ...body });
  await pay(order.address);
  await until(async () => ((await get(order.payment_id)).status === 'paid' ? true : undefined));
  const r = await m.call('POST', `/v1/payments/${order.payment_id}/refunds`, json({ amount: 'overpaid' }));
  expect(r.status, json(r.body)).toBe(200);
  expect(r.body.refund).toMatchObject({ status: 'awaiting_address', amount_kind: 'overpaid', payment_request: null });
  const link = new URL(r.body.refund.refund_link.url).pathname;
  const claimed = await rawCall(t.baseUrl, 'POST', `${link}/address`, json({ address: CUSTOMER }), { 'content-type': 'application/json' });
  expect(claimed.status, json(claimed.body)).toBe(200);
  const id: string = r.body.refund.refund_id;
  const line = await lineOf(id);
  expect(line.status).toBe('awaiting_payment');
  return { order, id, amount: r.body.refund.amount as string, uri: line.payment_request.uri as string };
}

/** A transaction signed by the merchant's wallet that the test submits, never broadcasts itself. */
const signed = async (to: Address, value: bigint, data?: Hex) => merchantWallet.signTransaction({
  type: 'eip1559', chainId: 31337, to, value, ...(data && { data }),
  nonce: await anvil.public.getTransactionCount({ address: merchantWallet.address, blockTag: 'pending' }),
  gas: 100_000n, maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: 10n ** 9n,
});

/** Refused with a 400 and nothing recorded on the refund. */
async function refusedWrongAddress(id: string, raw: Hex) {
  const r = await m.call('POST', `/v1/payouts/${id}/transaction`, json({ signed_transaction: raw }));
  expect(r.status, json(r.body)).toBe(400);
  expect(r.body.error).toContain(STRANGER);
  expect(await lineOf(id)).toMatchObject({ status: 'awaiting_payment', expected_tx: null, tx_hash: null });
}

/** Sent, then completed at anvil's finalized block (64 under its head); signed webhooks in order; the audit entry. */
async function trackedToFinal(id: string, orderId: string, txHash: Hex) {
  expect((await lineIs(id, 'sent')).tx_hash).toBe(txHash);
  await anvil.test.mine({ blocks: 70 });
  expect((await lineIs(id, 'completed')).tx_hash).toBe(txHash);
  await rx.waitFor(() => refundHooks(id).some((h) => JSON.parse(h.body).event === 'refund.completed'), 20_000);
  const events = refundHooks(id).map((h) => JSON.parse(h.body));
  expect(events.map((e) => [e.event, e.tx_hash])).toEqual([
    ['refund.awaiting_address', null], ['refund.awaiting_payment', null], ['refund.sent', txHash], ['refund.completed', txHash],
  ]);
  for (const e of events) expect(e).toMatchObject({ type: 'refund', refund_id: id, order_id: orderId });
  expect(refundHooks(id).every((h) => signatureValid(secret, h))).toBe(true);
  const audit = (await m.call('GET', '/v1/account/audit?limit=100')).body.entries as Array<{ action: string; target: { id: string } }>;
  expect(audit.filter((e) => e.target.id === id).map((e) => e.action).reverse()).toEqual(['refund.create']);
}

describe('refunds paid from the EIP-681 request on anvil', () => {
  it('an ETH refund: the URI read by eth-url-parser, a transfer elsewhere refused, paid by viem, sent, completed', async () => {
    const { order, id, amount, uri } = await overpaidRefund('eth-over',
      (to) => anvil.wallet.sendTransaction({ account: buyer, to, value: 1_500_000_000_000_000_000n, chain: null }), { amount: '1' });
    expect(amount).toBe('0.5');
    const request = parseEthUrl(uri);
    expect({ ...request, target_address: getAddress(request.target_address) }, uri).toMatchObject({ scheme: 'ethereum', target_address: CUSTOMER, chain_id: '31337' });
    expect(request.function_name).toBeUndefined();
    const value = BigInt(request.parameters!.value!);
    expect(value).toBe(500_000_000_000_000_000n);

    await refusedWrongAddress(id, await signed(STRANGER, value));
    const hash = await anvil.wallet.sendTransaction({ account: merchantWallet.address, to: getAddress(request.target_address), value, chain: null });
    await trackedToFinal(id, 'eth-over', hash);
    expect((await get(order.payment_id)).status).toBe('paid');
  }, 90_000);

  it('an ERC-20 refund: transfer(address, uint256) from the URI, a transfer elsewhere refused, paid by viem, sent, completed', async () => {
    const { id, amount, uri } = await overpaidRefund('tst-over', (to) => anvil.wallet.writeContract({
      account: buyer, address: token, abi: erc20Abi, functionName: 'transfer', args: [to, 12n * 10n ** 18n], chain: null,
    }), { amount: '10', asset: 'TST' });
    expect(amount).toBe('2');
    const request = parseEthUrl(uri);
    expect({ ...request, target_address: getAddress(request.target_address) }, uri).toMatchObject({ scheme: 'ethereum', target_address: token, chain_id: '31337', function_name: 'transfer' });
    const to = getAddress(request.parameters!.address!);
    const value = BigInt(request.parameters!.uint256!);
    expect([to, value]).toEqual([CUSTOMER, 2n * 10n ** 18n]);

    // The merchant's wallet holds the tokens it refunds.
    await anvil.wallet.writeContract({ account: buyer, address: token, abi: erc20Abi, functionName: 'transfer', args: [merchantWallet.address, value], chain: null });
    await refusedWrongAddress(id, await signed(token, 0n, encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [STRANGER, value] })));
    const hash = await anvil.wallet.writeContract({
      account: merchantWallet.address, address: getAddress(request.target_address), abi: erc20Abi, functionName: 'transfer', args: [to, value], chain: null,
    });
    await trackedToFinal(id, 'tst-over', hash);
    expect(await anvil.public.readContract({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [CUSTOMER] })).toBe(value);
  }, 90_000);
});
