import type { Config } from '../config/index.js';
import type { Store } from '../store/index.js';
import type { AmlProvider } from './aml/types.js';
import type { WatchRegistry } from '../watch/registry.js';
import type { ScannerLease } from '../watch/lease.js';
import { EnvironmentChains } from '../watch/chains.js';
import { Supervisor, type Backoff } from '../runtime/supervisor.js';
import { orderOf, type EngineDeps, type WatchSync } from './engine-core.js';
import { closeWindows, expire } from './expiry.js';
import { ingest } from './funding.js';
import { Finality, release, tellWatch } from './holds.js';
import type { OrderRow } from './orders.js';
import { sweepReferences } from './references.js';
import { reorged } from './reorgs.js';
import { screenDue } from './screening.js';
import { sightings } from './sightings.js';
import { TipWatcher } from './tip.js';
import { transition } from './transition.js';

export type { WatchSync };

export interface EngineOptions {
  store: Store;
  config: Config;
  aml: AmlProvider;
  watches: WatchSync;
  log: (line: string) => void;
  /** Told when deliveries were written, so the worker sends them now. */
  onDeliveries: () => void;
  /** The safety-net poll: recorded blocks wake the engine by a call (`kick`). */
  tickMs: number;
  /** How long a screening claim holds a job: longer than the provider's slowest answer. */
  amlLeaseMs: number;
  /** Matches unconfirmed blocks (networks with confirmations > 1) for early `seen`. */
  registry?: WatchRegistry;
  /** Runs the loops (`payments-tick`, `payments-aml`, `payments-sightings`, `payments-references`): a failure is logged at error, counted and retried with back-off. */
  supervisor?: Supervisor;
  /**
   * The environment's scanner lease while this instance holds it (AddressWatch `leaseOf`): the
   * reference lookup (references.ts sweepReferences) runs where the scanner does, every
   * `payments.reference_sweep_ms`. Without it (or a registry), no lookup.
   */
  leaseOf?: (envId: number) => ScannerLease | undefined;
}

/** The engine's loops under the supervisor. */
export const PAYMENTS_TASKS = { orders: 'payments-tick', aml: 'payments-aml', sightings: 'payments-sightings', references: 'payments-references' } as const;
/** Retries of a failing loop: at most every 5 s, so orders move again within 5 s of the store. */
const LOOP_BACKOFF: Backoff = { minMs: 250, maxMs: 5000 };

/**
 * Drives orders from Address Watch's recorded events: funding (funding.ts), reorgs (reorgs.ts),
 * expiry and the end of the late-payment window (expiry.ts), finality holds (holds.ts),
 * unconfirmed sightings (sightings.ts) and the screening queue (screening.ts). Every transition
 * is written with its outbox delivery in one transaction (transition.ts); every step is a
 * compare-and-set on the order, so two processes on one store cannot apply one change twice.
 * Separate loops: screening (which waits on a remote provider) never holds up funding and expiry.
 */
export class PaymentEngine {
  readonly #o: EngineOptions;
  readonly #d: EngineDeps;
  #running = false;
  #loops: Promise<void>[] = [];
  #timers = new Set<NodeJS.Timeout>();
  #wakers = new Set<() => void>();
  /** Kicks so far: a loop kicked while it ran goes round again instead of sleeping. */
  #kicks = 0;
  readonly #tip: TipWatcher | undefined;
  readonly #supervisor: Supervisor;
  /** Chain adapters, shared by the finality checks and the unconfirmed-block look. */
  readonly #chains: EnvironmentChains;
  readonly #finality: Finality;
  /** Where each environment's reference lookup goes on (round robin over its orders). */
  readonly #swept = new Map<number, number>();
  /** Sleeps only stop() ends: the reference lookup keeps its pace whatever kicks the engine. */
  readonly #paced = new Set<() => void>();

  /** The engine's adapters, for what else asks the nodes (the checkout page's EVM chain id). */
  get chains(): EnvironmentChains {
    return this.#chains;
  }

  constructor(o: EngineOptions) {
    this.#o = o;
    this.#d = {
      store: o.store, config: o.config, aml: o.aml, watches: o.watches, log: o.log, amlLeaseMs: o.amlLeaseMs,
      onDeliveries: () => o.onDeliveries(), kick: () => this.kick(),
    };
    this.#supervisor = o.supervisor ?? new Supervisor({ log: o.log });
    this.#chains = new EnvironmentChains(o.config);
    this.#tip = o.registry && new TipWatcher(o.store, o.registry, this.#chains);
    this.#finality = new Finality(this.#chains, o.log);
  }

  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#loops = [this.#loop(PAYMENTS_TASKS.orders, () => this.step()), this.#loop(PAYMENTS_TASKS.aml, () => this.screenDue())];
    if (this.#tip) this.#loops.push(this.#loop(PAYMENTS_TASKS.sightings, () => this.sightings()));
    if (this.#o.leaseOf && this.#o.registry) this.#loops.push(this.#paceLoop(PAYMENTS_TASKS.references, this.#o.config.payments.reference_sweep_ms, () => this.sweepReferences()));
  }

  async stop(): Promise<void> {
    this.#running = false;
    for (const t of this.#timers) clearTimeout(t);
    for (const w of [...this.#wakers, ...this.#paced]) w();
    await Promise.all(this.#loops);
    await this.#chains.close();
  }

  /** Look now: a block was recorded (here or, through the store's notifications, elsewhere) or an order changed. */
  kick(): void {
    this.#kicks++;
    for (const w of this.#wakers) w();
  }

  async #loop(name: string, fn: () => Promise<number>): Promise<void> {
    while (this.#running) {
      let busy = 0;
      const kicks = this.#kicks;
      const ok = await this.#supervisor.run(name, async () => { busy = await fn(); });
      if (!this.#running) break;
      if (busy === 0 && (kicks === this.#kicks || !ok)) await this.#sleep(ok ? this.#o.tickMs : this.#supervisor.delay(name, this.#o.tickMs, LOOP_BACKOFF));
    }
  }

  /** Every `ms`, kicks or not: each pass costs RPC calls, not store reads. */
  async #paceLoop(name: string, ms: number, fn: () => Promise<number>): Promise<void> {
    while (this.#running) {
      const ok = await this.#supervisor.run(name, async () => {
        if (await fn() > 0) this.kick();
      });
      if (!this.#running) break;
      await this.#sleep(ok ? ms : this.#supervisor.delay(name, ms, LOOP_BACKOFF), this.#paced);
    }
  }

  #sleep(ms: number, wakers = this.#wakers): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#timers.delete(timer);
        wakers.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.#timers.add(timer);
      wakers.add(done);
    });
  }

  /** One pass of funding, reorgs, expiry and window ends; the number of changes made. */
  async step(nowMs = Date.now()): Promise<number> {
    let n = 0;
    // Take-offs first: a transaction a reorg removed and the chain mined again is then `returning`.
    n += await reorged(this.#d, nowMs);
    n += await ingest(this.#d, nowMs);
    n += await expire(this.#d, nowMs);
    n += await closeWindows(this.#d, nowMs);
    n += await release(this.#d, this.#finality, nowMs);
    return n;
  }

  /**
   * Transfers to open orders in blocks still short of the network's confirmations: `seen`
   * at once (once per transaction), the rest when the scanner records the confirmed block.
   */
  async sightings(nowMs = Date.now()): Promise<number> {
    return this.#tip ? sightings(this.#d, this.#tip, nowMs) : 0;
  }

  /**
   * Open orders of families with references looked up by reference, for a payment the scanner
   * passed without seeing (references.ts); the number of events recorded.
   */
  async sweepReferences(): Promise<number> {
    const { leaseOf, registry } = this.#o;
    return leaseOf && registry ? sweepReferences(this.#o.store, this.#chains, registry, leaseOf, this.#swept) : 0;
  }

  /** Screens due jobs: every funding sender of the order; the worst result decides. */
  async screenDue(nowMs = Date.now()): Promise<number> {
    return screenDue(this.#d, nowMs);
  }

  /** Cancels an order on which nothing was seen: `failed`, reason `canceled`. */
  async cancel(order: OrderRow): Promise<OrderRow> {
    const { store, config } = this.#o;
    const { next, removed } = await store.db.transaction().execute(async (trx) => {
      const current = (await orderOf(trx, order.id))!;
      if (current.status !== 'pending') return { next: current, removed: undefined };
      const next = await transition(trx, { store, config }, current, { status: 'failed', txHash: null, reason: 'canceled', close: true });
      const removed = await tellWatch(trx, current.watch_id);
      return { next, removed };
    });
    if (removed) this.#o.watches.removed(removed);
    this.#o.onDeliveries();
    return next;
  }
}
