import type { Config } from '../config/index.js';
import type { Store } from '../store/index.js';
import { blockSubscribers } from '../webhooks/config.js';
import { blockNetworkEnvIds } from '../webhooks/filters.js';
import { chainFor } from './chains.js';
import { Scanner } from './scanner.js';
import { WatchRegistry } from './registry.js';
import { allWatches } from './watches.js';
import { randomUUID } from 'node:crypto';
import { CHANNELS, type WatchedAddressRow } from '../store/index.js';
import { fence, LeaseLostError, type ScannerLease } from './lease.js';
import { Supervisor } from '../runtime/supervisor.js';
import { RpcctlError } from '../util/errors.js';
import type { Tracing } from '../telemetry/index.js';

/** Bringing the scanners in line with what is watched, under the supervisor. */
export const RECONCILE_TASK = 'watch-reconcile';
export const RELOAD_TASK = 'watch-reload';
const RELOAD_BACKOFF = { minMs: 250, maxMs: 5000 };

/** Rolls back clearing an environment a watch was added to meanwhile. */
class StillWatchedError extends RpcctlError {
  readonly code = 'E_STILL_WATCHED';
}

interface WatchChange { op: '+' | '-'; row: WatchedAddressRow }
/** The periodic reconcile: webhook block subscriptions changed elsewhere, and a retry of one that failed. */
const RECONCILE_MS = 5000;

export interface AddressWatchOptions {
  store: Store;
  config: Config;
  log: (line: string) => void;
  /** Head polling interval of the scanners (default 500 ms). */
  pollMs?: number;
  /** Scanner lease length (default 5 s): how soon another instance takes over a dead one's scanning. */
  leaseMs?: number;
  /** The running webhook service (webhooks/service.ts): woken when a block's deliveries are written. */
  webhooks: { kick(): void };
  /** Runs the scanners and the reconcile (one of its own when none is given). */
  supervisor?: Supervisor;
  /** Each scanned block a span (tracing on only). */
  tracing?: Tracing | undefined;
}

/**
 * Address Watch in one object: the in-memory watch sets and a scanner per watched environment.
 * Its API routes (watch/routes.ts) are built by serve/, which hands them to the API server;
 * the webhook service it wakes is handed in.
 */
export class AddressWatch {
  readonly registry = new WatchRegistry();
  /** Names this instance in scanner leases. */
  readonly instanceId = randomUUID();
  readonly #o: AddressWatchOptions;
  readonly #recorded = new Set<() => void>();
  readonly #scanners = new Map<number, Scanner>();
  #reconciling: Promise<void> = Promise.resolve();
  #again = false;
  #stopped = false;
  #stopping: Promise<void> | undefined;
  #reloading: Promise<void> | undefined;
  #reloadsWanted = 0;
  #reloadsDone = 0;
  /** Changes heard while a reload reads: applied again on top of what it read. */
  #heardDuringReload: WatchChange[] | undefined;
  #unsubscribe: () => void = () => {};
  readonly #supervisor: Supervisor;

  constructor(o: AddressWatchOptions) {
    this.#o = o;
    this.#supervisor = o.supervisor ?? new Supervisor({ log: o.log });
  }

  async start(): Promise<void> {
    // Watches added or removed through another instance (its API, its payment orders): this
    // instance's scanners match against this registry too. Listening before the load, so an
    // add committed meanwhile is heard if not read. A lost LISTEN connection reloads
    // everything; block subscriptions (webhook settings) are re-read by a periodic reconcile.
    const unlisten = this.#o.store.notifications.on(CHANNELS.watches, (payload) => this.#onWatchChange(payload), () => void this.reloadWatches());
    await this.#o.store.notifications.listening();
    this.registry.load(await allWatches(this.#o.store));
    this.#unsubscribe = this.registry.onChange(() => void this.reconcile());
    const unsubscribe = this.#unsubscribe;
    this.#unsubscribe = () => { unsubscribe(); unlisten(); };
    await this.reconcile();
    // On every store: a reconcile that failed (the store away) is tried again here.
    this.#supervisor.every(RECONCILE_TASK, RECONCILE_MS, () => this.#reconcileQueued(true), { immediate: false });
  }

  /**
   * A watch this instance committed (watches.ts writers): matched here at once rather than at
   * its own notification; resolves once a scanner for its network knows where it starts, so a
   * payment sent right after is seen.
   */
  async watchAdded(row: WatchedAddressRow): Promise<void> {
    this.registry.add(row);
    await this.reconcile();
  }

  /**
   * Calls `fn` whenever a scanner of this instance committed a block's events or took some off
   * (a reorg): the payment engine looks at once. Returns the unsubscribe.
   */
  onRecorded(fn: () => void): () => void {
    this.#recorded.add(fn);
    return () => this.#recorded.delete(fn);
  }

  /** A watch this instance removed (watches.ts writers). */
  watchRemoved(row: WatchedAddressRow): void {
    this.registry.remove(row);
  }

  /** Each scanning environment (network and environment slugs) with how many blocks it is behind the head. */
  scannerLags(): Array<{ network: string; env: string; lag: number | undefined }> {
    return [...this.#scanners.values()].map((s) => ({ network: s.env.network.slug, env: s.env.slug, lag: s.lag }));
  }

  /**
   * Brings the running scanners in line with what is watched; calls never overlap. Never
   * rejects: a failure is reported to the supervisor, and the periodic run retries it.
   */
  async reconcile(): Promise<void> {
    await this.#reconcileQueued(false);
  }

  /** `periodic`: the supervisor's own run, which rejects on failure (counted and backed off there). */
  #reconcileQueued(periodic: boolean): Promise<void> {
    if (this.#stopped) return Promise.resolve();
    this.#again = true;
    let failure: unknown;
    this.#reconciling = this.#reconciling.then(async () => {
      while (this.#again && !this.#stopped) {
        this.#again = false;
        try {
          await this.#reconcileOnce();
          failure = undefined;
        } catch (err) {
          failure = err;
        }
      }
    });
    return this.#reconciling.then(() => {
      if (failure === undefined) return;
      if (periodic) throw failure;
      this.#supervisor.failed(RECONCILE_TASK, failure);
    });
  }

  async #reconcileOnce(): Promise<void> {
    const { store } = this.#o;
    const wanted = new Set(this.registry.watchedEnvIds());
    for (const sub of await blockSubscribers(store.db)) for (const id of blockNetworkEnvIds(store.catalog, sub.filters)) wanted.add(id);
    for (const [envId, scanner] of this.#scanners) {
      if (wanted.has(envId)) continue;
      this.#scanners.delete(envId);
      const lease = scanner.lease;
      await scanner.stop();
      // Nothing is watched there any more: a later watch starts at the head, not at a stale
      // cursor, and its parent-hash check must not compare against hashes kept from before
      // (after a chain reset they would all differ and trigger a false rewind). Only the
      // instance that scanned it clears it: another one's view of the watches may be behind.
      if (!lease) continue;
      await store.db.transaction().execute(async (trx) => {
        await fence(trx, envId, lease);
        // The cursor first: that waits for an add that read it for its start height
        // (watches.ts), so the check below sees it.
        await trx.deleteFrom('scanner_cursors').where('network_environment_id', '=', envId).execute();
        // This instance's view lags another's add by a notification: the store decides, or
        // the new watch's scanner would start at a later head and skip its first blocks.
        const added = await trx.selectFrom('watched_addresses').select('id').where('network_environment_id', '=', envId).limit(1).executeTakeFirst();
        if (added) throw new StillWatchedError();
        await trx.deleteFrom('scanner_blocks').where('network_environment_id', '=', envId).execute();
        await trx.deleteFrom('scanner_leases').where('network_environment_id', '=', envId).execute();
      }).catch((err: unknown) => { if (!(err instanceof LeaseLostError) && !(err instanceof StillWatchedError)) throw err; });
    }
    const starting: Promise<void>[] = [];
    for (const envId of wanted) {
      if (this.#scanners.has(envId) || this.#stopped) continue;
      const env = store.catalog.environment(envId);
      if (!env || env.upstreams.length === 0) continue;
      const chain = chainFor(env, this.#o.config);
      const scanner = new Scanner({
        store, registry: this.registry, env, chain, log: this.#o.log, pollMs: this.#o.pollMs ?? 500,
        onRecorded: (r) => this.#told(r), owner: this.instanceId, leaseMs: this.#o.leaseMs, supervisor: this.#supervisor, tracing: this.#o.tracing,
      });
      this.#scanners.set(envId, scanner);
      starting.push(scanner.start());
    }
    // A new watch takes effect from the block after the head at the time of the add; a slow
    // upstream may not hold up the API for long, though.
    if (starting.length) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([Promise.all(starting), new Promise((r) => { timer = setTimeout(r, 3000); })]);
      clearTimeout(timer);
    }
  }

  #told(r: { events: number; deliveries: number }): void {
    if (r.deliveries > 0) this.#o.webhooks.kick();
    if (r.events > 0) for (const fn of this.#recorded) fn();
  }

  #onWatchChange(payload: string): void {
    let change: WatchChange;
    try {
      change = JSON.parse(payload) as WatchChange;
    } catch {
      void this.reloadWatches();
      return;
    }
    this.#apply(change);
    // A reload's read may predate this change: it is applied again on top of what it read.
    this.#heardDuringReload?.push(change);
  }

  #apply({ op, row }: WatchChange): void {
    if (op === '+') this.registry.add(row);
    else this.registry.remove(row);
  }

  /**
   * Reads every watch again (after a lost change feed), retried under the supervisor until it
   * succeeds: a failed reload left as it was would miss the watches added meanwhile for good.
   */
  reloadWatches(): Promise<void> {
    this.#reloadsWanted++;
    return this.#startReload();
  }

  #startReload(): Promise<void> {
    this.#reloading ??= this.#supervisor.loop(RELOAD_TASK, async () => {
      // A feed lost again while a read is under way needs a read that starts after it.
      while (this.#reloadsDone < this.#reloadsWanted && !this.#stopped) {
        const wanted = this.#reloadsWanted;
        const heard: WatchChange[] = [];
        this.#heardDuringReload = heard;
        try {
          const rows = await allWatches(this.#o.store);
          this.registry.reset(rows);
          for (const change of heard) this.#apply(change);
        } finally {
          if (this.#heardDuringReload === heard) this.#heardDuringReload = undefined;
        }
        this.#reloadsDone = wanted;
      }
    }, { backoff: RELOAD_BACKOFF }).finally(() => {
      this.#reloading = undefined;
      if (this.#reloadsDone < this.#reloadsWanted && !this.#stopped && !this.#supervisor.stopped) void this.#startReload();
    });
    return this.#reloading;
  }

  /** The environment's scanner lease while this instance's scanner holds it: what writes below its cursor need (record.ts recordReferenced). */
  leaseOf(envId: number): ScannerLease | undefined {
    return this.#scanners.get(envId)?.lease;
  }

  scannedEnvIds(): number[] {
    return [...this.#scanners.keys()];
  }

  /** Scanners finish the block in hand (the webhook service stops after, on its own). */
  stop(): Promise<void> {
    this.#stopping ??= (async () => {
      this.#stopped = true;
      this.#unsubscribe();
      await this.#supervisor.cancel(RECONCILE_TASK);
      await this.#reconciling;
      await Promise.all([...this.#scanners.values()].map((s) => s.stop()));
      this.#scanners.clear();
    })();
    return this.#stopping;
  }
}

export async function startAddressWatch(o: AddressWatchOptions): Promise<AddressWatch> {
  const w = new AddressWatch(o);
  await w.start();
  return w;
}
