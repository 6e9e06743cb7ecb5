/**
 * One Redis outage as the process sees it. The limits, the gateway cache and every gateway
 * worker each hold a client and each notice the outage on their own; the operator gets one
 * `warn` when the first of them loses Redis and one `info` when the last has it back.
 */
export class RedisOutage {
  readonly #down = new Map<string, string>();
  readonly #warn: (line: string) => void;
  readonly #info: (line: string) => void;

  constructor(log: { warn: (line: string) => void; info: (line: string) => void }) {
    this.#warn = log.warn;
    this.#info = log.info;
  }

  /** `part` (e.g. `limits`, `cache`, `worker 1 limits`) lost Redis (`down`) or has it back. */
  report(part: string, down: boolean, reason = ''): void {
    const wasDown = this.#down.size > 0;
    if (down) this.#down.set(part, reason);
    else this.#down.delete(part);
    if (!wasDown && down) {
      this.#warn(`redis: Redis unavailable (${reason}); rate limits fall back to this instance's share in memory (limit / live instances) and the gateway cache to memory until it is back`);
    } else if (wasDown && this.#down.size === 0) {
      this.#info('redis: Redis is back; rate limits and the gateway cache are shared again');
    }
  }

  /** A part that went away (a worker that died) no longer holds the outage open. */
  forget(prefix: string): void {
    for (const part of [...this.#down.keys()]) if (part.startsWith(prefix)) this.report(part, false);
  }

  get down(): boolean {
    return this.#down.size > 0;
  }
}

/** Reporter for one part: what RedisLimits' and RedisCacheTier's `onOutage` take. */
export function outageReporter(outage: RedisOutage, part: string): (down: boolean, reason: string) => void {
  return (down, reason) => outage.report(part, down, reason);
}
