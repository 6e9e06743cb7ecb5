import { addUsage, utcDay, type Store, type UsageDelta } from '../store/index.js';
import type { Metrics } from '../metrics/index.js';

interface Counter { requests: number; credits: number }

/**
 * Usage counted in memory per (endpoint, UTC day, method) and written in one transaction per
 * flush — never a store write per request. A failed flush keeps its counts for the next one.
 */
export class UsageMeter {
  readonly #store: Store;
  readonly #log: (line: string) => void;
  /** endpoint id -> method -> counter, for `#day`. */
  #current = new Map<number, { accountId: number; methods: Map<string, Counter> }>();
  #day: string;
  #dayEndsAt: number;
  #pending: UsageDelta[] = [];
  #timer: NodeJS.Timeout | undefined;
  #flushing: Promise<void> | undefined;
  /** When counts last reached the store (or when counting began). */
  #flushedAt = Date.now();
  #failing = false;

  constructor(store: Store, log: (line: string) => void = () => {}) {
    this.#store = store;
    this.#log = log;
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
      this.#pending.push({ account_id: accountId, endpoint_id: endpointId, day: utcDay(now), method, requests, credits });
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
    this.#timer = setInterval(() => { void this.flush(); }, intervalMs);
    this.#timer.unref();
  }

  /** Writes everything counted so far. Concurrent calls share one write. */
  flush(): Promise<void> {
    if (this.#flushing) return this.#flushing.then(() => this.flush());
    this.#drainCurrent();
    if (this.#pending.length === 0) {
      this.#flushedAt = Date.now();
      return Promise.resolve();
    }
    const batch = this.#pending;
    this.#pending = [];
    this.#flushing = addUsage(this.#store, batch)
      .then(() => {
        this.#flushedAt = Date.now();
        if (this.#failing) this.#log('gateway: usage flush works again; buffered counts written');
        this.#failing = false;
      }, (err: unknown) => {
        // Keep the counts: the next flush writes them. One line per outage, not one a second.
        this.#pending = batch.concat(this.#pending);
        if (!this.#failing) this.#log(`gateway: usage flush failed, counts kept in memory and retried: ${(err as Error).message}`);
        this.#failing = true;
      })
      .finally(() => { this.#flushing = undefined; });
    return this.#flushing;
  }

  /** Publishes how far the store's usage lags behind what was counted. */
  observe(metrics: Metrics): void {
    metrics.gauge('usage_flush_lag_seconds', 'Seconds since counted usage last reached the store (0 when nothing waits)', {
      collect: (g) => g.set(this.#current.size === 0 && this.#pending.length === 0 ? 0 : (Date.now() - this.#flushedAt) / 1000),
    });
    metrics.gauge('usage_pending_rows', 'Usage rows counted in memory and not yet written', {
      collect: (g) => {
        let n = this.#pending.length;
        for (const e of this.#current.values()) n += e.methods.size;
        g.set(n);
      },
    });
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.flush();
    if (this.#pending.length > 0) await this.flush();
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
        this.#pending.push({ account_id: accountId, endpoint_id: endpointId, day: this.#day, method, requests: c.requests, credits: c.credits });
      }
    }
    this.#current = new Map();
  }
}

function nextUtcMidnight(now: number): number {
  return (Math.floor(now / 86_400_000) + 1) * 86_400_000;
}
