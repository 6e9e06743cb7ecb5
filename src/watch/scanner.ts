import type { Environment, Store } from '../store/index.js';
import type { ChainAdapter, WatchLookup } from '../chains/family.js';
import { getCursor, initCursor, lastEventBlockBelow, recordBlock, rewindTo, storedBlockHash } from './record.js';
import type { WatchRegistry } from './registry.js';
import { acquireLease, LeaseLostError, releaseLease, SCANNER_LEASE_MS, type ScannerLease } from './lease.js';
import { Supervisor, type Backoff } from '../runtime/supervisor.js';

/** Matches nothing: a block fetched only for its hash. */
const NO_WATCHES: WatchLookup = { lookup: () => undefined, size: () => 0 };

/** Retries of a failing scanner: soon at first, at most every 5 s (it is back within 5 s of its dependency). */
export const SCANNER_BACKOFF: Backoff = { minMs: 250, maxMs: 5000 };

export interface ScannerOptions {
  store: Store;
  registry: WatchRegistry;
  env: Environment;
  chain: ChainAdapter;
  log: (line: string) => void;
  pollMs: number;
  /** Told after a block's events are committed, so the delivery worker need not wait for its poll. */
  onRecorded?: (deliveries: number) => void;
  /** This instance, as the scanner lease names it: one instance scans an environment at a time. */
  owner: string;
  leaseMs?: number;
  /** Runs each step: a failure is logged at error as `scanner:{network}-{env}`, counted and retried with back-off. */
  supervisor?: Supervisor;
}

/**
 * Follows one environment's chain, block by block, `confirmations` behind the head. Each
 * block is checked against the parent hash of the block before it; on a mismatch the
 * scanner rewinds one block at a time until it is back on the chain.
 */
export class Scanner {
  readonly env: Environment;
  readonly #o: ScannerOptions;
  #running = false;
  #loop: Promise<void> | undefined;
  #timer: NodeJS.Timeout | undefined;
  #wake: (() => void) | undefined;
  #stopping: Promise<void> | undefined;
  readonly #supervisor: Supervisor;
  /** Blocks between the chain's head and the next block to record, as of the last step (metrics). */
  lag: number | undefined;
  #lease: ScannerLease | undefined;
  #leaseRenewAt = 0;
  #standby = false;
  /** The last step rewound: a missing parent hash then means the rewind reached below the kept blocks. */
  #rewinding = false;

  constructor(o: ScannerOptions) {
    this.#o = o;
    this.env = o.env;
    this.#supervisor = o.supervisor ?? new Supervisor({ log: o.log });
  }

  /** The scanner's name under the supervisor. */
  get task(): string {
    return `scanner:${this.#name()}`;
  }

  /** Resolves once the scanner knows where it starts (or its upstream failed to say). */
  start(): Promise<void> {
    if (this.#running) return Promise.resolve();
    this.#running = true;
    let ready!: () => void;
    const started = new Promise<void>((resolve) => { ready = resolve; });
    this.#loop = this.#run(ready);
    return started;
  }

  /** Stops after the block in hand is recorded (a block is all or nothing). */
  stop(): Promise<void> {
    this.#stopping ??= (async () => {
      this.#running = false;
      if (this.#timer) clearTimeout(this.#timer);
      this.#wake?.();
      await this.#loop;
      // Hand the environment over now rather than after the lease runs out.
      if (this.#lease) await releaseLease(this.#o.store.db, this.env.id, this.#lease).catch(() => {});
      this.#lease = undefined;
      await this.#o.chain.close();
    })();
    return this.#stopping;
  }

  async #run(ready: () => void): Promise<void> {
    try {
      await this.#holdLease();
      // Even while another instance holds the lease: the watch that started this scanner was
      // added here, and its first block is the head as of now, not as of whenever the holder
      // hears of the watch (a payment sent right after the add would fall in between).
      await this.#startingCursor();
    } catch {
      // step() tries again and logs.
    }
    ready();
    while (this.#running) {
      let caughtUp = true;
      const ok = await this.#supervisor.run(this.task, async () => { caughtUp = await this.step(); });
      if (this.#running && (caughtUp || !ok)) await this.#sleep(this.#supervisor.delay(this.task, this.#o.pollMs, SCANNER_BACKOFF));
    }
  }

  /** Holds (taking or renewing) the environment's lease; undefined while another instance scans it. */
  async #holdLease(): Promise<ScannerLease | undefined> {
    const ttl = this.#o.leaseMs ?? SCANNER_LEASE_MS;
    if (this.#lease && Date.now() < this.#leaseRenewAt) return this.#lease;
    const lease = await acquireLease(this.#o.store.db, this.env.id, this.#o.owner, ttl);
    if (lease && (!this.#lease || lease.generation !== this.#lease.generation) && this.#standby) {
      this.#o.log(`watch: ${this.#name()}: this instance scans it now (lease generation ${lease.generation})`);
    }
    this.#standby = !lease;
    this.#lease = lease;
    this.#leaseRenewAt = Date.now() + ttl / 3;
    return lease;
  }

  /** The environment's lease while this scanner holds it (tests and status). */
  get lease(): ScannerLease | undefined {
    return this.#lease;
  }

  /** Processes at most one block; true when there was nothing to do. */
  async step(): Promise<boolean> {
    try {
      return await this.#step();
    } catch (err) {
      if (!(err instanceof LeaseLostError)) throw err;
      // Stalled past the lease and another instance took over: its writes stand, ours rolled back.
      this.#o.log(`watch: ${this.#name()}: ${err.message}; standing by`);
      this.#lease = undefined;
      this.#standby = true;
      return true;
    }
  }

  async #step(): Promise<boolean> {
    const { store, env, chain, registry } = this.#o;
    const lease = await this.#holdLease();
    if (!lease) return true;
    const head = await chain.head();
    const safe = head - Math.max(1, env.confirmations) + 1;
    const next = await this.#startingCursor(head);
    this.lag = Math.max(0, head - next + 1);
    if (next > safe || !this.#running) return true;

    const block = await chain.block(next, registry, env.id);
    if (!block) return true;
    if (next > 0) {
      const parent = await storedBlockHash(store, env.id, next - 1);
      if (parent !== undefined && parent !== block.parentHash) {
        const r = await rewindTo(store, env.id, next - 1, lease, { from: next, hash: parent });
        this.#rewinding = true;
        this.#o.log(`watch: ${this.#name()}: reorg at block ${next - 1}; rewound (${r.removedEvents} events removed, ${r.cancelled} deliveries cancelled)`);
        return false;
      }
      if (parent === undefined && this.#rewinding && await this.#rewindBelowWindow(next, lease)) return false;
    }
    this.#rewinding = false;
    const r = await recordBlock(store, registry, env, { height: next, hash: block.hash, txHashes: block.txHashes }, block.hits, lease);
    // Watches added elsewhere that this instance had not heard of are known now: match again.
    if (r.rematch) return false;
    // Lost the compare-and-set: another scanner on this store recorded the block. Carry on
    // from wherever the cursor is now; saying so shows two processes share the data dir.
    if (!r.recorded) this.#o.log(`watch: ${this.#name()}: block ${next} was recorded by another scanner`);
    if (r.deliveries > 0) this.#o.onRecorded?.(r.deliveries);
    return next >= safe;
  }

  /**
   * A reorg deeper than the kept block hashes: the rewind reached their bottom still on the
   * old chain's side. The events below are the remaining evidence: the highest one whose
   * block is no longer the chain's takes the cursor back to it (its events removed, the
   * blocks between scanned again, where a re-mined payment is found). One block fetch per
   * step, only while such a rewind lasts.
   */
  async #rewindBelowWindow(next: number, lease: ScannerLease): Promise<boolean> {
    const { store, env, chain } = this.#o;
    const last = await lastEventBlockBelow(store, env.id, next);
    if (!last) return false;
    const onChain = await chain.block(last.height, NO_WATCHES, env.id);
    if (!onChain || onChain.hash === last.hash) return false;
    const r = await rewindTo(store, env.id, last.height, lease, { from: next, hash: last.hash });
    this.#o.log(`watch: ${this.#name()}: reorg below the kept blocks reaches block ${last.height}; rewound (${r.removedEvents} events removed, ${r.cancelled} deliveries cancelled)`);
    return true;
  }

  /**
   * The persisted cursor; a new scanner starts at the chain's first unconfirmed block as of
   * now: watching is not a backfill, but a payment sent right after the watch was added is
   * still ahead of the cursor.
   */
  async #startingCursor(knownHead?: number): Promise<number> {
    const { store, env } = this.#o;
    const stored = await getCursor(store, env.id);
    if (stored !== undefined) return stored;
    const head = knownHead ?? await this.#o.chain.head();
    return initCursor(store.db, env.id, Math.max(0, head - Math.max(1, env.confirmations) + 2));
  }

  #name(): string {
    return `${this.env.network.slug}-${this.env.slug}`;
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      this.#wake = resolve;
      this.#timer = setTimeout(resolve, ms);
    });
  }
}
