import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPublicClient, createWalletClient, encodeFunctionData, getAddress, http, parseEther, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { foundry } from 'viem/chains';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getAccount, webhookSecretOf } from '../src/store/index.js';
import { ANVIL_KEYS, deployToken, erc20Abi, startAnvil, type Anvil } from './helpers/anvil.js';
import { signatureValid, startReceiver, type Received, type Receiver } from './helpers/receiver.js';
import { startTestService, type Merchant, type TestService } from './helpers/service.js';

/** BIP32 test vector 1's master xpub: its children are addresses nobody on anvil holds. */
const XPUB = 'xpub661MyMwAqRbcFtXgS5sYJABqqG9YLmC4Q1Rdap9gSE8NqtwybGhePY2gZ29ESFjqJoCu1Rupje8YtGqsefD265TMg7usUDFdp6W1EGMcet8';

const json = (o: unknown) => JSON.stringify(o);
let anvil: Anvil;
let t: TestService;
let rx: Receiver;
let m: Merchant;
let late: Merchant;
let secret: string;
let lateSecret: string;
let owner: Address;
let payer: Address;
let sanctioned: Address;
let token: Address;
let viaGateway: Pick<Anvil, 'public' | 'wallet'>;

beforeAll(async () => {
  [anvil, rx] = await Promise.all([startAnvil(), startReceiver()]);
  [owner, payer, , sanctioned] = anvil.accounts as [Address, Address, Address, Address];
  token = await deployToken(anvil, owner, 1_000_000n * 10n ** 18n);
  const dir = mkdtempSync(join(tmpdir(), 'rpcctl-sanctions-'));
  const sanctionsFile = join(dir, 'sdn.txt');
  // Case differs from the chain's: EVM matching must ignore it.
  writeFileSync(sanctionsFile, `# test list\nETH ${sanctioned.toUpperCase().replace('0X', '0x')}\n`);
  t = await startTestService({
    networks: [{
      slug: 'anvil', name: 'Anvil', family: 'evm',
      environments: [{ slug: 'local', upstreams: [anvil.url], confirmations: 1 }],
      tokens: [{ symbol: 'TST', address: token, decimals: 18 }],
    }],
    webhooks: { allow_private_urls: true, timeout_ms: 2000 },
    payments: { aml: { provider: 'sanctions-list', sanctions_file: sanctionsFile }, tick_ms: 50 },
  }, { watch: { pollMs: 100, delivery: { pollMs: 100 } } });
  m = await t.merchant({ plan: 'pro' });
  late = await t.merchant({ plan: 'pro' });
  secret = webhookSecretOf(t.store, (await getAccount(t.store, m.userId))!);
  lateSecret = webhookSecretOf(t.store, (await getAccount(t.store, late.userId))!);
  expect((await m.call('PUT', '/v1/payments/settings', json({ xpubs: { evm: XPUB } }))).status).toBe(200);
  expect((await late.call('PUT', '/v1/payments/settings', json({ xpubs: { evm: XPUB }, accept_late: true }))).body.accept_late).toBe(true);
  // The merchant's application reaches the chain through an rpcctl endpoint.
  const endpoint = (await m.call('POST', '/v1/endpoints', json({ name: 'shop', network_slug: 'anvil', env_slug: 'local' }))).body.endpoint;
  const rpcUrl = `${t.gatewayUrl}/${endpoint.uuid}`;
  const chain = { ...foundry, rpcUrls: { default: { http: [rpcUrl] } } };
  viaGateway = { public: createPublicClient({ chain, transport: http(rpcUrl), cacheTime: 0 }), wallet: createWalletClient({ chain, transport: http(rpcUrl) }) };
}, 60_000);
afterAll(async () => {
  await t?.stop();
  await Promise.all([anvil?.stop(), rx?.close()]);
});

async function pay(from: Address, to: string, value: bigint): Promise<Hex> {
  const hash = await viaGateway.wallet.sendTransaction({ account: from, to: to as Address, value, chain: null });
  await viaGateway.public.waitForTransactionReceipt({ hash, pollingInterval: 50 });
  return hash;
}

async function payToken(from: Address, to: string, amount: bigint): Promise<Hex> {
  const hash = await viaGateway.wallet.sendTransaction({
    account: from, to: token, chain: null, data: encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [to as Address, amount] }),
  });
  await viaGateway.public.waitForTransactionReceipt({ hash, pollingInterval: 50 });
  return hash;
}

async function create(who: Merchant, body: Record<string, unknown>) {
  const res = await who.call('POST', '/v1/payments', json({ network_slug: 'anvil', webhook_url: rx.url, ...body }));
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.payment as Record<string, any>;
}

const hooksOf = (paymentId: string, all: Received[] = rx.received) => all.filter((r) => JSON.parse(r.body).payment_id === paymentId);
const seq = (paymentId: string) => hooksOf(paymentId).map((r) => {
  const b = JSON.parse(r.body);
  return [b.event, b.tx_hash, b.reason, b.late];
});

/** Waits for `n` webhooks of the order, then a moment more to be sure nothing else follows. */
async function settle(paymentId: string, n: number) {
  await rx.waitFor((all) => hooksOf(paymentId, all).length >= n, 30_000);
  await new Promise((r) => setTimeout(r, 400));
}

function checkSigned(paymentId: string, key: string) {
  const hooks = hooksOf(paymentId);
  hooks.forEach((r, i) => {
    expect(signatureValid(key, r)).toBe(true);
    expect(r.headers['x-webhook-id']).toBe(`${paymentId}_${i + 1}`);
    const b = JSON.parse(r.body);
    expect(b).toMatchObject({ product: 'payments', type: 'payment_order', payment_id: paymentId, status: b.event, network: 'anvil' });
    expect(b.lifecycle.split('>').at(-1)).toBe(b.event);
    if (b.event === 'aml_check') expect(b.aml).toBeNull();
  });
}

async function get(who: Merchant, paymentId: string) {
  return (await who.call('GET', `/v1/payments/${paymentId}`)).body.payment as Record<string, any>;
}

describe('payment orders on anvil, behind the gateway', () => {
  // Short-lived orders first, so their expiry runs while the other scenarios do.
  let neverPaid: Record<string, any>;
  let partial: Record<string, any>;
  let partialTx: Hex;
  let lateRejected: Record<string, any>;
  let lateAccepted: Record<string, any>;
  beforeAll(async () => {
    neverPaid = await create(m, { order_id: 'exp-1', amount: '1', expires_in: 10 });
    partial = await create(m, { order_id: 'exp-partial', amount: '1', expires_in: 20 });
    // Paid (in part) at once, well before its expiry however slow the machine is.
    partialTx = await pay(payer, partial.address, parseEther('0.5'));
    await settle(partial.payment_id, 2);
    lateRejected = await create(m, { order_id: 'late-1', amount: '0.25', expires_in: 10 });
    lateAccepted = await create(late, { order_id: 'late-2', amount: '0.25', expires_in: 10 });
  });

  it('ETH paid exactly: seen, aml_check, paid; the order ends paid with the sender screened', async () => {
    const p = await create(m, { order_id: 'eth-exact', amount: '1.5', metadata: { cart: 42 } });
    expect(p).toMatchObject({ status: 'pending', amount: '1.5', amount_raw: '1500000000000000000', asset: 'native', derivation_index: expect.any(Number), lifecycle: 'pending' });
    const tx = await pay(payer, p.address, parseEther('1.5'));
    await settle(p.payment_id, 3);
    expect(seq(p.payment_id)).toEqual([['seen', tx, null, false], ['aml_check', tx, null, false], ['paid', tx, null, false]]);
    checkSigned(p.payment_id, secret);
    const paid = JSON.parse(hooksOf(p.payment_id)[2]!.body);
    expect(paid).toMatchObject({ amount: '1.5', amount_raw: '1500000000000000000', watch_id: p.watch_id, address: p.address, order_id: 'eth-exact', overpaid: false,
      lifecycle: 'pending>seen>aml_check>paid', metadata: { cart: 42 } });
    expect(paid.aml).toMatchObject({ provider: 'sanctions-list', score: 0, risk_level: 'low', details: [] });
    const final = await get(m, p.payment_id);
    expect(final).toMatchObject({ status: 'paid', amount_received: '1.5', tx_hashes: [tx], lifecycle: 'pending>seen>aml_check>paid' });
  });

  it('ERC-20 paid exactly, an amount a double cannot hold', async () => {
    const p = await create(m, { order_id: 'tst-exact', amount: '1.000000000000000001', asset: 'TST' });
    expect(p).toMatchObject({ asset: getAddress(token), asset_symbol: 'TST', amount_raw: '1000000000000000001' });
    // The same amount in ETH to the address is not the order's asset: recorded nowhere on it.
    await pay(payer, p.address, 1000000000000000001n);
    const tx = await payToken(owner, p.address, 1000000000000000001n);
    await settle(p.payment_id, 3);
    expect(seq(p.payment_id)).toEqual([['seen', tx, null, false], ['aml_check', tx, null, false], ['paid', tx, null, false]]);
    checkSigned(p.payment_id, secret);
    expect(await get(m, p.payment_id)).toMatchObject({ status: 'paid', amount_received_raw: '1000000000000000001', tx_hashes: [tx], overpaid: false });
  });

  it('underpaid, then topped up: 0.1 + 0.2 is exactly 0.3', async () => {
    const p = await create(m, { order_id: 'topup', amount: '0.3' });
    const tx1 = await pay(payer, p.address, parseEther('0.1'));
    await settle(p.payment_id, 2);
    expect(await get(m, p.payment_id)).toMatchObject({ status: 'underpaid', amount_received: '0.1' });
    const tx2 = await pay(payer, p.address, parseEther('0.2'));
    await settle(p.payment_id, 5);
    expect(seq(p.payment_id)).toEqual([
      ['seen', tx1, null, false], ['underpaid', tx1, null, false], ['seen', tx2, null, false], ['aml_check', tx2, null, false], ['paid', tx2, null, false],
    ]);
    checkSigned(p.payment_id, secret);
    expect(await get(m, p.payment_id)).toMatchObject({ status: 'paid', amount_received: '0.3', overpaid: false, tx_hashes: [tx1, tx2],
      lifecycle: 'pending>seen>underpaid>seen>aml_check>paid' });
  });

  it('overpaid: paid with overpaid true', async () => {
    const p = await create(m, { order_id: 'over', amount: '0.5' });
    const tx = await pay(payer, p.address, parseEther('0.7'));
    await settle(p.payment_id, 3);
    expect(seq(p.payment_id)).toEqual([['seen', tx, null, false], ['aml_check', tx, null, false], ['paid', tx, null, false]]);
    expect(JSON.parse(hooksOf(p.payment_id)[2]!.body)).toMatchObject({ overpaid: true, amount_received: '0.7' });
    expect(await get(m, p.payment_id)).toMatchObject({ status: 'paid', overpaid: true, amount_received: '0.7' });
  });

  it('paid from a sanctioned sender: failed, aml_rejected, severe', async () => {
    const p = await create(m, { order_id: 'dirty', amount: '2' });
    const tx = await pay(sanctioned, p.address, parseEther('2'));
    await settle(p.payment_id, 3);
    expect(seq(p.payment_id)).toEqual([['seen', tx, null, false], ['aml_check', tx, null, false], ['failed', tx, 'aml_rejected', false]]);
    checkSigned(p.payment_id, secret);
    const failed = JSON.parse(hooksOf(p.payment_id)[2]!.body);
    expect(failed.aml).toMatchObject({ provider: 'sanctions-list', score: 100, risk_level: 'severe', details: [{ category: 'sanctions', address: getAddress(sanctioned) }] });
    expect(await get(m, p.payment_id)).toMatchObject({ status: 'failed', reason: 'aml_rejected' });
  });

  it('a reorg that removes the payment takes it back off the order', async () => {
    const p = await create(m, { order_id: 'reorg', amount: '0.4' });
    const snap = await anvil.test.snapshot();
    const tx = await pay(payer, p.address, parseEther('0.4'));
    await settle(p.payment_id, 3);
    await anvil.test.revert({ id: snap });
    await anvil.test.mine({ blocks: 3 });
    await settle(p.payment_id, 4);
    expect(seq(p.payment_id)).toEqual([['seen', tx, null, false], ['aml_check', tx, null, false], ['paid', tx, null, false], ['underpaid', null, 'reorg', false]]);
    checkSigned(p.payment_id, secret);
    expect(await get(m, p.payment_id)).toMatchObject({ status: 'underpaid', reason: 'reorg', amount_received: '0', tx_hashes: [] });
    // Still payable: paying again completes it.
    const tx2 = await pay(payer, p.address, parseEther('0.4'));
    await settle(p.payment_id, 7);
    expect(seq(p.payment_id).slice(4)).toEqual([['seen', tx2, null, false], ['aml_check', tx2, null, false], ['paid', tx2, null, false]]);
  });

  it('without webhook_url: to the account\'s Address Watch URL, never as type=payment; billed 30 credits each', async () => {
    const shop = await t.merchant({ plan: 'pro' });
    const key = webhookSecretOf(t.store, (await getAccount(t.store, shop.userId))!);
    expect((await shop.call('PUT', '/v1/address-watch/webhook', json({ url: `${rx.url}?account=shop`, enabled: true, events: { block: false } }))).status).toBe(200);
    const p = (await shop.call('POST', '/v1/payments', json({ order_id: 'acct-url', network_slug: 'anvil', amount: '0.01', address: '0x6666666666666666666666666666666666666666' }))).body.payment;
    const tx = await pay(payer, p.address, parseEther('0.01'));
    await settle(p.payment_id, 3);
    const toShop = rx.received.filter((r) => r.body.includes(p.watch_id));
    expect(toShop.map((r) => JSON.parse(r.body)).map((b) => [b.type, b.event, b.tx_hash])).toEqual([
      ['payment_order', 'seen', tx], ['payment_order', 'aml_check', tx], ['payment_order', 'paid', tx],
    ]);
    for (const r of toShop) expect(signatureValid(key, r)).toBe(true);
    // The hit is in the Address Watch feed, but it was not sent as a `payment` webhook.
    const feed = (await shop.call('GET', '/v1/address-watch/events')).body.events;
    expect(feed.map((e: any) => [e.type, e.tx_hash])).toEqual([['payment', tx]]);
    await new Promise((r) => setTimeout(r, 300)); // the last delivery's bill is written after its answer
    const usage = (await shop.call('GET', '/v1/account/usage?days=7')).body.usage;
    expect(usage.methods).toEqual([{ method: 'webhook:payment_order', requests: 3, credits: 90 }]);
  });

  it('cancel: only while nothing was seen; ends failed, canceled', async () => {
    const p = await create(m, { order_id: 'cancel-me', amount: '1' });
    const res = await m.call('POST', `/v1/payments/${p.payment_id}/cancel`, '');
    expect(res.status).toBe(200);
    expect(res.body.payment).toMatchObject({ status: 'failed', reason: 'canceled', lifecycle: 'pending>failed' });
    await settle(p.payment_id, 1);
    expect(seq(p.payment_id)).toEqual([['failed', null, 'canceled', false]]);
    // Again: the same answer, no second webhook.
    expect((await m.call('POST', `/v1/payments/${p.payment_id}/cancel`, '')).body.payment.lifecycle).toBe('pending>failed');
    const paid = (await m.call('GET', '/v1/payments?order_id=eth-exact')).body.payments[0];
    const refused = await m.call('POST', `/v1/payments/${paid.payment_id}/cancel`, '');
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatch(/is paid: only a pending order/);
    await new Promise((r) => setTimeout(r, 300));
    expect(seq(p.payment_id)).toHaveLength(1);
  });

  it('expiry: never paid, partially paid; late payments with and without accept_late', async () => {
    const tx = partialTx;
    await settle(neverPaid.payment_id, 1);
    expect(seq(neverPaid.payment_id)).toEqual([['expired', null, null, false]]);
    expect(await get(m, neverPaid.payment_id)).toMatchObject({ status: 'expired', reason: null, lifecycle: 'pending>expired' });
    await settle(partial.payment_id, 3);
    expect(seq(partial.payment_id)).toEqual([['seen', tx, null, false], ['underpaid', tx, null, false], ['expired', null, 'partial', false]]);

    await settle(lateRejected.payment_id, 1);
    await settle(lateAccepted.payment_id, 1);
    const txA = await pay(payer, lateRejected.address, parseEther('0.25'));
    const txB = await pay(payer, lateAccepted.address, parseEther('0.25'));
    await settle(lateRejected.payment_id, 3);
    expect(seq(lateRejected.payment_id)).toEqual([['expired', null, null, false], ['seen', txA, null, true], ['expired', txA, 'late', true]]);
    expect(await get(m, lateRejected.payment_id)).toMatchObject({ status: 'expired', reason: 'late', late: true, amount_received: '0.25' });
    checkSigned(lateRejected.payment_id, secret);
    await settle(lateAccepted.payment_id, 4);
    expect(seq(lateAccepted.payment_id)).toEqual([['expired', null, null, false], ['seen', txB, null, true], ['aml_check', txB, null, true], ['paid', txB, null, true]]);
    expect(await get(late, lateAccepted.payment_id)).toMatchObject({ status: 'paid', late: true, lifecycle: 'pending>expired>seen>aml_check>paid' });
    checkSigned(lateAccepted.payment_id, lateSecret);
  }, 90_000);
});

describe('a seen payment that leaves the chain on anvil (3 confirmations; issue 23)', () => {
  let u: TestService;
  let shop: Merchant;
  beforeAll(async () => {
    u = await startTestService({
      networks: [{ slug: 'anvil3', name: 'Anvil (3 confirmations)', family: 'evm', environments: [{ slug: 'local', upstreams: [anvil.url], confirmations: 3 }] }],
      webhooks: { allow_private_urls: true, timeout_ms: 2000 },
      payments: { aml: { provider: 'none' }, tick_ms: 50 },
    }, { watch: { pollMs: 100, delivery: { pollMs: 100 } } });
    shop = await u.merchant({ plan: 'pro' });
  }, 60_000);
  afterAll(async () => {
    await u?.stop();
  });

  it('seen while unconfirmed; reverted away: underpaid (reorg) at once, no wait for the late window; paid again: seen, aml_check, paid', async () => {
    const address = '0x3333333333333333333333333333333333333333';
    const res = await shop.call('POST', '/v1/payments', json({ order_id: 'vanish', network_slug: 'anvil3', amount: '0.3', address, webhook_url: rx.url }));
    expect(res.status, json(res.body)).toBe(200);
    const p = res.body.payment as Record<string, any>;
    const snap = await anvil.test.snapshot();
    const hash = await anvil.wallet.sendTransaction({ account: payer, to: address, value: parseEther('0.3'), chain: null });
    await anvil.public.waitForTransactionReceipt({ hash, pollingInterval: 50 });
    await settle(p.payment_id, 1);
    expect(seq(p.payment_id)).toEqual([['seen', hash, null, false]]);
    // The block (one confirmation of three) is reverted: the transfer is gone from the chain.
    await anvil.test.revert({ id: snap });
    await settle(p.payment_id, 2);
    expect(seq(p.payment_id)[1]).toEqual(['underpaid', null, 'reorg', false]);
    expect(await get(shop, p.payment_id)).toMatchObject({ status: 'underpaid', reason: 'reorg', amount_received: '0', tx_hashes: [], lifecycle: 'pending>seen>underpaid' });
    await anvil.test.mine({ blocks: 3 });
    await new Promise((r) => setTimeout(r, 600));
    expect(seq(p.payment_id)).toHaveLength(2);
    const again = await anvil.wallet.sendTransaction({ account: payer, to: address, value: parseEther('0.3'), chain: null });
    await anvil.public.waitForTransactionReceipt({ hash: again, pollingInterval: 50 });
    await anvil.test.mine({ blocks: 2 });
    await settle(p.payment_id, 5);
    expect(seq(p.payment_id).slice(2)).toEqual([['seen', again, null, false], ['aml_check', again, null, false], ['paid', again, null, false]]);
    expect(await get(shop, p.payment_id)).toMatchObject({ status: 'paid', amount_received: '0.3', tx_hashes: [again] });
  });

  it('paid, reverted away: underpaid (reorg); the same signed transaction mined again: seen once, aml_check, paid with the amount; the feed has it once, in its new block', async () => {
    const address = '0x4444444444444444444444444444444444444444';
    const res = await shop.call('POST', '/v1/payments', json({ order_id: 'remine', network_slug: 'anvil3', amount: '0.2', address, webhook_url: rx.url }));
    expect(res.status, json(res.body)).toBe(200);
    const p = res.body.payment as Record<string, any>;
    const snap = await anvil.test.snapshot();
    // Signed once, sent twice: the revert resets the sender's nonce, so the very same bytes
    // (the same hash) are valid again, as a transaction back in the mempool after a real reorg.
    const signer = privateKeyToAccount(ANVIL_KEYS[1]);
    expect(getAddress(signer.address)).toBe(getAddress(payer));
    const request = await anvil.wallet.prepareTransactionRequest({ account: signer, to: address, value: parseEther('0.2'), chain: anvil.public.chain });
    const raw = await signer.signTransaction(request as never);
    const hash = await anvil.public.sendRawTransaction({ serializedTransaction: raw });
    await anvil.public.waitForTransactionReceipt({ hash, pollingInterval: 50 });
    await settle(p.payment_id, 1);
    await anvil.test.mine({ blocks: 2 });
    await settle(p.payment_id, 3);
    expect(seq(p.payment_id)).toEqual([['seen', hash, null, false], ['aml_check', hash, null, false], ['paid', hash, null, false]]);
    const oldBlock = (await anvil.public.getTransactionReceipt({ hash })).blockHash;

    // The payment's block and the two on it are reverted; a longer chain without it follows.
    await anvil.test.revert({ id: snap });
    await anvil.test.mine({ blocks: 4 });
    await expect(anvil.public.getTransactionReceipt({ hash })).rejects.toThrow();
    await settle(p.payment_id, 4);
    expect(seq(p.payment_id)[3]).toEqual(['underpaid', null, 'reorg', false]);
    expect(await get(shop, p.payment_id)).toMatchObject({ status: 'underpaid', reason: 'reorg', amount_received: '0', tx_hashes: [] });

    expect(await anvil.public.sendRawTransaction({ serializedTransaction: raw })).toBe(hash);
    const newBlock = (await anvil.public.waitForTransactionReceipt({ hash, pollingInterval: 50 })).blockHash;
    expect(newBlock).not.toBe(oldBlock);
    await settle(p.payment_id, 5);
    await anvil.test.mine({ blocks: 2 });
    await settle(p.payment_id, 7);
    expect(seq(p.payment_id).slice(3)).toEqual([
      ['underpaid', null, 'reorg', false], ['seen', hash, null, false], ['aml_check', hash, null, false], ['paid', hash, null, false],
    ]);
    expect(seq(p.payment_id).slice(4).filter((s) => s[0] === 'seen')).toHaveLength(1);
    expect(await get(shop, p.payment_id)).toMatchObject({
      status: 'paid', amount_received: '0.2', amount_received_raw: '200000000000000000', tx_hashes: [hash],
      lifecycle: 'pending>seen>aml_check>paid>underpaid>seen>aml_check>paid',
    });
    const hooks = hooksOf(p.payment_id);
    expect(JSON.parse(hooks[6]!.body)).toMatchObject({ event: 'paid', amount_received: '0.2', tx_hash: hash });
    // The events feed has the transaction once, live in its new block: the reverted one is gone.
    const feed = (await shop.call('GET', '/v1/address-watch/events?limit=500')).body.events as Record<string, any>[];
    expect(feed.filter((e) => e.tx_hash === hash).map((e) => e.block_hash)).toEqual([newBlock]);
  }, 90_000);
});
