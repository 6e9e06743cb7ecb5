import { type Address } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAnvil, type Anvil } from './helpers/anvil.js';
import { startReceiver, type Receiver } from './helpers/receiver.js';
import { startTestService, type Merchant, type TestService } from './helpers/service.js';

const json = (o: unknown) => JSON.stringify(o);
let anvil: Anvil;
let t: TestService;
let rx: Receiver;
let m: Merchant;
let A: Address;
let owner: Address;

beforeAll(async () => {
  [anvil, rx] = await Promise.all([startAnvil(), startReceiver()]);
  // One chain, two environments: `chain` emits at 1 confirmation, `chain-safe` at 3.
  t = await startTestService({
    networks: [{
      slug: 'chain', name: 'Chain', family: 'evm',
      environments: [
        { slug: 'fast', upstreams: [anvil.url], confirmations: 1 },
        { slug: 'safe', upstreams: [anvil.url], confirmations: 3 },
      ],
    }],
    webhooks: { allow_private_urls: true, timeout_ms: 2000 },
  }, { watch: { pollMs: 100 } });
  [owner, A] = anvil.accounts as [Address, Address];
  m = await t.merchant({ plan: 'pro' });
  await m.call('PUT', '/v1/address-watch/webhook', json({ url: rx.url, enabled: true, events: { block: false } }));
  await m.call('POST', '/v1/address-watch/addresses', json({ network_slug: 'chain', address: A }));
  await m.call('POST', '/v1/address-watch/addresses', json({ network_slug: 'chain-safe', address: A }));
}, 60_000);
afterAll(async () => {
  await t?.stop();
  await Promise.all([anvil?.stop(), rx?.close()]);
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
