import { addUsage, utcDay, type Store, type UsageDelta } from '../store/index.js';
import type { Metrics } from '../metrics/index.js';
import { Supervisor } from '../runtime/supervisor.js';

interface Counter { requests: number; credits: number }

/** The usage flush's name under the supervisor. */
export const USAGE_FLUSH_TASK = 'usage-flush';

/**
 * Rows (endpoint, day, method) kept in memory while the store is away. Counts for rows already
 * kept keep adding up past it; only a row not seen before is dropped, and counted as dropped.
 * About 200 bytes a row: the bound is ~20 MB.
 */
export const MAX_PENDING_USAGE_ROWS = 100_000;

export interface UsageMeterOptions {
  supervisor?: Supervisor;
  maxPendingRows?: number;
}

/**
 * Usage counted in memory per (endpoint, UTC day, method) and written in one transaction per
 * flush — never a store write per request. A failed flush keeps its counts for the next one,
 * merged per row, so a long outage grows memory by distinct rows, not by flushes.
 */
export class UsageMeter {
  readonly #store: Store;
  readonly #log: (line: string) => void;
  readonly #supervisor: Supervisor;
  readonly #maxPending: number;
  /** Requests whose rows did not fit under the bound (and their credits): lost, and said so. */
  dropped = { rows: 0, requests: 0, credits: 0 };
  /** endpoint id -> method -> counter, for `#day`. */
  #current = new Map<number, { accountId: number; methods: Map<string, Counter> }>();
  #day: string;
  #dayEndsAt: number;
  /** Rows waiting for the store, by `endpoint|day|method`. */
  #pending = new Map<string, UsageDelta>();
  #flushing: Promise<unknown> | undefined;
  /** When counts last reached the store (or when counting began). */
  #flushedAt = Date.now();
  #onDropped: (requests: number) => void = () => {};
  #failing = false;

  constructor(store: Store, log: (line: string) => void = () => {}, opts: UsageMeterOptions = {}) {
    this.#store = store;
    this.#log = log;
    this.#supervisor = opts.supervisor ?? new Supervisor({ log });
    this.#maxPending = opts.maxPendingRows ?? MAX_PENDING_USAGE_ROWS;
    this.#day = utcDay(Date.now());
    this.#dayEndsAt = nextUtcMidnight(Date.now());
  }

  record(endpointId: number, accountId: number, method: string, credits: number, requests = 1, now = Date.now()): void {
    // One bad row would fail every later flush of the whole batch: refuse it here, loudly.
    if (!Number.isSafeInteger(credits) || !Number.isSafeInteger(requests)) {
      this.#log(`gateway: usage of ${method} on endpoint ${endpointId} has a non-integer count; counted as 0 credits`);
      credits = Number.isSafeInteger(credits) ? credits : 0;
      requests = Number.isSafeInteger(requests) ? requests : 1;
    }
    if (now >= this.#dayEndsAt) this.#rollDay(now);
    else if (now < this.#dayEndsAt - 86_400_000) {
      // Counted by a gateway worker before midnight, handed over after it: its own day.
      this.#keep({ account_id: accountId, endpoint_id: endpointId, day: utcDay(now), method, requests, credits });
      return;
    }
    let perEndpoint = this.#current.get(endpointId);
    if (!perEndpoint) {
      perEndpoint = { accountId, methods: new Map() };
      this.#current.set(endpointId, perEndpoint);
    }
    const c = perEndpoint.methods.get(method);
    if (c) {
      c.requests += requests;
      c.credits += credits;
    } else {
      perEndpoint.methods.set(method, { requests, credits });
    }
  }

  start(intervalMs = 1000): void {
    // A failed flush is retried sooner than the interval while the store is away (back-off).
    this.#supervisor.every(USAGE_FLUSH_TASK, intervalMs, () => this.#flushOrThrow(), { immediate: false });
  }

  /** Writes everything counted so far; a failure keeps the counts (never rejects). Concurrent calls share one write. */
  async flush(): Promise<void> {
    await this.#flush();
  }

  async #flushOrThrow(): Promise<void> {
    const err = await this.#flush();
    if (err) throw err;
  }

  /** Resolves with the error of a failed write, undefined when everything counted was written. */
  #flush(): Promise<unknown> {
    if (this.#flushing) return this.#flushing.then(() => this.#flush());
    this.#drainCurrent();
    if (this.#pending.size === 0) {
      this.#flushedAt = Date.now();
      return Promise.resolve(undefined);
    }
    const batch = this.#pending;
    this.#pending = new Map();
    const flushing = addUsage(this.#store, [...batch.values()])
      .then(() => {
        this.#flushedAt = Date.now();
        if (this.#failing) this.#log(`gateway: usage flush works again; buffered counts written${this.#droppedNote()}`);
        this.#failing = false;
        return undefined;
      }, (err: unknown) => {
        // Keep the counts: the next flush writes them. One line per outage, not one a second
        // (the supervisor logs each failed run at error).
        const newer = this.#pending;
        this.#pending = batch;
        for (const d of newer.values()) this.#keep(d);
        if (!this.#failing) this.#log(`gateway: usage flush failed, counts kept in memory (at most ${this.#maxPending} rows) and retried: ${(err as Error).message}`);
        this.#failing = true;
        return err;
      })
      .finally(() => { this.#flushing = undefined; });
    this.#flushing = flushing;
    return flushing;
  }

  /** Adds a row to the ones waiting for the store, within the bound. */
  #keep(d: UsageDelta): void {
    const key = `${d.endpoint_id}|${d.day}|${d.method}`;
    const kept = this.#pending.get(key);
    if (kept) {
      kept.requests += d.requests;
      kept.credits += d.credits;
      return;
    }
    if (this.#pending.size >= this.#maxPending) {
      if (this.dropped.rows === 0) this.#log(`gateway: usage rows past the bound of ${this.#maxPending} kept while the store is away are dropped (rpcctl_usage_dropped_requests_total)`);
      this.dropped.rows++;
      this.dropped.requests += d.requests;
      this.dropped.credits += d.credits;
      this.#onDropped(d.requests);
      return;
    }
    this.#pending.set(key, { ...d });
  }

  #droppedNote(): string {
    return this.dropped.rows === 0 ? '' : `; ${this.dropped.requests} requests (${this.dropped.credits} credits) were dropped past the bound so far`;
  }

  /** Publishes how far the store's usage lags behind what was counted. */
  observe(metrics: Metrics): void {
    metrics.gauge('usage_flush_lag_seconds', 'Seconds since counted usage last reached the store (0 when nothing waits)', {
      collect: (g) => g.set(this.#current.size === 0 && this.#pending.size === 0 ? 0 : (Date.now() - this.#flushedAt) / 1000),
    });
    metrics.gauge('usage_pending_rows', `Usage rows counted in memory and not yet written (kept while the store is away, at most ${this.#maxPending})`, {
      collect: (g) => {
        let n = this.#pending.size;
        for (const e of this.#current.values()) n += e.methods.size;
        g.set(n);
      },
    });
    const dropped = metrics.counter('usage_dropped_requests_total', 'Requests whose usage was dropped: counted while the store was away, past the bound of rows kept');
    if (this.dropped.requests > 0) dropped.inc(this.dropped.requests);
    this.#onDropped = (requests) => dropped.inc(requests);
  }

  async stop(): Promise<void> {
    await this.#supervisor.cancel(USAGE_FLUSH_TASK);
    await this.flush();
    if (this.#pending.size > 0) await this.flush();
    if (this.#pending.size > 0) {
      let requests = 0;
      for (const d of this.#pending.values()) requests += d.requests;
      this.#log(`gateway: stopping with the store away: usage of ${requests} requests (${this.#pending.size} rows) could not be written and is lost`);
    }
  }

  #rollDay(now: number): void {
    this.#drainCurrent();
    this.#day = utcDay(now);
    this.#dayEndsAt = nextUtcMidnight(now);
  }

  #drainCurrent(): void {
    if (this.#current.size === 0) return;
    for (const [endpointId, { accountId, methods }] of this.#current) {
      for (const [method, c] of methods) {
        this.#keep({ account_id: accountId, endpoint_id: endpointId, day: this.#day, method, requests: c.requests, credits: c.credits });
      }
    }
    this.#current = new Map();
  }
}

function nextUtcMidnight(now: number): number {
  return (Math.floor(now / 86_400_000) + 1) * 86_400_000;
}
