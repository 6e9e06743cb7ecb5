/** What a person reads for the usual connect failures, by Node's or undici's error code. */
const REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ETIMEDOUT: 'connect timed out',
  UND_ERR_CONNECT_TIMEOUT: 'connect timed out',
  UND_ERR_HEADERS_TIMEOUT: 'no answer in time',
  UND_ERR_SOCKET: 'connection closed',
  ENOTFOUND: 'host not found (DNS)',
  EAI_AGAIN: 'host name lookup failed (DNS, temporary)',
  EAI_NONAME: 'host not found (DNS)',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
};

/**
 * Why no HTTP answer came, never empty: undici's errors can carry an empty message (an
 * AggregateError of IPv4 and IPv6 refusals), with the reason in `code`, `cause` or `errors`.
 */
export function networkReason(err: unknown): string {
  const e = err as { message?: string; code?: string; cause?: unknown; errors?: unknown[] } | undefined;
  const known = e?.code === undefined ? undefined : REASONS[e.code];
  if (known) return known;
  // fetch says only "fetch failed"; the cause (or the first of several) says why.
  const inner = e?.cause ?? e?.errors?.[0];
  if (inner) return networkReason(inner);
  const text = e?.message?.trim() || e?.code || (err as Error)?.name || 'unknown error';
  const code = /\b(E[A-Z_]{3,})\b/.exec(text)?.[1];
  return (code && REASONS[code]) || text;
}
