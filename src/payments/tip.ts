import type { Environment, Store } from '../store/index.js';
import { chainFor } from '../watch/chains.js';
import { getCursor } from '../watch/record.js';
import type { WatchRegistry } from '../watch/registry.js';
import type { ChainAdapter } from '../chains/family.js';

/** A transfer to an open order's watch in a block the scanner has not recorded yet. */
export interface TipHit {
  envId: number;
  watchId: string;
  txHash: string;
  token: string | null;
  amount: string;
}

/**
 * Looks at the blocks between the scanner's cursor and the head of networks that wait for
 * more than one confirmation, so an order can say `seen` as soon as its payment is in a
 * block. Nothing here is recorded as an Address Watch event: the scanner does that once the
 * block is confirmed, and reorg handling stays where it is.
 */
export class TipWatcher {
  readonly #store: Store;
  readonly #registry: WatchRegistry;
  readonly #chains = new Map<number, ChainAdapter>();
  /** The highest block looked at per environment, with its hash: a block is looked at once unless it changes. */
  readonly #seen = new Map<number, Map<number, string>>();
  /** Head and cursor at the last look: with neither moved there is nothing new to fetch. */
  readonly #last = new Map<number, string>();

  constructor(store: Store, registry: WatchRegistry) {
    this.#store = store;
    this.#registry = registry;
  }

  /** Payment hits on `watchIds` in the unconfirmed blocks of `env` not looked at before. */
  async hits(env: Environment, watchIds: ReadonlySet<string>): Promise<TipHit[]> {
    if (env.confirmations <= 1 || env.upstreams.length === 0) return [];
    const chain = this.#chain(env);
    const cursor = await getCursor(this.#store, env.id);
    if (cursor === undefined) return [];
    const head = await chain.head();
    const mark = `${cursor}:${head}:${[...watchIds].sort().join(',')}`;
    if (this.#last.get(env.id) === mark) return [];
    const looked = this.#seen.get(env.id) ?? new Map<number, string>();
    this.#seen.set(env.id, looked);
    for (const h of looked.keys()) if (h < cursor) looked.delete(h);
    const out: TipHit[] = [];
    for (let h = cursor; h <= head && h < cursor + 64; h++) {
      const block = await chain.block(h, this.#registry, env.id);
      if (!block) break;
      if (looked.get(h) === block.hash) continue;
      looked.set(h, block.hash);
      for (const hit of block.hits) {
        if (hit.type !== 'payment' || hit.direction !== 'in' || !watchIds.has(hit.watch.watchId)) continue;
        out.push({ envId: env.id, watchId: hit.watch.watchId, txHash: hit.txHash, token: hit.token, amount: hit.amount });
      }
    }
    this.#last.set(env.id, mark);
    return out;
  }

  #chain(env: Environment): ChainAdapter {
    let chain = this.#chains.get(env.id);
    if (!chain) {
      chain = chainFor(env);
      this.#chains.set(env.id, chain);
    }
    return chain;
  }

  async close(): Promise<void> {
    await Promise.all([...this.#chains.values()].map((c) => c.close()));
    this.#chains.clear();
  }
}
