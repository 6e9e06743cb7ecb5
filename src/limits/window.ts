import { FixedWindowLimiter } from './rate-limit.js';
import { MemoryReplayCache, type ReplayCache } from './replay.js';

/**
 * A fixed-window counter: `take` counts `cost` against `key` in the current window (windows
 * aligned to the epoch, so every instance agrees on their edges) and answers 0 when allowed,
 * else the seconds until the window resets. Synchronous when it can answer from memory.
 */
export interface WindowLimiter {
  take(key: string, limit: number, cost?: number, now?: number): number | Promise<number>;
  /** Counts as much of `cost` as still fits (a batch admitted in part); answers how much that was. */
  admit(key: string, limit: number, cost: number, now?: number): number | Promise<number>;
}

/** One instance's own windows; the default, and the fallback when Redis is away. */
export class MemoryWindowLimiter implements WindowLimiter {
  readonly #inner: FixedWindowLimiter;
  constructor(windowMs: number) {
    this.#inner = new FixedWindowLimiter(windowMs);
  }
  take(key: string, limit: number, cost = 1, now = Date.now()): number {
    return this.#inner.take(key, limit, now, cost);
  }
  admit(key: string, limit: number, cost: number, now = Date.now()): number {
    return this.#inner.admit(key, limit, now, cost);
  }
}

/** What the service hands the API and the gateway: the limiters and where they count. */
export interface Limits {
  /** `memory` (one instance) or `redis` (shared by every instance on that Redis). */
  readonly kind: 'memory' | 'redis';
  window(name: string, windowMs: number, fallback?: WindowLimiter): WindowLimiter;
  /** Where the signatures of mutating requests are remembered, so a replay is refused (api/replay.ts). */
  replayCache(): ReplayCache;
  close(): Promise<void>;
}

export function memoryLimits(): Limits {
  return { kind: 'memory', window: (_name, windowMs) => new MemoryWindowLimiter(windowMs), replayCache: () => new MemoryReplayCache(), close: async () => {} };
}
