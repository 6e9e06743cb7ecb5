import type { Environment, Store } from '../store/index.js';
import { SKIPPED, type ChainAdapter, type FetchedBlock, type WatchLookup } from '../chains/family.js';
import { getCursor, initCursor, lastEventBlockBelow, lastKeptBlock, recordBlock, rewindTo, skipHeights } from './record.js';
import type { WatchRegistry } from './registry.js';
import { acquireLease, LeaseLostError, releaseLease, SCANNER_LEASE_MS, type ScannerLease } from './lease.js';
import { Supervisor, type Backoff } from '../runtime/supervisor.js';
import type { Span, Tracing } from '../telemetry/index.js';

/** Matches nothing: a block fetched only for its hash. */
const NO_WATCHES: WatchLookup = { lookup: () => undefined, size: () => 0 };

/**
 * On chains that tell which heights have a block (`produced`): how many heights one step looks
 * over, and how many of their blocks it fetches at once. A slot is 400 ms and a full block
 * several MB: fetched one after another, a block's round trip and its store writes would not
 * keep up with 2.5 slots a second.
 */
export const RANGE_HEIGHTS = 64;
export const RANGE_FETCHES = 8;

/** Retries of a failing scanner: soon at first, at most every 5 s (it is back within 5 s of its dependency). */
export const SCANNER_BACKOFF: Backoff = { minMs: 250, maxMs: 5000 };

export interface ScannerOptions {
  store: Store;
  registry: WatchRegistry;
  env: Environment;
  chain: ChainAdapter;
  log: (line: string) => void;
  pollMs: number;
  /**
   * Told after a block's events or deliveries are committed, or a reorg took events off, so the
   * delivery worker and the payment engine need not wait for their polls.
   */
  onRecorded?: (r: { events: number; deliveries: number }) => void;
  /** This instance, as the scanner lease names it: one instance scans an environment at a time. */
  owner: string;
  leaseMs?: number;
  /** Runs each step: a failure is logged at error as `scanner:{network}-{env}`, counted and retried with back-off. */
  supervisor?: Supervisor;
  /** Each block scanned a span (tracing on only). */
  tracing?: Tracing | undefined;
}

/**
 * Follows one environment's chain, block by block, `confirmations` behind the head. Each
 * block is checked against the parent hash of the block before it (the last height that had
 * one, on chains with skipped slots); on a mismatch the scanner rewinds one block at a time
 * until it is back on the chain. Heights the chain skipped are passed over; where the family
 * tells them for a range at once, a step takes a range and fetches its blocks together.
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
    const { env, chain } = this.#o;
    const lease = await this.#holdLease();
    if (!lease) return true;
    const head = await chain.head();
    const safe = head - Math.max(1, env.confirmations) + 1;
    const next = await this.#startingCursor(head);
    this.lag = Math.max(0, head - next + 1);
    if (!this.#running) return true;
    if (next > safe) return !await this.#lastBlockReplaced(next, lease);
    const range = chain.produced !== undefined && safe > next;
    const tracing = this.#o.tracing;
    if (!tracing) return range ? this.#range(next, safe, lease) : this.#block(next, safe, lease);
    const span = tracing.start(range ? 'scan range' : 'scan block', 'internal', undefined, {
      'rpcctl.network': env.network.slug, 'rpcctl.environment': env.slug, 'rpcctl.block.height': next, 'rpcctl.block.head': head,
    });
    try {
      return await (range ? this.#range(next, safe, lease, span) : this.#block(next, safe, lease, span));
    } catch (err) {
      tracing.fail(span, err instanceof Error ? err.message : String(err));
      throw err;
    } finally {
      span.end();
    }
  }

  /** Block `next`: checked against its parent (a reorg rewinds instead), then its hits recorded. True when caught up. */
  async #block(next: number, safe: number, lease: ScannerLease, span?: Span): Promise<boolean> {
    const { registry, env, chain } = this.#o;
    const block = await chain.block(next, registry, env.id);
    if (!block) return true;
    if (block === SKIPPED) {
      if (!await skipHeights(this.#o.store, env.id, next, next + 1, lease)) this.#o.log(`watch: ${this.#name()}: slot ${next} was passed by another scanner`);
      return next >= safe;
    }
    return await this.#record(next, block, lease, span) && next >= safe;
  }

  /**
   * Heights `next..` up to `safe`, as many as one step takes: the ones without a block passed
   * over, the others fetched together and recorded in order. True when caught up.
   */
  async #range(next: number, safe: number, lease: ScannerLease, span?: Span): Promise<boolean> {
    const { store, registry, env, chain } = this.#o;
    const to = Math.min(safe, next + RANGE_HEIGHTS - 1);
    const heights = (await chain.produced!(next, to)).filter((h) => h >= next && h <= to).slice(0, RANGE_FETCHES);
    // Past the last block fetched, heights are decided by the next step.
    const until = heights.length === RANGE_FETCHES ? heights[heights.length - 1]! : to;
    const blocks = await Promise.all(heights.map((h) => chain.block(h, registry, env.id)));
    let cursor = next;
    for (const [i, height] of heights.entries()) {
      const block = blocks[i];
      // Listed as produced but not served yet (a node a moment behind its own list): next tick.
      if (block === undefined) return true;
      if (block === SKIPPED) continue;
      if (cursor < height && !await skipHeights(store, env.id, cursor, height, lease)) return false;
      if (!this.#running || !await this.#record(height, block, lease, span)) return false;
      cursor = height + 1;
    }
    if (cursor <= until && !await skipHeights(store, env.id, cursor, until + 1, lease)) return false;
    span?.setAttributes({ 'rpcctl.range.until': until, 'rpcctl.range.blocks': heights.length });
    this.lag = Math.max(0, safe - until);
    return until >= safe;
  }

  /**
   * A fetched block, checked against the last kept block below it: its parent (same height and
   * hash), or on a chain with skipped slots a block the new one does not descend from (a dropped
   * slot), or a parent the scanner passed as skipped. Any of those rewinds instead. False when
   * the block was not recorded (rewound, or to be matched again).
   */
  async #record(next: number, block: FetchedBlock, lease: ScannerLease, span?: Span): Promise<boolean> {
    const { store, env, registry, chain } = this.#o;
    if (next > 0) {
      const parentHeight = block.parentHeight ?? next - 1;
      const last = await lastKeptBlock(store, env.id, next);
      const orphan = last && (last.height > parentHeight || (last.height === parentHeight && last.hash !== block.parentHash))
        ? last
        // Passed as skipped, produced after all: its transactions were never matched.
        : last && block.parentHeight !== undefined && last.height < parentHeight ? { height: parentHeight, hash: undefined } : undefined;
      if (orphan && orphan.hash === undefined && await chain.blockHash(orphan.height) === SKIPPED) {
        // The node names a parent it says it has no block at: it lost the block (a gap in its
        // long-term storage, -32009, or a ledger jump to a snapshot, -32007). Scanned again it
        // would answer the same for ever, so the scanner goes on without it; a family with
        // references finds an order's payment there by reference (payments/references.ts).
        this.#o.log(`watch: ${this.#name()}: block ${orphan.height} is named as a parent but the node has no block there (lost from its storage); passed without its transactions`);
      } else if (orphan) {
        const r = await rewindTo(store, env.id, orphan.height, lease, { from: next, ...(orphan.hash !== undefined ? { hash: orphan.hash } : {}) });
        this.#rewinding = true;
        span?.setAttribute('rpcctl.reorg', true);
        this.#o.log(`watch: ${this.#name()}: reorg at block ${orphan.height}; rewound (${r.removedEvents} events removed, ${r.cancelled} deliveries cancelled)`);
        if (r.removedEvents > 0) this.#o.onRecorded?.({ events: r.removedEvents, deliveries: 0 });
        return false;
      }
      const parentKept = last !== undefined && last.height === parentHeight;
      if (!parentKept && this.#rewinding && await this.#rewindBelowWindow(next, lease)) return false;
    }
    this.#rewinding = false;
    const r = await recordBlock(store, registry, env, { height: next, hash: block.hash, txHashes: block.txHashes }, block.hits, lease);
    span?.setAttributes({ 'rpcctl.block.hits': block.hits.length, 'rpcctl.block.recorded': r.recorded, 'rpcctl.deliveries': r.deliveries });
    // Watches added elsewhere that this instance had not heard of are known now: match again.
    if (r.rematch) return false;
    // Lost the compare-and-set: another scanner on this store recorded the block. Carry on
    // from wherever the cursor is now; saying so shows two processes share the data dir.
    if (!r.recorded) this.#o.log(`watch: ${this.#name()}: block ${next} was recorded by another scanner`);
    if (r.deliveries > 0 || r.events > 0) this.#o.onRecorded?.(r);
    return r.recorded;
  }

  /**
   * Caught up: is the last recorded block still the chain's? A block replaced at the same height
   * (a double-spend mined in its place) would otherwise be seen only when a block above it
   * arrives. One hash per idle tick; a mismatch rewinds as a parent-hash mismatch does.
   */
  async #lastBlockReplaced(next: number, lease: ScannerLease): Promise<boolean> {
    if (next === 0) return false;
    const { store, env, chain } = this.#o;
    const recorded = await lastKeptBlock(store, env.id, next);
    if (recorded === undefined) return false;
    const now = await chain.blockHash(recorded.height);
    if (now === undefined || now === recorded.hash) return false;
    const r = await rewindTo(store, env.id, recorded.height, lease, { from: next, hash: recorded.hash });
    this.#rewinding = true;
    this.#o.log(`watch: ${this.#name()}: block ${recorded.height} was ${now === SKIPPED ? 'dropped' : 'replaced at the same height'}; rewound (${r.removedEvents} events removed, ${r.cancelled} deliveries cancelled)`);
    if (r.removedEvents > 0) this.#o.onRecorded?.({ events: r.removedEvents, deliveries: 0 });
    return true;
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
    if (onChain === undefined || (onChain !== SKIPPED && onChain.hash === last.hash)) return false;
    const r = await rewindTo(store, env.id, last.height, lease, { from: next, hash: last.hash });
    this.#o.log(`watch: ${this.#name()}: reorg below the kept blocks reaches block ${last.height}; rewound (${r.removedEvents} events removed, ${r.cancelled} deliveries cancelled)`);
    if (r.removedEvents > 0) this.#o.onRecorded?.({ events: r.removedEvents, deliveries: 0 });
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
