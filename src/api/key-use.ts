import { recordKeyUse, type Store } from '../store/index.js';
import { Supervisor } from '../runtime/supervisor.js';

/** The flush's name under the supervisor. */
export const KEY_USE_FLUSH_TASK = 'key-use-flush';

/**
 * Last-use times of API keys, gathered in memory on the request path (one Map write) and
 * written to the store in one transaction every `flushMs`: a busy key costs the store one
 * update per interval, not one per request.
 */
export class KeyUseRecorder {
  readonly #store: Store;
  readonly #log: (line: string) => void;
  #pending = new Map<string, number>();
  readonly #supervisor: Supervisor;
  #flushing: Promise<unknown> = Promise.resolve();
  #failing = false;

  constructor(store: Store, opts: { flushMs?: number; log?: (line: string) => void; supervisor?: Supervisor } = {}) {
    this.#store = store;
    this.#log = opts.log ?? (() => {});
    this.#supervisor = opts.supervisor ?? new Supervisor({ log: this.#log });
    this.#supervisor.every(KEY_USE_FLUSH_TASK, opts.flushMs ?? 15_000, async () => {
      const err = await this.#flush();
      if (err) throw err;
    }, { immediate: false });
  }

  touch(keyId: string, nowMs = Date.now()): void {
    this.#pending.set(keyId, nowMs);
  }

  /** A use not flushed yet is still the latest: readers in this process see it at once. */
  pending(keyId: string): number | undefined {
    return this.#pending.get(keyId);
  }

  /** Writes the pending times; a failure keeps them for the next flush (never rejects). */
  async flush(): Promise<void> {
    await this.#flush();
  }

  /** Resolves with the error of a failed write. Keys are bounded by the keys that exist. */
  #flush(): Promise<unknown> {
    const flushing = this.#flushing.then(async () => {
      if (this.#pending.size === 0) return undefined;
      const batch = this.#pending;
      this.#pending = new Map();
      try {
        await recordKeyUse(this.#store, batch);
        if (this.#failing) this.#log('api: recording key use works again');
        this.#failing = false;
        return undefined;
      } catch (err) {
        // Keep them for the next round rather than lose them; newer touches win.
        for (const [id, ms] of batch) if (!this.#pending.has(id)) this.#pending.set(id, ms);
        if (!this.#failing) this.#log(`api: recording key use failed, kept and retried: ${(err as Error).message}`);
        this.#failing = true;
        return err;
      }
    });
    this.#flushing = flushing;
    return flushing;
  }

  async stop(): Promise<void> {
    await this.#supervisor.cancel(KEY_USE_FLUSH_TASK);
    await this.flush();
  }
}
