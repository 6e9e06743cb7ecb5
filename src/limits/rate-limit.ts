/**
 * Fixed-window counters in memory: one window per key, reset when the window's number
 * changes. Windows are aligned to the epoch so every instance agrees on boundaries.
 */
export class FixedWindowLimiter {
  readonly #windowMs: number;
  readonly #counts = new Map<string, { window: number; count: number }>();
  #lastSweep = 0;

  constructor(windowMs: number) {
    this.#windowMs = windowMs;
  }

  /** Counts `cost` against `key`; returns 0 when allowed, or the seconds until it resets. */
  take(key: string, limit: number, now = Date.now(), cost = 1): number {
    const entry = this.#entry(key, now);
    if (entry.count + cost > limit) {
      return Math.max(1, Math.ceil(((entry.window + 1) * this.#windowMs - now) / 1000));
    }
    entry.count += cost;
    return 0;
  }

  /** Counts as much of `cost` as still fits under `limit`; returns how much that was. */
  admit(key: string, limit: number, now = Date.now(), cost = 1): number {
    const entry = this.#entry(key, now);
    const taken = Math.min(cost, Math.max(0, limit - entry.count));
    entry.count += taken;
    return taken;
  }

  #entry(key: string, now: number): { window: number; count: number } {
    const window = Math.floor(now / this.#windowMs);
    if (window !== this.#lastSweep) this.#sweep(window);
    let entry = this.#counts.get(key);
    if (!entry || entry.window !== window) {
      entry = { window, count: 0 };
      this.#counts.set(key, entry);
    }
    return entry;
  }

  #sweep(window: number): void {
    this.#lastSweep = window;
    if (this.#counts.size < 10_000) return;
    for (const [k, v] of this.#counts) if (v.window < window) this.#counts.delete(k);
  }
}
