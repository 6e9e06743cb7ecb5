/**
 * JSON with source text (Node >= 21, V8's "JSON.parse source text access"): a reviver sees each
 * value's text, and a `JSON.rawJSON` value is written back by JSON.stringify as that text.
 */
const JSON_SOURCE = JSON as unknown as {
  parse(text: string, reviver: (key: string, value: unknown, context: { source?: string }) => unknown): unknown;
  rawJSON(text: string): unknown;
  isRawJSON(value: unknown): boolean;
};

/** A number written as JavaScript writes it back, and exact: anything else must keep its text. */
const CANONICAL_SAFE_INTEGER = /^(?:0|-?[1-9]\d{0,14})$/;

/**
 * JSON.parse, but every numeric `id` whose text JavaScript would not write back the same (over
 * 2^53, `1.0`, `1e2`, `-0`) stays as that text (a `JSON.rawJSON` value), so an answer carries
 * the client's id byte for byte. The reviver costs a call per value, so it runs only when such
 * an id is there: a scan for `"id":` finds the ids' text, and ids like `1` or `42` take the
 * plain parse. An escaped key (`"\u0069d"`) is not found by the scan: any `\u` takes the
 * reviver too.
 */
export function parseJson(text: string): unknown {
  return idsNeedTheirText(text) ? JSON_SOURCE.parse(text, keepIdText) : JSON.parse(text);
}

function keepIdText(key: string, value: unknown, context: { source?: string }): unknown {
  return key === 'id' && typeof value === 'number' && context.source !== undefined && !CANONICAL_SAFE_INTEGER.test(context.source)
    ? JSON_SOURCE.rawJSON(context.source) : value;
}

/** A JSON-RPC id kept as its text by parseJson. */
export function isRawId(id: unknown): boolean {
  return typeof id === 'object' && id !== null && JSON_SOURCE.isRawJSON(id);
}

function idsNeedTheirText(text: string): boolean {
  if (text.includes('\\u')) return true;
  for (let at = text.indexOf('"id"'); at !== -1; at = text.indexOf('"id"', at + 4)) {
    let i = skipSpace(text, at + 4);
    if (text.charCodeAt(i) !== 58 /* : */) continue;
    if (!writtenBackTheSame(text, skipSpace(text, i + 1))) return true;
  }
  return false;
}

function skipSpace(text: string, i: number): number {
  for (let c = text.charCodeAt(i); c === 32 || c === 9 || c === 10 || c === 13; c = text.charCodeAt(++i));
  return i;
}

/**
 * Whether the value at `i` is no number, or one JavaScript writes back as the same text
 * (CANONICAL_SAFE_INTEGER), read in place: this runs on every request.
 */
function writtenBackTheSame(text: string, i: number): boolean {
  let c = text.charCodeAt(i);
  const negative = c === 45; /* - */
  if (negative) c = text.charCodeAt(++i);
  if (!isDigit(c)) return !negative;
  const start = i;
  if (c === 48 /* 0 */) {
    if (negative) return false;
    i++;
  } else {
    while (isDigit(text.charCodeAt(i))) i++;
    if (i - start > 15) return false;
  }
  const next = text.charCodeAt(i);
  return next !== 46 /* . */ && next !== 101 /* e */ && next !== 69 /* E */ && !isDigit(next);
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

/** One valid element of a request: what metering needs. */
export interface RpcCall {
  method: string;
  params?: unknown;
  /** Undefined for a notification. */
  id?: unknown;
}

export type ParsedRpc =
  | { kind: 'parse-error' }
  | { kind: 'invalid'; id: unknown; message: string }
  | { kind: 'single'; call: RpcCall }
  | {
    kind: 'batch';
    /** The elements to forward, as they came. */
    valid: unknown[];
    calls: RpcCall[];
    /** Error answers for elements we refuse ourselves; merged into the upstream's array. */
    rejected: Array<{ jsonrpc: '2.0'; error: { code: number; message: string }; id: unknown }>;
  };

/**
 * The longest method name taken. JSON-RPC method names are short (Ethereum's longest is 39
 * characters, Solana's under 40); a client's name is matched, metered and logged, so it is capped
 * before any of that.
 */
export const MAX_METHOD_LENGTH = 128;

/** A JSON-RPC call: an object with a method name of 1 to `MAX_METHOD_LENGTH` characters. */
export function isCall(v: unknown): v is { jsonrpc?: unknown; method: string; params?: unknown; id?: unknown } {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const method = (v as { method?: unknown }).method;
  return typeof method === 'string' && method.length > 0 && method.length <= MAX_METHOD_LENGTH;
}

/** What is wrong with an element that is not a call, for its -32600 answer. */
export function invalidCallMessage(v: unknown): string {
  const method = typeof v === 'object' && v !== null ? (v as { method?: unknown }).method : undefined;
  return typeof method === 'string' && method.length > MAX_METHOD_LENGTH
    ? `invalid request: method name longer than ${MAX_METHOD_LENGTH} characters`
    : 'invalid request';
}

/** Validates a JSON-RPC 2.0 body just enough to meter it; the upstream judges the rest. */
export function parseRpc(body: Buffer): ParsedRpc {
  let value: unknown;
  try {
    value = parseJson(body.toString('utf8'));
  } catch {
    return { kind: 'parse-error' };
  }
  if (!Array.isArray(value)) {
    if (isCall(value)) return { kind: 'single', call: { method: value.method, params: value.params, id: value.id } };
    const id = typeof value === 'object' && value !== null ? (value as { id?: unknown }).id ?? null : null;
    return { kind: 'invalid', id, message: invalidCallMessage(value) };
  }
  if (value.length === 0) return { kind: 'invalid', id: null, message: 'invalid request' };
  const valid: unknown[] = [];
  const calls: RpcCall[] = [];
  const rejected: Array<{ jsonrpc: '2.0'; error: { code: number; message: string }; id: unknown }> = [];
  for (const el of value) {
    if (isCall(el)) {
      valid.push(el);
      calls.push({ method: el.method, params: el.params, id: el.id });
    } else {
      const id = typeof el === 'object' && el !== null ? (el as { id?: unknown }).id ?? null : null;
      rejected.push({ jsonrpc: '2.0', error: { code: -32600, message: invalidCallMessage(el) }, id });
    }
  }
  return { kind: 'batch', valid, calls, rejected };
}
