import { LRUCache } from 'lru-cache';
import type { CacheDecision, CachePlan as FamilyCachePlan, ChainView } from '../chains/gateway.js';

/**
 * Answers that cannot change, cached per network environment: which ones is the family's cache
 * plan (`gateway.cache` of its traits: EVM's are what a by-hash lookup found in a final block,
 * blocks and state at or below the finalized height, the chain id). Never a null (an unknown hash
 * may be known a block later), never an error.
 *
 * Each entry carries the highest block height it depends on; a reorg at height `h` (seen by the
 * probe as a changed hash at a height some entry came from, or as the finalized height going
 * back) drops every entry at `h` or above. Memory is bounded by bytes (LRU).
 */

/** The chain's known state for one environment, from the probe. */
export type { ChainView };

/**
 * A second tier shared by instances (Redis in multi-instance mode: a key per answer, a sorted
 * set of keys by height per environment, a pub/sub channel for drops). The memory tier answers
 * first; only its misses ask this one. A reorg seen by one instance must reach every instance's
 * memory too, hence `onDrop`.
 */
export interface SharedCacheTier {
  /** `hash`: the block the answer came from, so each instance's probe checks what it took from here too. */
  get(key: string): Promise<{ text: string; envId: number; height: number | undefined; hash?: string | undefined } | undefined>;
  set(key: string, text: string, envId: number, height: number | undefined, hash?: string): Promise<void>;
  /** Drops shared entries of the environment at `height` and above, and tells the other instances. */
  dropFrom(envId: number, height: number): Promise<void>;
  /** Registers what to do when another instance dropped entries. */
  onDrop(listener: (envId: number, height: number) => void): void;
}

/** What the family's cache plan decided for one call before asking the upstream, and its key. */
export interface CachePlan extends CacheDecision {
  key: string;
  /** The family's plan, which reads the result's block once the answer is in hand. */
  rules: FamilyCachePlan;
}

interface Entry { text: string; envId: number; height: number | undefined }

/** Decides whether a call may be answered from the cache (by the family's plan); undefined: never for this call. */
export function planCache(envId: number, rules: FamilyCachePlan | undefined, method: string, params: unknown, view: ChainView | undefined): CachePlan | undefined {
  if (!rules) return undefined;
  const p = Array.isArray(params) ? params : params === undefined ? [] : undefined;
  if (!p) return undefined;
  const d = rules.decide(method, p, view);
  return d && { key: `${envId}\u0000${method}\u0000${JSON.stringify(p)}`, height: d.height, resultBlock: d.resultBlock, rules };
}

/** The height and hash an answer belongs to, if it may be cached under `plan`; undefined: do not cache. */
export function finalHeightOf(plan: CachePlan, result: unknown, view: ChainView | undefined): { height: number | undefined; hash: string | undefined } | undefined {
  return plan.rules.finalOf(plan, result, view);
}

export interface CacheStats { hits: number; misses: number; entries: number; bytes: number; dropped: number }

export class ResponseCache {
  readonly #lru: LRUCache<string, Entry>;
  /** envId -> height -> keys of entries depending on that height. */
  readonly #byHeight = new Map<number, Map<number, Set<string>>>();
  /** envId -> height -> block hash the cached entries at that height came from. */
  readonly #anchors = new Map<number, Map<number, string>>();
  readonly #shared: SharedCacheTier | undefined;
  readonly stats: CacheStats = { hits: 0, misses: 0, entries: 0, bytes: 0, dropped: 0 };

  constructor(maxBytes: number, shared?: SharedCacheTier) {
    this.#shared = shared;
    shared?.onDrop((envId, height) => this.#dropLocal(envId, height));
    this.#lru = new LRUCache<string, Entry>({
      maxSize: maxBytes,
      sizeCalculation: (e, k) => e.text.length + k.length + 64,
      dispose: (e, k) => this.#unindex(e, k),
    });
  }

  get(key: string): string | undefined {
    const e = this.#lru.get(key);
    if (e) this.stats.hits++;
    else this.stats.misses++;
    return e?.text;
  }

  /** The shared tier's answer on a memory miss, kept in memory too; undefined without a shared tier or when it fails. */
  async getShared(key: string): Promise<string | undefined> {
    if (!this.#shared) return undefined;
    const e = await this.#shared.get(key).catch(() => undefined);
    if (!e) return undefined;
    this.stats.hits++;
    this.stats.misses--;
    this.#keep(key, e.text, e.envId, e.height, e.hash);
    return e.text;
  }

  set(key: string, text: string, envId: number, height: number | undefined, hash: string | undefined): void {
    if (this.#keep(key, text, envId, height, hash)) void this.#shared?.set(key, text, envId, height, hash).catch(() => {});
  }

  /** Stores in memory and remembers the block hash the answer relies on; false when it did not fit. */
  #keep(key: string, text: string, envId: number, height: number | undefined, hash: string | undefined): boolean {
    if (height !== undefined && hash !== undefined) {
      const known = this.#anchors.get(envId)?.get(height);
      // Two answers disagree on the block at this height: the chain moved under us.
      if (known !== undefined && known !== hash) this.dropFrom(envId, height);
    }
    if (!this.#store(key, text, envId, height)) return false;
    if (height !== undefined && hash !== undefined) {
      let anchors = this.#anchors.get(envId);
      if (!anchors) this.#anchors.set(envId, anchors = new Map());
      anchors.set(height, hash);
    }
    return true;
  }

  /** False when the answer is larger than the whole cache. */
  #store(key: string, text: string, envId: number, height: number | undefined): boolean {
    this.#lru.set(key, { text, envId, height });
    if (!this.#lru.has(key)) return false;
    if (height === undefined) return true;
    let heights = this.#byHeight.get(envId);
    if (!heights) this.#byHeight.set(envId, heights = new Map());
    let keys = heights.get(height);
    if (!keys) heights.set(height, keys = new Set());
    keys.add(key);
    return true;
  }

  /** Drops every entry of the environment that depends on a block at `height` or above, here and in the shared tier. */
  dropFrom(envId: number, height: number): number {
    const dropped = this.#dropLocal(envId, height);
    void this.#shared?.dropFrom(envId, height).catch(() => {});
    return dropped;
  }

  #dropLocal(envId: number, height: number): number {
    let dropped = 0;
    const heights = this.#byHeight.get(envId);
    if (heights) {
      for (const [h, keys] of [...heights]) {
        if (h < height) continue;
        for (const k of [...keys]) if (this.#lru.delete(k)) dropped++;
        heights.delete(h);
      }
    }
    const anchors = this.#anchors.get(envId);
    if (anchors) for (const h of [...anchors.keys()]) if (h >= height) anchors.delete(h);
    this.stats.dropped += dropped;
    return dropped;
  }

  /** Heights whose block hash some cached entry relies on, highest first, with the hash. */
  anchors(envId: number): Array<[height: number, hash: string]> {
    return [...(this.#anchors.get(envId) ?? [])].sort((a, b) => b[0] - a[0]);
  }

  snapshot(): CacheStats {
    return { ...this.stats, entries: this.#lru.size, bytes: this.#lru.calculatedSize };
  }

  #unindex(e: Entry, key: string): void {
    if (e.height === undefined) return;
    const heights = this.#byHeight.get(e.envId);
    const keys = heights?.get(e.height);
    if (!keys) return;
    keys.delete(key);
    if (keys.size > 0) return;
    // Nothing relies on that block any more: its hash need not be checked.
    heights!.delete(e.height);
    this.#anchors.get(e.envId)?.delete(e.height);
  }
}

/**
 * Given the heights cached answers rely on (highest first) and a check against the node, the
 * lowest height whose block may have changed (entries from there up must go), or undefined
 * when the highest still matches. If a block matches, so do all below it (each block commits
 * to its parent), so a bisection finds the boundary in log2(n) checks.
 */
export async function firstChangedHeight(anchors: ReadonlyArray<readonly [number, string]>, matches: (i: number) => Promise<boolean>): Promise<number | undefined> {
  if (anchors.length === 0 || await matches(0)) return undefined;
  let lo = 1;
  let hi = anchors.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (await matches(mid)) hi = mid;
    else lo = mid + 1;
  }
  return lo < anchors.length ? anchors[lo]![0] + 1 : 0;
}
