import { recordKeyUse, type Store } from '../store/index.js';

/**
 * Last-use times of API keys, gathered in memory on the request path (one Map write) and
 * written to the store in one transaction every `flushMs`: a busy key costs the store one
 * update per interval, not one per request.
 */
export class KeyUseRecorder {
  readonly #store: Store;
  readonly #log: (line: string) => void;
  #pending = new Map<string, number>();
  readonly #timer: NodeJS.Timeout;
  #flushing: Promise<void> = Promise.resolve();

  constructor(store: Store, opts: { flushMs?: number; log?: (line: string) => void } = {}) {
    this.#store = store;
    this.#log = opts.log ?? (() => {});
    this.#timer = setInterval(() => void this.flush(), opts.flushMs ?? 15_000);
    this.#timer.unref();
  }

  touch(keyId: string, nowMs = Date.now()): void {
    this.#pending.set(keyId, nowMs);
  }

  /** A use not flushed yet is still the latest: readers in this process see it at once. */
  pending(keyId: string): number | undefined {
    return this.#pending.get(keyId);
  }

  flush(): Promise<void> {
    this.#flushing = this.#flushing.then(async () => {
      if (this.#pending.size === 0) return;
      const batch = this.#pending;
      this.#pending = new Map();
      try {
        await recordKeyUse(this.#store, batch);
      } catch (err) {
        // Keep them for the next round rather than lose them; newer touches win.
        for (const [id, ms] of batch) if (!this.#pending.has(id)) this.#pending.set(id, ms);
        this.#log(`api: recording key use failed: ${(err as Error).message}`);
      }
    });
    return this.#flushing;
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.flush();
  }
}
