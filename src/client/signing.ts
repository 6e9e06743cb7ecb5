// Not `import ... from 'node:crypto'`: an ESM import builds a facade that reads every export,
// and crypto's webcrypto getter then loads all of Web Crypto, which signing never uses (a
// command line signs one or two requests and exits; its start-up is most of its time).
const { createHash, createHmac, timingSafeEqual } = process.getBuiltinModule('node:crypto');

/** What a caller signs: the exact bytes (or UTF-8 string) that go on the wire. */
export type Body = string | Uint8Array;

export interface SignInput {
  secret: string;
  timestamp: number | string;
  method: string;
  /** Path, optionally with a query string; the query is not part of the signature. */
  path: string;
  body?: Body;
}

export function sha256Hex(body: Body = ''): string {
  return createHash('sha256').update(body).digest('hex');
}

/** Strips host and query: only `/v1/...` is signed. Accepts a full URL too. */
export function signedPath(target: string): string {
  let path = target;
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(path)) path = new URL(path).pathname + new URL(path).search;
  const q = path.indexOf('?');
  if (q !== -1) path = path.slice(0, q);
  const hash = path.indexOf('#');
  if (hash !== -1) path = path.slice(0, hash);
  return path;
}

export function canonicalString(input: Omit<SignInput, 'secret'>): string {
  return `${input.timestamp}\n${input.method.toUpperCase()}\n${signedPath(input.path)}\n${sha256Hex(input.body ?? '')}`;
}

export function sign(input: SignInput): string {
  return createHmac('sha256', input.secret).update(canonicalString(input)).digest('hex');
}

/** Constant-time comparison of two lowercase hex signatures. */
export function safeEqualHex(expected: string, received: string): boolean {
  const a = Buffer.from(expected, 'utf8');
  const b = Buffer.from(received, 'utf8');
  // Compare against itself on length mismatch so the time taken does not reveal the length.
  if (a.length !== b.length) {
    timingSafeEqual(a, a);
    return false;
  }
  return timingSafeEqual(a, b);
}

export function verify(input: SignInput & { signature: string }): boolean {
  return safeEqualHex(sign(input), input.signature);
}

/** Headers for a Public API request. The caller must send `body` unchanged. */
export function signatureHeaders(input: Omit<SignInput, 'timestamp'> & { apiKey: string; timestamp?: number }): Record<string, string> {
  const timestamp = input.timestamp ?? Math.floor(Date.now() / 1000);
  return {
    'x-api-key': input.apiKey,
    'x-timestamp': String(timestamp),
    'x-signature': sign({ ...input, timestamp }),
  };
}
