import type { WatchedAddressRow } from '../store/index.js';
import type { WatchLookup, WatchRef } from '../chains/family.js';

// Defined beside the matchers that produce it (chains/ sits below the watch).
export type { WatchRef } from '../chains/family.js';

/**
 * The watched addresses of every environment, in memory, keyed by match key: a scanner asks
 * about each address it sees with one hash lookup, so the cost of a block does not depend
 * on how many addresses are watched.
 */
export class WatchRegistry implements WatchLookup {
  readonly #byEnv = new Map<number, Map<string, WatchRef[]>>();
  readonly #accountsByEnv = new Map<number, Map<number, number>>();
  readonly #listeners = new Set<() => void>();
  /** Per environment, an id every watch at or below which is known here (watch/record.ts). */
  readonly #seenThrough = new Map<number, number>();

  /** Every watch of the store, as read in one query (so complete up to its highest id per environment). */
  load(rows: Iterable<WatchedAddressRow>): void {
    for (const r of rows) {
      this.#add(r);
      this.seen(r.network_environment_id, r.id);
    }
  }

  /** Replaces every watch (after a lost change feed). */
  reset(rows: Iterable<WatchedAddressRow>): void {
    this.#byEnv.clear();
    this.#accountsByEnv.clear();
    this.load(rows);
    this.#changed();
  }

  /** Watch ids up to which the environment's watches are all known (never from a single add: others may be in flight). */
  seenThrough(envId: number): number {
    return this.#seenThrough.get(envId) ?? 0;
  }

  seen(envId: number, id: number): void {
    if (id > this.seenThrough(envId)) this.#seenThrough.set(envId, id);
  }

  has(row: WatchedAddressRow): boolean {
    return this.lookup(row.network_environment_id, row.address_key)?.some((w) => w.watchId === row.watch_id) ?? false;
  }

  add(row: WatchedAddressRow): void {
    this.#add(row);
    this.#changed();
  }

  remove(row: WatchedAddressRow): void {
    const byKey = this.#byEnv.get(row.network_environment_id);
    const list = byKey?.get(row.address_key);
    if (!byKey || !list) return;
    const rest = list.filter((w) => w.watchId !== row.watch_id);
    if (rest.length === list.length) return;
    if (rest.length) byKey.set(row.address_key, rest);
    else byKey.delete(row.address_key);
    if (byKey.size === 0) this.#byEnv.delete(row.network_environment_id);
    const counts = this.#accountsByEnv.get(row.network_environment_id)!;
    const n = (counts.get(row.account_id) ?? 1) - 1;
    if (n > 0) counts.set(row.account_id, n);
    else counts.delete(row.account_id);
    if (counts.size === 0) this.#accountsByEnv.delete(row.network_environment_id);
    this.#changed();
  }

  /** Watches of `key` on the environment; undefined (the common case) when none. */
  lookup(envId: number, key: string): WatchRef[] | undefined {
    return this.#byEnv.get(envId)?.get(key);
  }

  watchedEnvIds(): number[] {
    return [...this.#byEnv.keys()];
  }

  accountWatches(envId: number, accountId: number): boolean {
    return this.#accountsByEnv.get(envId)?.has(accountId) ?? false;
  }

  size(envId: number): number {
    return this.#byEnv.get(envId)?.size ?? 0;
  }

  onChange(fn: () => void): () => void {
    this.#listeners.add(fn);
    return () => this.#listeners.delete(fn);
  }

  #add(r: WatchedAddressRow): void {
    let byKey = this.#byEnv.get(r.network_environment_id);
    if (!byKey) this.#byEnv.set(r.network_environment_id, (byKey = new Map()));
    const ref: WatchRef = { watchId: r.watch_id, accountId: r.account_id, network: r.network_slug, address: r.address };
    const list = byKey.get(r.address_key);
    if (list) {
      if (list.some((w) => w.watchId === r.watch_id)) return;
      list.push(ref);
    } else byKey.set(r.address_key, [ref]);
    let counts = this.#accountsByEnv.get(r.network_environment_id);
    if (!counts) this.#accountsByEnv.set(r.network_environment_id, (counts = new Map()));
    counts.set(r.account_id, (counts.get(r.account_id) ?? 0) + 1);
  }

  #changed(): void {
    for (const fn of this.#listeners) fn();
  }
}
