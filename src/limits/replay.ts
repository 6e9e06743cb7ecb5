/**
 * Remembers the signatures of mutating requests for as long as their timestamp is accepted,
 * so a captured request cannot be sent again. One process: memory. Several instances behind
 * one address need a shared store (Redis `SET key 1 NX PX ttl`) behind this same interface.
 */
export interface ReplayCache {
  /** True the first time `signature` is seen before `expiresAtMs`; false for a replay. */
  claim(signature: string, expiresAtMs: number, nowMs: number): boolean | Promise<boolean>;
}

/**
 * Signatures in insertion order. Every entry lives the same span past its insertion (the whole
 * skew window both ways), so expiry is in insertion order too and a sweep stops at the first
 * live entry: constant work per request, no timer.
 */
export class MemoryReplayCache implements ReplayCache {
  readonly #seen = new Map<string, number>();

  get size(): number {
    return this.#seen.size;
  }

  claim(signature: string, expiresAtMs: number, nowMs: number): boolean {
    this.#sweep(nowMs);
    const until = this.#seen.get(signature);
    if (until !== undefined && until > nowMs) return false;
    this.#seen.delete(signature);
    this.#seen.set(signature, expiresAtMs);
    return true;
  }

  #sweep(nowMs: number): void {
    let n = 0;
    for (const [sig, until] of this.#seen) {
      if (until > nowMs || n++ > 64) return;
      this.#seen.delete(sig);
    }
  }
}
