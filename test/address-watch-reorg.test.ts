import { type Address } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAnvil, type Anvil } from './helpers/anvil.js';
import { startReceiver, type Receiver } from './helpers/receiver.js';
import { startTestService, type Merchant, type TestService } from './helpers/service.js';
import { startFakeEvmChain, type FakeEvm } from './helpers/fake-evm.js';
import { randomBytes } from 'node:crypto';
import { KEPT_BLOCKS } from '../src/watch/record.js';

const json = (o: unknown) => JSON.stringify(o);
let anvil: Anvil;
let t: TestService;
let rx: Receiver;
let m: Merchant;
let A: Address;
let owner: Address;
/** A chain the test reorganises at will, re-mining a transaction under the same hash. */
let fake: FakeEvm;
let fakeTip = 9;
let fakeWatch: string;
const F = '0x00000000000000000000000000000000000000f1';
const SENDER = '0x00000000000000000000000000000000000000a1';

beforeAll(async () => {
  [anvil, rx, fake] = await Promise.all([startAnvil(), startReceiver(), startFakeEvmChain()]);
  // One chain, two environments: `chain` emits at 1 confirmation, `chain-safe` at 3.
  t = await startTestService({
    networks: [{
      slug: 'chain', name: 'Chain', family: 'evm',
      environments: [
        { slug: 'fast', upstreams: [anvil.url], confirmations: 1 },
        { slug: 'safe', upstreams: [anvil.url], confirmations: 3 },
      ],
    }, {
      slug: 'fake', name: 'Fake', family: 'evm', environments: [{ slug: 'local', upstreams: [fake.url], confirmations: 1 }],
    }],
    webhooks: { allow_private_urls: true, timeout_ms: 2000 },
  }, { watch: { pollMs: 100 } });
  [owner, A] = anvil.accounts as [Address, Address];
  m = await t.merchant({ plan: 'pro' });
  await m.call('PUT', '/v1/address-watch/webhook', json({ url: rx.url, enabled: true, events: { block: false } }));
  await m.call('POST', '/v1/address-watch/addresses', json({ network_slug: 'chain', address: A }));
  await m.call('POST', '/v1/address-watch/addresses', json({ network_slug: 'chain-safe', address: A }));
  fakeWatch = (await m.call('POST', '/v1/address-watch/addresses', json({ network_slug: 'fake', address: F }))).body.watch_id;
}, 60_000);
afterAll(async () => {
  await t?.stop();
  await Promise.all([anvil?.stop(), rx?.close(), fake?.close()]);
});

const cursor = async (envSlug: string) => {
  const env = t.store.catalog.environmentBySlug(envSlug)!;
  return (await t.store.db.selectFrom('scanner_cursors').select('next_height').where('network_environment_id', '=', env.id).executeTakeFirst())?.next_height;
};
async function until(what: string, fn: () => Promise<boolean>, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await fn())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('reorgs', () => {
  it('rewinds on a parent-hash mismatch; orphaned events leave the feed; below the confirmation depth nothing is emitted', async () => {
    await anvil.test.mine({ blocks: 3 });
    const h0 = Number(await anvil.public.getBlockNumber());
    await until('both scanners at the head', async () => (await cursor('chain')) === h0 + 1 && (await cursor('chain-safe')) === h0 - 1);
    const snapshot = await anvil.test.snapshot();

    // On the chain that is about to be dropped: a payment to A in block h0+1.
    const orphan = await anvil.wallet.sendTransaction({ account: owner, to: A, value: 111n, chain: null });
    await rx.waitFor((all) => all.some((r) => JSON.parse(r.body).tx_hash === orphan));
    expect((await m.call('GET', '/v1/address-watch/events?network=chain')).body.events.map((e: any) => e.tx_hash)).toEqual([orphan]);

    // The chain reorganises: back to h0, then a different history that is longer.
    await anvil.test.revert({ id: snapshot });
    await anvil.test.mine({ blocks: 2 });
    const kept = await anvil.wallet.sendTransaction({ account: owner, to: A, value: 222n, chain: null });
    await anvil.test.mine({ blocks: 3 });
    const head = Number(await anvil.public.getBlockNumber());
    await until('scanners past the reorg', async () => (await cursor('chain')) === head + 1 && (await cursor('chain-safe')) === head - 1);

    const feed = (await m.call('GET', '/v1/address-watch/events')).body.events as any[];
    expect(feed.map((e) => [e.network, e.tx_hash, e.amount]).sort()).toEqual([
      ['chain', kept, '222'],
      ['chain-safe', kept, '222'],
    ]);
    const receipt = await anvil.public.getTransactionReceipt({ hash: kept });
    for (const e of feed) expect(e.block_hash).toBe(receipt.blockHash);

    // What a receiver saw: at 1 confirmation, the orphaned payment (already delivered) and then
    // the new one; at 3 confirmations only the payment that stayed on the chain.
    await rx.waitFor((all) => all.filter((r) => JSON.parse(r.body).tx_hash === kept).length === 2);
    const seen = rx.received.map((r) => JSON.parse(r.body)).map((b) => [b.network, b.tx_hash]);
    expect(seen[0]).toEqual(['chain', orphan]);
    expect(seen.slice(1).sort()).toEqual([['chain', kept], ['chain-safe', kept]]);
  });

  it('deliveries of orphaned events are cancelled, also one in flight during the rewind', async () => {
    // The receiver holds its answer until after the rewind: the delivery is in flight then,
    // whatever the timing of the scanner, and its failure must not put it back in the queue.
    let answer!: (status: number) => void;
    rx.respond = () => new Promise<number>((resolve) => { answer = resolve; });
    const h0 = Number(await anvil.public.getBlockNumber());
    await until('fast scanner at the head', async () => (await cursor('chain')) === h0 + 1);
    const snapshot = await anvil.test.snapshot();
    const orphan = await anvil.wallet.sendTransaction({ account: owner, to: A, value: 333n, chain: null });
    await rx.waitFor((all) => all.some((r) => JSON.parse(r.body).tx_hash === orphan));
    await anvil.test.revert({ id: snapshot });
    await anvil.test.mine({ blocks: 3 });
    const head = Number(await anvil.public.getBlockNumber());
    await until('fast scanner past the reorg', async () => (await cursor('chain')) === head + 1);
    answer(503);
    const latest = async () => (await m.call('GET', '/v1/address-watch/deliveries?limit=1')).body.deliveries[0];
    await until('the attempt to be recorded', async () => (await latest()).attempts.length === 1);
    expect(await latest()).toMatchObject({ status: 'cancelled', last_error: 'the block left the chain (reorg)', attempt_count: 1, next_retry_at: null });
    expect(JSON.parse(rx.received.at(-1)!.body).tx_hash).toBe(orphan);
    rx.respond = () => 200;
  });
});

describe('a transaction re-mined after a reorg (fake node)', () => {
  const mineFake = (txs: Array<{ hash?: string }> = []) => {
    const b = fake.mine(txs.map((x) => ({ from: SENDER, to: F, wei: 5n, ...x })));
    fakeTip = b.height;
    return b;
  };
  const orphanFake = (height: number) => {
    fake.orphan(height);
    fakeTip = height - 1;
  };
  const events = (tx: string) => t.store.db.selectFrom('watch_events').select(['id', 'block_height', 'block_hash', 'removed'])
    .where('watch_id', '=', fakeWatch).where('body', 'like', `%${tx}%`).orderBy('id').execute();
  const atTip = () => until('the fake chain\'s scanner at its head', async () => (await cursor('fake')) === fakeTip + 1, 60_000);

  it('each removal marks its event once; the re-mined transaction is one new event with its new block and one delivery, through two reorgs', async () => {
    await atTip();
    const tx = `0x${randomBytes(32).toString('hex')}`;
    const a = mineFake([{ hash: tx }]);
    await atTip();
    // Reorg 1: the block goes; the new chain has the transaction one block later.
    orphanFake(a.height);
    mineFake();
    const b = mineFake([{ hash: tx }]);
    await atTip();
    // Reorg 2: that block goes too; the transaction comes back two blocks later still.
    orphanFake(b.height);
    mineFake();
    mineFake();
    const c = mineFake([{ hash: tx }]);
    await atTip();
    const rows = await events(tx);
    expect(rows.map((e) => [e.block_height, e.block_hash, e.removed])).toEqual([
      [a.height, a.hash, 1], [b.height, b.hash, 1], [c.height, c.hash, 0],
    ]);
    // The feed: the live one only.
    const feed = (await m.call('GET', '/v1/address-watch/events?network=fake')).body.events as any[];
    expect(feed.filter((e) => e.tx_hash === tx).map((e) => [e.block_height, e.block_hash])).toEqual([[c.height, c.hash]]);
    // One delivery per event, and the receiver gets the live one once.
    const deliveries = await t.store.db.selectFrom('webhook_deliveries').select('event_id').where('event_id', 'in', rows.map((e) => e.id)).execute();
    expect(deliveries.map((d) => Number(d.event_id)).sort((x, y) => x - y)).toEqual(rows.map((e) => e.id));
    await rx.waitFor((all) => all.some((r) => JSON.parse(r.body).block_hash === c.hash));
    expect(rx.received.filter((r) => JSON.parse(r.body).block_hash === c.hash)).toHaveLength(1);
  });

  it('a block replaced at the same height is noticed without a block above it (the head\'s hash is compared on every tick)', async () => {
    await atTip();
    const tx = `0x${randomBytes(32).toString('hex')}`;
    const a = mineFake([{ hash: tx }]);
    await atTip();
    await until('the payment recorded', async () => (await events(tx)).length === 1);
    // invalidateblock + generateblock: the same height, another block, and nothing above it.
    orphanFake(a.height);
    const b = mineFake();
    expect(b.height).toBe(a.height);
    await until('the replaced block\'s event removed', async () => (await events(tx))[0]?.removed === 1);
    await atTip();
    const { hash } = (await t.store.db.selectFrom('scanner_blocks').select('hash')
      .where('network_environment_id', '=', t.store.catalog.environmentBySlug('fake')!.id).where('height', '=', b.height).executeTakeFirstOrThrow());
    expect(hash).toBe(b.hash);
  });

  it(`a reorg deeper than the ${KEPT_BLOCKS} kept block hashes: the orphaned event is removed and the payment re-mined below them is found`, async () => {
    await atTip();
    const tx = `0x${randomBytes(32).toString('hex')}`;
    const a = mineFake([{ hash: tx }]);
    for (let i = 0; i < KEPT_BLOCKS + 20; i++) mineFake();
    await atTip();
    orphanFake(a.height);
    mineFake();
    mineFake();
    const b = mineFake([{ hash: tx }]);
    for (let i = 0; i < KEPT_BLOCKS + 30; i++) mineFake();
    await atTip();
    const rows = await events(tx);
    expect(rows.map((e) => [e.block_height, e.block_hash, e.removed])).toEqual([[a.height, a.hash, 1], [b.height, b.hash, 0]]);
  }, 120_000);
});
