import { SKIPPED } from '../chains/family.js';
import type { Environment, Store } from '../store/index.js';
import type { EnvironmentChains } from '../watch/chains.js';
import { getCursor } from '../watch/record.js';
import type { WatchRegistry } from '../watch/registry.js';

/** A transfer to an open order's watch in a block the scanner has not recorded yet. */
export interface TipHit {
  envId: number;
  watchId: string;
  txHash: string;
  token: string | null;
  amount: string;
  /** The account paid (a referenced order's recipient check). */
  to: string | null;
}

/** What a look at the unconfirmed blocks found. */
export interface TipLook {
  /** Hits in blocks not looked at before (a block is looked at again only if it changed). */
  hits: TipHit[];
  /**
   * Every payment to `watchIds` now in the blocks from the scanner's cursor to the head, as
   * `${watchId} ${txHash}`; undefined when the look did not reach the head (a block missing,
   * or more than the window), so nothing may be taken for gone.
   */
  present: Set<string> | undefined;
}

/** Blocks ahead of the scanner's cursor looked at per pass. */
const WINDOW = 64;

/**
 * Looks at the blocks between the scanner's cursor and the head of networks that wait for
 * more than one confirmation, so an order can say `seen` as soon as its payment is in a
 * block, and knows at once when that block leaves the chain. Nothing here is
 * recorded as an Address Watch event: the scanner does that once the block is confirmed.
 */
export class TipWatcher {
  readonly #store: Store;
  readonly #registry: WatchRegistry;
  readonly #chains: EnvironmentChains;
  /** The blocks looked at per environment, by height: the hash, and the hits already reported for it. */
  readonly #seen = new Map<number, Map<number, { hash: string; reported: Set<string> }>>();
  /** Head, cursor, watches and registry at the last look: with none changed there is nothing new to fetch. */
  readonly #last = new Map<number, { mark: string; present: Set<string> | undefined }>();
  /** Bumped when this instance's registry changes (a watch heard of late, from another instance). */
  #registryVersion = 0;

  constructor(store: Store, registry: WatchRegistry, chains: EnvironmentChains) {
    this.#store = store;
    this.#registry = registry;
    this.#chains = chains;
    registry.onChange(() => { this.#registryVersion++; });
  }

  /** Payment hits on `watchIds` in the unconfirmed blocks of `env`. */
  async hits(env: Environment, watchIds: ReadonlySet<string>): Promise<TipLook> {
    if (env.confirmations <= 1 || env.upstreams.length === 0) return { hits: [], present: undefined };
    const chain = this.#chains.of(env);
    const cursor = await getCursor(this.#store, env.id);
    if (cursor === undefined) return { hits: [], present: undefined };
    const head = await chain.head();
    const mark = `${cursor}:${head}:${this.#registryVersion}:${[...watchIds].sort().join(',')}`;
    const last = this.#last.get(env.id);
    if (last?.mark === mark) return { hits: [], present: last.present };
    const looked = this.#seen.get(env.id) ?? new Map<number, { hash: string; reported: Set<string> }>();
    this.#seen.set(env.id, looked);
    for (const h of looked.keys()) if (h < cursor || h > head) looked.delete(h);
    const out: TipHit[] = [];
    const present = new Set<string>();
    let complete = head < cursor + WINDOW;
    for (let h = cursor; h <= head && h < cursor + WINDOW; h++) {
      const block = await chain.block(h, this.#registry, env.id);
      if (!block) {
        complete = false;
        break;
      }
      // A skipped slot has nothing to show.
      if (block === SKIPPED) continue;
      let entry = looked.get(h);
      if (entry?.hash !== block.hash) looked.set(h, (entry = { hash: block.hash, reported: new Set() }));
      // Matched again on every look, not only when the block is new: an order whose row this
      // pass's query missed (committed while the look was under way) or whose watch the
      // registry heard of late must still get its hit from a block looked at before.
      for (const hit of block.hits) {
        if (hit.type !== 'payment' || hit.direction !== 'in') continue;
        const key = `${hit.watch.watchId} ${hit.txHash}`;
        present.add(key);
        if (!watchIds.has(hit.watch.watchId) || entry.reported.has(key)) continue;
        entry.reported.add(key);
        out.push({ envId: env.id, watchId: hit.watch.watchId, txHash: hit.txHash, token: hit.token, amount: hit.amount, to: hit.to });
      }
    }
    const result = complete ? present : undefined;
    this.#last.set(env.id, { mark, present: result });
    return { hits: out, present: result };
  }

}
