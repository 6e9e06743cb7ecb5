import { RpcctlError } from '../util/errors.js';
/**
 * The one form of a REST-style (Horizon) request path that is checked, priced and forwarded.
 *
 * The upstream URL's own path often holds a provider key, and servers and proxies disagree on
 * how they resolve `..`, `%2e%2e`, `..\`, `..;/` or `%2f`: whatever we forward must mean the
 * same thing to every one of them. So anything that any of them could read as a path
 * separator or a dot segment, in any encoding, is refused; empty segments are collapsed.
 */

export class InvalidPathError extends RpcctlError {
  readonly code = 'E_INVALID_PATH';
}

export interface RestTarget {
  /** Normalised path, starting with `/`: what is priced and what goes upstream. */
  path: string;
  /** `?...` as the client sent it, or ''. */
  query: string;
}

/** How many rounds of %-decoding we look through: `%252e` is `%2e` after one, `.` after two. */
const DECODE_ROUNDS = 4;

/**
 * `pathAndQuery` is what follows `/{uuid}` in the request target (may be '' or start with `?`).
 * Throws InvalidPathError for a path that could climb or be read two ways.
 */
export function normaliseRestPath(pathAndQuery: string): RestTarget {
  const q = pathAndQuery.indexOf('?');
  const rawPath = q === -1 ? pathAndQuery : pathAndQuery.slice(0, q);
  const query = q === -1 ? '' : pathAndQuery.slice(q);
  if (rawPath === '' || rawPath === '/') return { path: '/', query };

  const out: string[] = [];
  const segments = rawPath.split('/');
  for (let i = 0; i < segments.length; i++) {
    const raw = segments[i]!;
    // Empty segments (`//transactions`, the leading one) carry nothing; a trailing one is kept.
    if (raw === '') continue;
    checkSegment(raw);
    out.push(raw);
  }
  const trailing = rawPath.length > 1 && rawPath.endsWith('/') && out.length > 0 ? '/' : '';
  return { path: `/${out.join('/')}${trailing}`, query };
}

function checkSegment(raw: string): void {
  let s = raw;
  for (let round = 0; ; round++) {
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      // Backslash (a separator on some servers), `;` (`..;/` is `..` to Tomcat-style
      // servers), control characters.
      if (c === 92 || c === 59 || c < 32 || c === 127) throw new InvalidPathError('invalid path');
    }
    if (round > 0 && s.includes('/')) throw new InvalidPathError('invalid path');
    if (isDotSegment(s)) throw new InvalidPathError('invalid path');
    if (!s.includes('%')) return;
    if (round === DECODE_ROUNDS) throw new InvalidPathError('invalid path');
    try {
      s = decodeURIComponent(s);
    } catch {
      throw new InvalidPathError('invalid path');
    }
  }
}

function isDotSegment(s: string): boolean {
  // `.`/`..`, what some servers trim to them (`.. `), and what Unicode normalisation turns
  // into them (fullwidth `．．`, one-dot leaders).
  const t = s.trimEnd();
  if (t === '.' || t === '..') return true;
  if (t.length > 2 * 4 || t.charCodeAt(0) < 128) return false;
  const n = t.normalize('NFKC').trimEnd();
  return n === '.' || n === '..';
}
