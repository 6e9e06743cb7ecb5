import {
  type KeyPairSigner, address, appendTransactionMessageInstructions, createSolanaRpc, createSolanaRpcSubscriptions,
  createTransactionMessage, generateKeyPairSigner, getBase64EncodedWireTransaction, getSignatureFromTransaction, lamports,
  pipe, setTransactionMessageFeePayerSigner, setTransactionMessageLifetimeUsingBlockhash, signTransactionMessageWithSigners,
} from '@solana/kit';
import { getTransferSolInstruction } from '@solana-program/system';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeSolanaNode, startFakeSolana, startFakeSolanaNode } from './helpers/fake-solana.js';
import { startTestService, type Merchant, type TestService } from './helpers/service.js';

/**
 * A Solana mainnet endpoint through the gateway, over litesvm nodes (test/helpers/fake-solana.ts)
 * sharing one chain: `good`, `bad` (made unhealthy or lagging by the tests) and two nodes that
 * answer every call -32005 (`sickA`, `sickB`). Clients are @solana/kit's own RPC and PubSub.
 * Environments: `mainnet` [bad, good] with good's PubSub; `sick` [sickA, sickB].
 */

const json = (o: unknown) => JSON.stringify(o);
let good: FakeSolanaNode;
let bad: FakeSolanaNode;
let sickA: FakeSolanaNode;
let sickB: FakeSolanaNode;
let t: TestService;
let m: Merchant;
let X: KeyPairSigner;
let Y: KeyPairSigner;
const MAINNET = 17;

async function until<T>(what: string, check: () => Promise<T | undefined | false> | T | undefined | false, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`${what}: not in time`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function endpoint(env: string): Promise<{ id: number; url: string; wsUrl: string }> {
  const r = await m.call('POST', '/v1/endpoints', json({ name: `sol-${env}-${Math.random()}`, network_slug: 'solana', env_slug: env }));
  expect(r.status, json(r.body)).toBe(200);
  const url = `${t.gatewayUrl}/${r.body.endpoint.uuid}`;
  return { id: r.body.endpoint.id, url, wsUrl: url.replace('http', 'ws') };
}

async function usage(id: number): Promise<Record<string, { requests: number; credits: number }>> {
  const { usage: u } = (await m.call('GET', `/v1/endpoints/${id}/usage?days=7`)).body;
  return Object.fromEntries(u.methods.map((x: { method: string; requests: number; credits: number }) => [x.method, { requests: x.requests, credits: x.credits }]));
}

/** A signed SOL transfer, as a wallet builds it (the blockhash through `rpc`). */
async function transfer(rpc: ReturnType<typeof createSolanaRpc>, from: KeyPairSigner, to: string, amount: bigint): Promise<{ wire: string; signature: string }> {
  const { value: bh } = await rpc.getLatestBlockhash({ commitment: 'confirmed' }).send();
  const tx = await signTransactionMessageWithSigners(pipe(
    createTransactionMessage({ version: 0 }),
    (msg) => setTransactionMessageFeePayerSigner(from, msg),
    (msg) => setTransactionMessageLifetimeUsingBlockhash(bh, msg),
    (msg) => appendTransactionMessageInstructions([getTransferSolInstruction({ source: from, destination: address(to), amount: lamports(amount) })], msg),
  ));
  return { wire: getBase64EncodedWireTransaction(tx), signature: getSignatureFromTransaction(tx) };
}

const seen = (node: FakeSolanaNode, method: string) => node.seen.filter((c) => c.method === method && c.transport === 'http').length;
const snapshot = () => t.service.gateway.upstreams.snapshot().get(MAINNET) ?? [];

async function raw(url: string, method: string, params: unknown[]): Promise<any> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: json({ jsonrpc: '2.0', id: 1, method, params }) });
  return res.json();
}

beforeAll(async () => {
  good = await startFakeSolana();
  [bad, sickA, sickB] = await Promise.all([startFakeSolanaNode(good.chain), startFakeSolanaNode(good.chain), startFakeSolanaNode(good.chain)]);
  sickA.unhealthy = 'all';
  sickB.unhealthy = 'all';
  [X, Y] = await Promise.all([generateKeyPairSigner(), generateKeyPairSigner()]);
  good.chain.fundSol(X.address, 10_000_000_000n);
  good.chain.advance(40);
  t = await startTestService({
    networks: [{
      id: 10, slug: 'solana', name: 'Solana', family: 'solana',
      environments: [
        { id: MAINNET, slug: 'mainnet', upstreams: [bad.url, good.url], ws_upstreams: [good.wsUrl], confirmations: 1 },
        { id: 18, slug: 'sick', upstreams: [sickA.url, sickB.url], confirmations: 1 },
      ],
    }],
    gateway: { probe_interval_ms: 200, max_lag_blocks: 5 },
  });
  m = await t.merchant({ plan: 'pro' });
  // The probe asks the environments endpoints use.
  await endpoint('mainnet');
  await until('both mainnet upstreams probed', () => snapshot().length === 2 && snapshot().every((u) => u.head !== null));
}, 60_000);

afterAll(async () => {
  await t?.stop();
  await Promise.all([good, bad, sickA, sickB].map((n) => n?.stop()));
});

describe('Solana JSON-RPC through the gateway', () => {
  it('@solana/kit: getSlot, getBalance, a signed transfer sent once, getTransaction; usage and credits exact', async () => {
    const ep = await endpoint('mainnet');
    const rpc = createSolanaRpc(ep.url);
    const slot = await rpc.getSlot({ commitment: 'confirmed' }).send();
    expect(Number(slot)).toBe(good.chain.confirmedSlot);
    expect((await rpc.getBalance(address(X.address)).send()).value).toBe(10_000_000_000n);
    const before = seen(good, 'sendTransaction') + seen(bad, 'sendTransaction');
    const { wire, signature } = await transfer(rpc, X, Y.address, 1_000_000n);
    expect(await rpc.sendTransaction(wire as never, { encoding: 'base64' }).send()).toBe(signature);
    expect(seen(good, 'sendTransaction') + seen(bad, 'sendTransaction') - before).toBe(1);
    good.chain.advance(2);
    const tx = await rpc.getTransaction(signature as never, { commitment: 'confirmed', encoding: 'json', maxSupportedTransactionVersion: 0 }).send();
    expect(tx?.transaction.signatures[0]).toBe(signature);
    // getSlot 5, getBalance 15, getLatestBlockhash 10, sendTransaction 100, getTransaction 25 (the built-in table).
    const u = await until('usage recorded', async () => { const x = await usage(ep.id); return x.getTransaction ? x : undefined; });
    expect(u).toEqual({
      getSlot: { requests: 1, credits: 5 }, getBalance: { requests: 1, credits: 15 }, getLatestBlockhash: { requests: 1, credits: 10 },
      sendTransaction: { requests: 1, credits: 100 }, getTransaction: { requests: 1, credits: 25 },
    });
    const logs = (await m.call('GET', `/v1/endpoints/${ep.id}/logs?limit=10`)).body;
    expect(json(logs)).toContain('sendTransaction');
  });

  it('a skipped slot\'s getBlock (-32007) is the chain\'s answer: relayed from the first node, not tried on another', async () => {
    const ep = await endpoint('mainnet');
    const skippedFrom = good.chain.produceSlot({ skip: 2 }).slot + 1;
    good.chain.advance(40);
    const before = seen(good, 'getBlock') + seen(bad, 'getBlock');
    const r = await raw(ep.url, 'getBlock', [skippedFrom, { transactionDetails: 'none', rewards: false }]);
    expect(r.error?.code, json(r)).toBe(-32007);
    expect(seen(good, 'getBlock') + seen(bad, 'getBlock') - before).toBe(1);
  });

  it('an unhealthy node (-32005 on every call) is failed over; a lagging one is left out of head reads', async () => {
    const ep = await endpoint('mainnet');
    const rpc = createSolanaRpc(ep.url);
    bad.unhealthy = 'all';
    try {
      for (let i = 0; i < 6; i++) expect(Number(await rpc.getSlot({ commitment: 'confirmed' }).send())).toBe(good.chain.confirmedSlot);
      await until('the probe sees the unhealthy node', () => snapshot().find((u) => u.url.includes(new URL(bad.url).host))?.last_error?.includes('unhealthy'));
    } finally {
      bad.unhealthy = false;
    }
    bad.lagSlots = 100;
    try {
      await until('the probe sees the lag', () => snapshot().find((u) => u.url.includes(new URL(bad.url).host))?.status === 'lagging');
      const asked = seen(bad, 'getBalance');
      for (let i = 0; i < 10; i++) await rpc.getBalance(address(Y.address)).send();
      expect(seen(bad, 'getBalance')).toBe(asked);
    } finally {
      bad.lagSlots = 0;
    }
  });

  it('sendTransaction is never retried on another upstream, where a read is', async () => {
    const ep = await endpoint('sick');
    const read = await raw(ep.url, 'getBalance', [X.address]);
    expect(read.error?.code).toBe(-32005);
    expect(seen(sickA, 'getBalance') + seen(sickB, 'getBalance')).toBe(2);
    const { wire } = await transfer(createSolanaRpc(good.url), X, Y.address, 2_000_000n);
    const sent = await raw(ep.url, 'sendTransaction', [wire, { encoding: 'base64' }]);
    expect(sent.error?.code, json(sent)).toBe(-32005);
    expect(seen(sickA, 'sendTransaction') + seen(sickB, 'sendTransaction')).toBe(1);
  });
});

describe('Solana PubSub through the gateway', () => {
  it('@solana/kit subscriptions: slot, signature and account notifications; subscriptions and notifications metered', async () => {
    const ep = await endpoint('mainnet');
    const rpc = createSolanaRpc(ep.url);
    const subs = createSolanaRpcSubscriptions(ep.wsUrl);
    const abort = new AbortController();
    const slots: number[] = [];
    const accounts: bigint[] = [];
    const signatures: unknown[] = [];
    const slotFeed = await subs.slotNotifications().subscribe({ abortSignal: abort.signal });
    const accountFeed = await subs.accountNotifications(address(Y.address), { commitment: 'confirmed' }).subscribe({ abortSignal: abort.signal });
    const { wire, signature } = await transfer(rpc, X, Y.address, 3_000_000n);
    const sigFeed = await subs.signatureNotifications(signature as never, { commitment: 'confirmed' }).subscribe({ abortSignal: abort.signal });
    void (async () => { for await (const n of slotFeed) slots.push(Number(n.slot)); })().catch(() => {});
    void (async () => { for await (const n of accountFeed) accounts.push(n.value.lamports); })().catch(() => {});
    void (async () => { for await (const n of sigFeed) signatures.push(n.value); })().catch(() => {});
    await until('the gateway holds three subscriptions', () => t.service.gateway.websockets.subscriptions === 3);
    await rpc.sendTransaction(wire as never, { encoding: 'base64' }).send();
    good.chain.advance(3);
    await until('a signature notification', () => signatures.length === 1);
    // Y had the 1_000_000 lamports of the first test.
    await until('an account notification with the new balance', () => accounts.includes(4_000_000n));
    await until('three slot notifications', () => slots.length >= 3);
    const got = { slots: slots.length, accounts: accounts.length };
    abort.abort();
    await until('the gateway let the subscriptions go', () => t.service.gateway.websockets.subscriptions === 0);
    const u = await until('usage recorded', async () => { const x = await usage(ep.id); return x.slotNotification?.requests === got.slots ? x : undefined; });
    expect(u.slotSubscribe).toEqual({ requests: 1, credits: 10 });
    expect(u.accountSubscribe).toEqual({ requests: 1, credits: 10 });
    expect(u.signatureSubscribe).toEqual({ requests: 1, credits: 10 });
    // Notifications at the default 10 credits each (the table prices none).
    expect(u.slotNotification).toEqual({ requests: got.slots, credits: 10 * got.slots });
    expect(u.accountNotification).toEqual({ requests: got.accounts, credits: 10 * got.accounts });
    expect(u.signatureNotification).toEqual({ requests: 1, credits: 10 });
  });

  it('refuses bad subscribe params naming what is wrong', async () => {
    const ep = await endpoint('mainnet');
    const { WebSocket } = await import('ws');
    const ws = new WebSocket(ep.wsUrl);
    await new Promise((r, j) => { ws.once('open', r); ws.once('error', j); });
    const answer = new Promise<any>((r) => ws.once('message', (d) => r(JSON.parse(String(d)))));
    ws.send(json({ jsonrpc: '2.0', id: 1, method: 'accountSubscribe', params: ['not-an-address'] }));
    expect((await answer).error).toMatchObject({ code: -32602, message: expect.stringContaining('base58 address') });
    ws.close();
  });
});
