import { describe, expect, it } from 'vitest';
import type { ChainAdapter, FetchedBlock, Hit } from '../chains/family.js';
import type { Environment, Store, WatchedAddressRow } from '../store/index.js';
import type { EnvironmentChains } from '../watch/chains.js';
import { WatchRegistry } from '../watch/registry.js';
import { TipWatcher } from './tip.js';

const ENV = 7;
const env = { id: ENV, confirmations: 2, upstreams: ['http://node'] } as unknown as Environment;
/** The one store read the watcher makes (the scanner's cursor), answered without a store. */
const storeAt = (cursor: number) => {
  const chain: unknown = new Proxy({}, { get: (_, k) => (k === 'executeTakeFirst' ? async () => ({ next_height: cursor }) : () => chain) });
  return { db: chain } as Store;
};
const row = (watchId: string, address: string) => ({
  network_environment_id: ENV, watch_id: watchId, account_id: 1, network_slug: 'bitcoin', address, address_key: address,
}) as unknown as WatchedAddressRow;

/** A node whose unconfirmed block pays `address`; hits only for what the registry holds, as a real adapter reports them. */
function node(head: number, payments: Record<number, { address: string; tx: string }>, hashOf = (h: number) => `hash-${h}`) {
  const adapter = {
    head: async () => head,
    block: async (h: number, lookup: WatchRegistry): Promise<FetchedBlock> => {
      const p = payments[h];
      const hits: Hit[] = (p ? lookup.lookup(ENV, p.address) ?? [] : []).map((watch) => ({
        watch, type: 'payment', direction: 'in', txHash: p!.tx, from: null, to: p!.address, token: null, amount: '5', logIndex: null,
      }));
      return { hash: hashOf(h), parentHash: `hash-${h - 1}`, txHashes: p ? [p.tx] : [], hits };
    },
  } as unknown as ChainAdapter;
  return { of: () => adapter } as unknown as EnvironmentChains;
}

describe('the unconfirmed-block look', () => {
  it('reports a hit for an order its earlier pass did not ask for yet, from a block it had already looked at', async () => {
    const registry = new WatchRegistry();
    registry.add(row('w-open', 'addr-open'));
    registry.add(row('w-new', 'addr-new'));
    const tip = new TipWatcher(storeAt(23), registry, node(23, { 23: { address: 'addr-new', tx: 'tx1' } }));
    // The pass's order query ran before the new order committed; the block was fetched after it was paid.
    expect((await tip.hits(env, new Set(['w-open']))).hits).toEqual([]);
    const next = await tip.hits(env, new Set(['w-open', 'w-new']));
    expect(next.hits.map((h) => [h.watchId, h.txHash])).toEqual([['w-new', 'tx1']]);
    expect(next.present).toEqual(new Set(['w-new tx1']));
    // Once per block: the next pass reports nothing new.
    expect((await tip.hits(env, new Set(['w-new']))).hits).toEqual([]);
  });

  it('reports a hit once the registry hears of the watch, with head and cursor unmoved', async () => {
    const registry = new WatchRegistry();
    registry.add(row('w-open', 'addr-open'));
    const tip = new TipWatcher(storeAt(23), registry, node(23, { 23: { address: 'addr-late', tx: 'tx2' } }));
    expect((await tip.hits(env, new Set(['w-open', 'w-late']))).hits).toEqual([]);
    registry.add(row('w-late', 'addr-late'));
    expect((await tip.hits(env, new Set(['w-open', 'w-late']))).hits.map((h) => h.watchId)).toEqual(['w-late']);
  });

  it('a block replaced at the same height is looked at anew', async () => {
    const registry = new WatchRegistry();
    registry.add(row('w', 'addr'));
    let hash = 'a';
    const tip = new TipWatcher(storeAt(23), registry, node(24, { 24: { address: 'addr', tx: 'tx3' } }, (h) => `${hash}-${h}`));
    expect((await tip.hits(env, new Set(['w']))).hits).toHaveLength(1);
    hash = 'b';
    registry.add(row('w-other', 'elsewhere')); // a change of view, so the look runs again
    expect((await tip.hits(env, new Set(['w']))).hits).toHaveLength(1);
  });
});
