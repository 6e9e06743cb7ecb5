/** `networks[].upstream_methods[url]`: which JSON-RPC methods an upstream serves. */
export interface MethodRules {
  /** Patterns (`*` matches any run of characters, e.g. `debug_*`); omitted or empty: every method. */
  allow?: readonly string[] | undefined;
  /** Patterns never sent to the upstream; win over `allow`. */
  deny?: readonly string[] | undefined;
}

/** Learnt "method not found" answers kept per upstream at most: method names come from clients. */
const MAX_LEARNT = 256;

function pattern(list: readonly string[] | undefined): RegExp | undefined {
  if (!list || list.length === 0) return undefined;
  const alts = list.map((p) => p.split('*').map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.*'));
  return new RegExp(`^(?:${alts.join('|')})$`);
}

/**
 * Which methods one upstream serves: what the operator configured, and the methods it answered
 * -32601 ("method not found") for, skipped until `ttlMs` has passed.
 */
export class MethodRouting {
  readonly #allow: RegExp | undefined;
  readonly #deny: RegExp | undefined;
  /** Method → when it may be tried again. */
  readonly #learnt = new Map<string, number>();

  constructor(rules: MethodRules | undefined) {
    this.#allow = pattern(rules?.allow);
    this.#deny = pattern(rules?.deny);
  }

  /** False for every method when nothing is configured or learnt: the caller's fast path. */
  get restricted(): boolean {
    return this.#allow !== undefined || this.#deny !== undefined || this.#learnt.size > 0;
  }

  serves(method: string, now = Date.now()): boolean {
    if (this.#deny?.test(method) || (this.#allow && !this.#allow.test(method))) return false;
    if (this.#learnt.size === 0) return true;
    const until = this.#learnt.get(method);
    if (until === undefined) return true;
    if (until > now) return false;
    this.#learnt.delete(method);
    return true;
  }

  /** The upstream answered "method not found": skip it for `method` for `ttlMs`. */
  learnUnsupported(method: string, ttlMs: number): void {
    this.#learnt.delete(method);
    if (this.#learnt.size >= MAX_LEARNT) this.#learnt.delete(this.#learnt.keys().next().value!);
    this.#learnt.set(method, Date.now() + ttlMs);
  }
}
