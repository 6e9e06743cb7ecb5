import { createPublicClient, createWalletClient, encodeFunctionData, getAddress, http, parseEther, type Address } from 'viem';
import { foundry } from 'viem/chains';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getAccount, webhookSecretOf } from '../src/store/index.js';
import { deployToken, erc20Abi, startAnvil, type Anvil } from './helpers/anvil.js';
import { signatureValid, startReceiver, type Received, type Receiver } from './helpers/receiver.js';
import { startTestService, type Merchant, type TestService } from './helpers/service.js';
import { Scanner } from '../src/watch/scanner.js';
import { WatchRegistry } from '../src/watch/registry.js';
import { allWatches } from '../src/watch/watches.js';
import { chainFor } from '../src/watch/chains.js';

const json = (o: unknown) => JSON.stringify(o);
let anvil: Anvil;
let t: TestService;
let rx: Receiver;
let m: Merchant;
let secret: string;
let A: Address;
let B: Address;
let owner: Address;
let quiet: Merchant;
/** The merchant's dApp side: it talks to the chain through an rpcctl gateway endpoint. */
let viaGateway: Anvil;
let sender: Merchant;
let senderEndpoint: number;

beforeAll(async () => {
  [anvil, rx] = await Promise.all([startAnvil(), startReceiver()]);
  t = await startTestService({
    networks: [{
      slug: 'anvil', name: 'Anvil', family: 'evm',
      environments: [{ slug: 'local', upstreams: [anvil.url], confirmations: 1 }],
      credits: { default: 20, methods: { eth_getBlockByNumber: 25 } },
    }, {
      // The same node as another network: nobody watches it until the lease test.
      slug: 'anvil2', name: 'Anvil 2', family: 'evm', environments: [{ slug: 'local', upstreams: [anvil.url], confirmations: 1 }],
    }, {
      // Scanned by a second instance the test drives (the per-watch start height test).
      slug: 'anvil3', name: 'Anvil 3', family: 'evm', environments: [{ slug: 'local', upstreams: [anvil.url], confirmations: 1 }],
    }],
    webhooks: { allow_private_urls: true, timeout_ms: 2000 },
  });
  [owner, A, B] = anvil.accounts as [Address, Address, Address];
  m = await t.merchant({ plan: 'pro' });
  secret = webhookSecretOf(t.store, (await getAccount(t.store, m.userId))!);
  expect((await m.call('PUT', '/v1/address-watch/webhook', json({ url: rx.url, enabled: true, events: { block: false } }))).status).toBe(200);
  for (const address of [A.toLowerCase(), B]) {
    expect((await m.call('POST', '/v1/address-watch/addresses', json({ network_slug: 'anvil', address }))).body.created).toBe(true);
  }
  // A second account watches A too, with its webhook switched off: events, but no deliveries.
  quiet = await t.merchant({ plan: 'pro' });
  await quiet.call('PUT', '/v1/address-watch/webhook', json({ url: rx.url, enabled: false }));
  await quiet.call('POST', '/v1/address-watch/addresses', json({ network_slug: 'anvil-local', address: A }));
  sender = await t.merchant({ plan: 'pro' });
  const endpoint = (await sender.call('POST', '/v1/endpoints', json({ name: 'dapp', network_slug: 'anvil', env_slug: 'local' }))).body.endpoint;
  senderEndpoint = endpoint.id;
  const rpcUrl = `${t.gatewayUrl}/${endpoint.uuid}`;
  const chain = { ...foundry, rpcUrls: { default: { http: [rpcUrl] } } };
  viaGateway = {
    ...anvil,
    public: createPublicClient({ chain, transport: http(rpcUrl), cacheTime: 0 }),
    wallet: createWalletClient({ chain, transport: http(rpcUrl) }),
  };
}, 60_000);
afterAll(async () => {
  await t?.stop();
  await Promise.all([anvil?.stop(), rx?.close()]);
});

const bodies = (all: Received[]) => all.map((r) => JSON.parse(r.body) as Record<string, any>);
// In event order: deliveries run concurrently, so arrival order is not the contract.
const mine = (all: Received[]) => bodies(all).filter((b) => b.type !== 'block' && !b.test).sort((a, b) => Number(a.id) - Number(b.id));

describe('Address Watch against a real chain (anvil)', () => {
  it('native and ERC-20 transfers give signed payment/payout webhooks; the feed holds the same events; billed once each', async () => {
    // Every transaction goes through the gateway, as a merchant's application would send it.
    const send = async (from: Address, to: Address, value: bigint) => {
      const hash = await viaGateway.wallet.sendTransaction({ account: from, to, value, chain: null });
      await viaGateway.public.waitForTransactionReceipt({ hash, pollingInterval: 50 });
      return hash;
    };
    const token = await deployToken(viaGateway, owner, 1_000_000n * 10n ** 18n);
    const tx1 = await send(owner, A, parseEther('1.5'));
    const tx2 = await send(A, B, 12345n);
    const tx3 = await viaGateway.wallet.sendTransaction({
      account: owner, to: token, chain: null,
      data: encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [A, 777n] }),
    });
    // A contract call from A that moves nothing to or from A: `other`.
    const tx4 = await viaGateway.wallet.sendTransaction({
      account: A, to: token, chain: null,
      data: encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [owner, 5n] }),
    });
    await viaGateway.public.waitForTransactionReceipt({ hash: tx4, pollingInterval: 50 });

    await rx.waitFor((all) => mine(all).length >= 5, 20_000);
    await new Promise((r) => setTimeout(r, 700)); // nothing more should come
    const received = rx.received.filter((r) => !JSON.parse(r.body).test);
    const got = mine(received);
    const summary = got.map((b) => [b.tx_hash, b.address, b.type, b.direction, b.token, b.amount]);
    const cA = getAddress(A);
    const cB = getAddress(B);
    expect(summary).toEqual([
      [tx1, cA, 'payment', 'in', null, '1500000000000000000'],
      [tx2, cA, 'payout', 'out', null, '12345'],
      [tx2, cB, 'payment', 'in', null, '12345'],
      [tx3, cA, 'payment', 'in', getAddress(token), '777'],
      [tx4, cA, 'other', 'out', null, '0'],
    ]);
    for (const r of received) {
      expect(signatureValid(secret, r)).toBe(true);
      expect(r.headers['x-webhook-id']).toBe(`evt_${JSON.parse(r.body).id}`);
      expect(r.headers['x-webhook-attempt']).toBe('1');
    }
    const receipt1 = await anvil.public.getTransactionReceipt({ hash: tx1 });
    expect(got[0]).toMatchObject({ network: 'anvil', block_height: Number(receipt1.blockNumber), block_hash: receipt1.blockHash, from: getAddress(owner), to: cA });
    expect(got[3]).toMatchObject({ from: getAddress(owner), to: cA, log_index: 0 });

    const feed = (await m.call('GET', '/v1/address-watch/events')).body;
    expect(feed.events).toEqual(got);
    expect(feed.next_after).toBe(got[4]!.id);
    const empty = (await m.call('GET', `/v1/address-watch/events?after=${feed.next_after}`)).body;
    expect(empty).toEqual({ ok: true, events: [], next_after: feed.next_after, retention_days: 90 });
    const onlyB = (await m.call('GET', `/v1/address-watch/events?watch_id=${got[2]!.watch_id}&type=payment`)).body.events;
    expect(onlyB).toEqual([got[2]]);
    const paged = (await m.call('GET', `/v1/address-watch/events?limit=2&after=${got[1]!.id}`)).body;
    expect(paged.events).toEqual([got[2], got[3]]);

    const quietFeed = (await quiet.call('GET', '/v1/address-watch/events')).body.events as any[];
    expect(quietFeed.map((e) => [e.tx_hash, e.type, e.network])).toEqual([
      [tx1, 'payment', 'anvil-local'], [tx2, 'payout', 'anvil-local'], [tx3, 'payment', 'anvil-local'], [tx4, 'other', 'anvil-local'],
    ]);
    expect((await quiet.call('GET', '/v1/address-watch/deliveries')).body.deliveries).toEqual([]);
    expect(received.every((r) => JSON.parse(r.body).network === 'anvil')).toBe(true);

    const usage = await waitForUsage(m, (u) => u.total_credits === 5 * 30);
    expect(usage.methods).toEqual([
      { method: 'webhook:payment', requests: 3, credits: 90 },
      { method: 'webhook:other', requests: 1, credits: 30 },
      { method: 'webhook:payout', requests: 1, credits: 30 },
    ]);
    const account = (await m.call('GET', '/v1/account')).body;
    expect(account.usage.credits_used).toBe(150);

    // The sending side was metered by the gateway: the deployment and the four transactions.
    await t.service.gateway.meter.flush();
    const rpcUsage = (await sender.call('GET', `/v1/endpoints/${senderEndpoint}/usage?days=7`)).body.usage;
    expect(rpcUsage.methods.find((x: { method: string }) => x.method === 'eth_sendTransaction')).toMatchObject({ requests: 5, credits: 100 });
  });

  it('block subscriptions give block events billed at the network\'s get-block cost', async () => {
    const blocks = await startReceiver();
    try {
      const b = await t.merchant({ plan: 'pro' });
      await b.call('PUT', '/v1/address-watch/webhook', json({ url: blocks.url, enabled: true, events: { payment: false, payout: false, block: true, block_networks: ['anvil'] } }));
      // The scanner may be mid-block when the subscription lands: look at blocks mined after it.
      const start = await anvil.public.getBlockNumber();
      await anvil.test.mine({ blocks: 1 });
      const hash = await anvil.wallet.sendTransaction({ account: owner, to: B, value: 1n, chain: null });
      const receipt = await anvil.public.waitForTransactionReceipt({ hash, pollingInterval: 50 });
      await blocks.waitFor((all) => bodies(all).some((x) => x.block_height === Number(receipt.blockNumber)));
      const ev = bodies(blocks.received).find((x) => x.block_height === Number(receipt.blockNumber))!;
      expect(ev).toEqual({
        id: expect.any(String), type: 'block', network: 'anvil', block_height: Number(receipt.blockNumber),
        block_hash: receipt.blockHash, tx_count: 1, transactions: [hash], created_at: expect.any(String),
      });
      const empty = bodies(blocks.received).find((x) => x.block_height === Number(start) + 1)!;
      expect(empty).toMatchObject({ tx_count: 0, transactions: [] });
      const n = blocks.received.length;
      const usage = await waitForUsage(b, (u) => u.total_credits === n * 25);
      expect(usage.methods).toEqual([{ method: 'webhook:block', requests: n, credits: n * 25 }]);
      // Payments to B are not selected by this merchant's filters, and B is not its watch anyway.
      expect(bodies(blocks.received).every((x) => x.type === 'block')).toBe(true);
    } finally {
      await blocks.close();
    }
  });

  it('a reverted transaction with value moved nothing: `other` with amount 0, billed as other', async () => {
    const token = await deployToken(anvil, owner, 10n ** 18n);
    const requests = (u: any): Record<string, number> => Object.fromEntries((u.methods as any[]).map((x) => [x.method, x.requests]));
    const before = requests((await m.call('GET', '/v1/account/usage?days=7')).body.usage);
    // The token has no payable fallback: sending it ETH reverts. A fixed gas limit skips the
    // estimate (which would refuse), so the reverted transaction is mined.
    const revertedTx = await anvil.wallet.sendTransaction({ account: A, to: token, value: 7n, gas: 100_000n, chain: null });
    expect((await anvil.public.waitForTransactionReceipt({ hash: revertedTx, pollingInterval: 50 })).status).toBe('reverted');

    // Many value transfers in one block: the scanner takes the block's receipts in one call.
    await anvil.test.setAutomine(false);
    const many: `0x${string}`[] = [];
    try {
      for (let i = 1; i <= 9; i++) many.push(await anvil.wallet.sendTransaction({ account: owner, to: B, value: BigInt(i), chain: null }));
      many.push(await anvil.wallet.sendTransaction({ account: A, to: token, value: 8n, gas: 100_000n, chain: null }));
      await anvil.test.mine({ blocks: 1 });
    } finally {
      await anvil.test.setAutomine(true);
    }
    const receipts = await Promise.all(many.map((hash) => anvil.public.waitForTransactionReceipt({ hash, pollingInterval: 50 })));
    expect(new Set(receipts.map((r) => r.blockNumber)).size).toBe(1);
    expect(receipts.map((r) => r.status)).toEqual([...Array(9).fill('success'), 'reverted']);

    // One delivery per transaction, sent concurrently: the last sent is not the last to arrive.
    await rx.waitFor((all) => [revertedTx, ...many].every((hash) => mine(all).some((b) => b.tx_hash === hash)), 20_000);
    const ev = (hash: string) => mine(rx.received).filter((b) => b.tx_hash === hash).map((b) => [b.address, b.type, b.direction, b.token, b.amount]);
    expect(ev(revertedTx)).toEqual([[getAddress(A), 'other', 'out', null, '0']]);
    expect(ev(many[9]!)).toEqual([[getAddress(A), 'other', 'out', null, '0']]);
    for (let i = 0; i < 9; i++) expect(ev(many[i]!)).toEqual([[getAddress(B), 'payment', 'in', null, String(i + 1)]]);

    // Billed as what was delivered: two `other`, nine payments, no payout.
    const delta = (u: any): Record<string, number> => Object.fromEntries(Object.entries(requests(u))
      .map(([k, n]): [string, number] => [k, n - (before[k] ?? 0)]).filter(([, n]) => n !== 0));
    await waitForUsage(m, (u) => Object.values(delta(u)).reduce((a, b) => a + b, 0) >= 11);
    expect(delta((await m.call('GET', '/v1/account/usage?days=7')).body.usage)).toEqual({ 'webhook:other': 2, 'webhook:payment': 9 });
  });

  it('a watch added while another instance holds the lease starts at the head as of the add, not when this one takes over', async () => {
    const env = t.store.catalog.environmentBySlug('anvil2')!;
    const C = anvil.accounts[3]!;
    // Another instance scans anvil2 (its lease runs two more seconds) and has not heard of the watch.
    await t.store.db.insertInto('scanner_leases').values({ network_environment_id: env.id, owner: 'another-instance', generation: 1, expires_at: Date.now() + 2000 }).execute();
    const head = Number(await anvil.public.getBlockNumber());
    expect((await m.call('POST', '/v1/address-watch/addresses', json({ network_slug: 'anvil2', address: C }))).body.created).toBe(true);
    const cursor = await t.store.db.selectFrom('scanner_cursors').select('next_height').where('network_environment_id', '=', env.id).executeTakeFirst();
    expect(cursor?.next_height).toBe(head + 1);
    const hash = await anvil.wallet.sendTransaction({ account: owner, to: C, value: 77n, chain: null });
    // The other instance dies with it: this one takes the lease over and finds the payment.
    await rx.waitFor((all) => bodies(all).some((x) => x.tx_hash === hash && x.network === 'anvil2'), 15_000);
    const lease = await t.store.db.selectFrom('scanner_leases').selectAll().where('network_environment_id', '=', env.id).executeTakeFirstOrThrow();
    expect(lease).toMatchObject({ owner: t.service.addressWatch.instanceId, generation: 2 });
  });

  it('a watch added through one instance while another scans, not having heard of it, gets the payment of the next block', async () => {
    const env = t.store.catalog.environmentBySlug('anvil3')!;
    const C = anvil.accounts[4]!;
    // Instance B: its own registry, read before the add and never told of it (its change feed
    // is late); it holds the lease, its cursor at the first unconfirmed block.
    const registry = new WatchRegistry();
    registry.load(await allWatches(t.store));
    const b = new Scanner({ store: t.store, registry, env, chain: chainFor(env), log: () => {}, pollMs: 50, owner: 'instance-b', leaseMs: 60_000 });
    const cursor = async () => (await t.store.db.selectFrom('scanner_cursors').select('next_height').where('network_environment_id', '=', env.id).executeTakeFirst())?.next_height;
    try {
      const head = Number(await anvil.public.getBlockNumber());
      await b.start();
      expect(b.lease?.owner).toBe('instance-b');
      expect(await cursor()).toBe(head + 1);
      // Added through this instance's API (instance A), which never gets the lease meanwhile.
      const w = (await m.call('POST', '/v1/address-watch/addresses', json({ network_slug: 'anvil3', address: C }))).body;
      expect(w.created).toBe(true);
      const hash = await anvil.wallet.sendTransaction({ account: owner, to: C, value: 78n, chain: null });
      const receipt = await anvil.public.waitForTransactionReceipt({ hash, pollingInterval: 50 });
      expect(Number(receipt.blockNumber)).toBe(head + 1);
      // B scans past it: the block with the payment is not recorded without the watch.
      for (const deadline = Date.now() + 10_000; ((await cursor()) ?? 0) <= head + 1;) {
        if (Date.now() > deadline) throw new Error('B did not scan the block');
        await new Promise((r) => setTimeout(r, 20));
      }
      const events = await t.store.db.selectFrom('watch_events').select(['block_height', 'body']).where('watch_id', '=', w.watch_id).execute();
      expect(events.map((e) => [e.block_height, JSON.parse(e.body).tx_hash])).toEqual([[head + 1, hash]]);
      expect(registry.lookup(env.id, C.toLowerCase())?.map((x) => x.watchId)).toEqual([w.watch_id]);
      expect(b.lease?.owner).toBe('instance-b');
      const row = await t.store.db.selectFrom('watched_addresses').selectAll().where('watch_id', '=', w.watch_id).executeTakeFirstOrThrow();
      expect(row.start_height).toBe(head + 1);
      await rx.waitFor((all) => bodies(all).some((x) => x.tx_hash === hash && x.network === 'anvil3'), 15_000);
    } finally {
      await b.stop();
    }
  });

  it('a restart resumes from the persisted cursor: nothing skipped, nothing twice', async () => {
    const before = mine(rx.received).length;
    const local = t.store.catalog.environmentBySlug('anvil')!.id;
    expect(await t.store.db.selectFrom('scanner_cursors').selectAll().where('network_environment_id', '=', local).executeTakeFirst()).toBeDefined();
    // Stop the scanners (as a shutdown does), mine while nobody scans, start again.
    await t.service.addressWatch.stop();
    const hashes: `0x${string}`[] = [];
    for (let i = 0; i < 3; i++) hashes.push(await anvil.wallet.sendTransaction({ account: owner, to: A, value: BigInt(i + 1), chain: null }));
    await anvil.public.waitForTransactionReceipt({ hash: hashes[2]!, pollingInterval: 50 });
    const { AddressWatch } = await import('../src/watch/service.js');
    const again = new AddressWatch({ store: t.store, config: t.service.config, log: () => {}, webhooks: t.service.webhooks });
    await again.start();
    try {
      await rx.waitFor((all) => mine(all).length >= before + 3, 15_000);
      await new Promise((r) => setTimeout(r, 500));
      expect(mine(rx.received).slice(before).map((x) => x.tx_hash)).toEqual(hashes);
    } finally {
      await again.stop();
    }
  });
});

async function waitForUsage(m: Merchant, predicate: (u: any) => boolean, ms = 10_000): Promise<any> {
  const deadline = Date.now() + ms;
  for (;;) {
    const u = (await m.call('GET', '/v1/account/usage?days=7')).body.usage;
    if (predicate(u)) return u;
    if (Date.now() > deadline) throw new Error(`usage not as expected: ${JSON.stringify(u.methods)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
