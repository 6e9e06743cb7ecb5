/** `networks[].upstream_methods[url]`: which JSON-RPC methods an upstream serves. */
export interface MethodRules {
  /** Patterns (`*` matches any run of characters, e.g. `debug_*`); omitted or empty: every method. */
  allow?: readonly string[] | undefined;
  /** Patterns never sent to the upstream; win over `allow`. */
  deny?: readonly string[] | undefined;
}

/** Learnt "method not found" answers kept per upstream at most: method names come from clients. */
const MAX_LEARNT = 256;

/**
 * A `*` glob matched in linear time: the first segment is a prefix, the last a suffix, and each
 * one between is found left to right with `indexOf` (leftmost is always right when `*` is the only
 * wildcard). A regular expression of several `.*` backtracks: a long method name against
 * `*get*Logs*` took seconds and blocked the worker.
 */
export function globMatcher(glob: string): (text: string) => boolean {
  const parts = glob.split('*');
  if (parts.length === 1) return (text) => text === glob;
  const first = parts[0]!;
  const last = parts[parts.length - 1]!;
  const middle = parts.slice(1, -1).filter((p) => p !== '');
  const least = first.length + last.length + middle.reduce((n, p) => n + p.length, 0);
  return (text) => {
    if (text.length < least || !text.startsWith(first) || !text.endsWith(last)) return false;
    let at = first.length;
    const end = text.length - last.length;
    for (const part of middle) {
      const found = text.indexOf(part, at);
      if (found < 0 || found + part.length > end) return false;
      at = found + part.length;
    }
    return true;
  };
}

function pattern(list: readonly string[] | undefined): ((method: string) => boolean) | undefined {
  if (!list || list.length === 0) return undefined;
  const globs = list.map(globMatcher);
  return (method) => globs.some((matches) => matches(method));
}

/**
 * Which methods one upstream serves: what the operator configured, and the methods it answered
 * -32601 ("method not found") for, skipped until `ttlMs` has passed.
 */
export class MethodRouting {
  readonly #allow: ((method: string) => boolean) | undefined;
  readonly #deny: ((method: string) => boolean) | undefined;
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
    if (this.#deny?.(method) || (this.#allow && !this.#allow(method))) return false;
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
