/**
 * JSON-RPC errors that nodes answer with HTTP 200, sorted into whose fault they are:
 * - `upstream`: the node's (overloaded, rate-limited, behind, pruned, broken): counted against it
 *   like a 5xx and the call is tried on another upstream;
 * - `method`: the node does not serve the method (-32601): tried elsewhere, and that upstream is
 *   skipped for the method for a while (set.ts), without counting against its health;
 * - `caller`: the request's (reverted, invalid params): answered as it is.
 * The first rule that matches wins; a network's own rules (`networks[].error_classes`) come
 * before the built-in ones, and an error no rule matches is the caller's.
 */
export type ErrorClass = 'upstream' | 'caller' | 'method';

export interface ErrorRule {
  /** The error's `code`; omitted: any. */
  code?: number | undefined;
  /** A case-insensitive regular expression the error's `message` must match; omitted: any. */
  message?: string | undefined;
  class: ErrorClass;
}

/** The built-in table (docs/gateway.md, "Errors the nodes answer"). */
export const DEFAULT_ERROR_RULES: readonly ErrorRule[] = [
  // Caller errors some nodes and providers dress in node-like codes: checked first.
  { code: 3, class: 'caller' },
  { message: 'execution reverted|revert', class: 'caller' },
  { message: 'query returned more than|block range|too many (results|blocks)|range (is )?too (large|wide)|response size', class: 'caller' },
  { code: -32601, class: 'method' },
  { code: -32600, class: 'caller' },
  { code: -32602, class: 'caller' },
  { code: -32700, class: 'caller' },
  // Rate limits, as EIP-1474 codes them and as providers write them in the body.
  { code: -32005, class: 'upstream' },
  { code: 429, class: 'upstream' },
  { code: -32603, class: 'upstream' },
  { message: 'rate limit|too many requests|capacity exceeded|exceeded .*capacity|request timeout|timed out|timeout|internal error|header not found|missing trie node|unknown block|busy|overloaded|try again later|service unavailable|warming up|loading block', class: 'upstream' },
];

interface CompiledRule { code: number | undefined; message: RegExp | undefined; class: ErrorClass }

/** Where `judge` leaves the first JSON-RPC error code it read (request logs), without a parse of its own. */
export interface SeenCode { rpcCode: number | undefined }

/** What a judged answer was: undefined when it is passed on as it is. */
export type Verdict = { class: 'upstream' | 'method'; detail: string } | undefined;

const R = 0x72;

/**
 * Whether `"error"` occurs in the answer other than as `"error":null` (JSON-RPC 1.0 nodes such
 * as Bitcoin Core send that with every result): the quick test before any parse. By its `rr`,
 * found with single-byte searches (memchr), which costs a fraction of a multi-byte `indexOf`
 * (about 0.1 µs against 0.4 µs for a 100-byte result, 0.5 µs against 8 µs for 14 kB): hex data
 * has no `r`, and keys few.
 */
function mayHoldError(b: Buffer): boolean {
  for (let i = b.indexOf(R, 2); i !== -1 && i + 3 < b.length; i = b.indexOf(R, i + 1)) {
    if (b[i + 1] === R && b[i - 1] === 0x65 /* e */ && b[i - 2] === 0x22 /* " */ && b[i + 2] === 0x6f /* o */ && b[i + 3] === R && b[i + 4] === 0x22 && !isNullAfter(b, i + 5)) return true;
  }
  return false;
}

const SPACE = new Set([0x20, 0x0a, 0x0d, 0x09]);
const NULL = Buffer.from('null');

/** `:null` (with any JSON whitespace) at `at`. */
function isNullAfter(b: Buffer, at: number): boolean {
  while (SPACE.has(b[at]!)) at++;
  if (b[at] !== 0x3a /* : */) return false;
  at++;
  while (SPACE.has(b[at]!)) at++;
  return b.compare(NULL, 0, 4, at, at + 4) === 0;
}

export class ErrorClassifier {
  readonly #rules: CompiledRule[];
  constructor(own: readonly ErrorRule[] = []) {
    this.#rules = [...own, ...DEFAULT_ERROR_RULES].map((r) => ({
      code: r.code, message: r.message === undefined ? undefined : new RegExp(r.message, 'i'), class: r.class,
    }));
  }

  classify(code: unknown, message: unknown): ErrorClass {
    const msg = typeof message === 'string' ? message : '';
    for (const r of this.#rules) {
      if (r.code !== undefined && r.code !== code) continue;
      if (r.message && !r.message.test(msg)) continue;
      return r.class;
    }
    return 'caller';
  }

  /**
   * An upstream's JSON-RPC answer (a single call's or a batch's). Costs one byte search when the
   * answer holds no `"error"`; only then is it parsed. A batch is the node's failure when any of
   * its elements is; `method` is learnt from single calls only (a batch answers the rest).
   * `seen` gets the first error's code, whoever's fault it is.
   */
  judge(body: Buffer, seen?: SeenCode): Verdict {
    if (!mayHoldError(body)) return undefined;
    let value: unknown;
    try {
      value = JSON.parse(body.toString('utf8'));
    } catch {
      return undefined;
    }
    if (Array.isArray(value)) {
      for (const el of value) {
        const v = this.#one(el, seen);
        if (v?.class === 'upstream') return v;
      }
      return undefined;
    }
    return this.#one(value, seen);
  }

  #one(answer: unknown, seen: SeenCode | undefined): Verdict {
    if (typeof answer !== 'object' || answer === null) return undefined;
    const err = (answer as { error?: unknown }).error;
    if (typeof err !== 'object' || err === null) return undefined;
    const { code, message } = err as { code?: unknown; message?: unknown };
    if (seen && seen.rpcCode === undefined && typeof code === 'number') seen.rpcCode = code;
    const c = this.classify(code, message);
    return c === 'caller' ? undefined : { class: c, detail: `JSON-RPC ${String(code)} ${typeof message === 'string' ? message.slice(0, 200) : ''}`.trimEnd() };
  }
}
