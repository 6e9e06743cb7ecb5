/**
 * What the gateway knows of one upstream's health: latency (EWMA), error rate (EWMA of
 * failures), its chain head from the probe, and a back-off after failures. Selection ranks
 * upstreams by these; the probe feeds every upstream (down ones too), so an upstream that comes
 * back after an outage is seen as healthy within one probe interval and is never "unhealthy
 * forever". A back-off that client calls caused is a circuit breaker the probe cannot close (a
 * node may answer the probe and fail real calls): once it has passed the upstream is half-open,
 * one client call goes through as a trial, and its success closes it while its failure opens it
 * again for longer.
 */

/** Weight of the newest sample in the latency and error-rate averages. */
const ALPHA = 0.2;
/** Latency samples kept for the hedging percentile. */
const WINDOW = 64;

export type UpstreamStatus = 'healthy' | 'lagging' | 'down';

export interface UpstreamSnapshot {
  /** The URL with its secret parts (user info, key-like path segments, query values) masked. */
  url: string;
  status: UpstreamStatus;
  latency_ms: number | null;
  error_rate: number;
  head: number | null;
  lag: number | null;
  requests: number;
  failures: number;
  consecutive_failures: number;
  down_until: string | null;
  last_error: string | null;
  /** When `last_error` happened: the workers' views are merged by it, the newest wins. */
  last_error_at: string | null;
  probed_at: string | null;
}

export class UpstreamHealth {
  readonly url: string;
  readonly label: string;
  latencyMs: number | undefined;
  errorRate = 0;
  consecutiveFailures = 0;
  downUntil = 0;
  /** Until then its answers disagreed with the other upstreams' too often (integrity.ts): chosen after the others, before the down ones. */
  demotedUntil = 0;
  head: number | undefined;
  /** The best head known in the environment, set by the probe; lag is measured against it. */
  bestHead: number | undefined;
  requests = 0;
  failures = 0;
  lastError: string | undefined;
  lastErrorAt = 0;
  probedAt = 0;
  /** The back-off was caused by a client call's failure: only a client call's success ends it. */
  clientBackoff = false;
  /** A half-open trial call is in flight until then (or until it settles): no second one meanwhile. */
  trialUntil = 0;
  readonly #samples = new Float64Array(WINDOW);
  #sampleCount = 0;

  constructor(url: string) {
    this.url = url;
    this.label = redactUrl(url);
  }

  get down(): boolean {
    const now = Date.now();
    return this.downUntil > now || this.trialUntil > now;
  }

  /** When it may be a first choice again: its back-off, or the end of a trial in flight. */
  blockedUntil(): number {
    return this.downUntil > this.trialUntil ? this.downUntil : this.trialUntil;
  }

  /**
   * Its back-off from client failures has passed and no trial is in flight: the next client call
   * should be its trial (selection puts it first), or it would never get one while others serve.
   */
  trialDue(now: number): boolean {
    return this.clientBackoff && this.consecutiveFailures > 0 && this.downUntil <= now && this.trialUntil <= now;
  }

  /**
   * Called when a client call is about to go to it: if its back-off from client failures has
   * passed, this call is the half-open trial, and the upstream counts as down until it settles
   * (or `timeoutMs` has passed, should the call end without a verdict, e.g. cancelled).
   */
  beginCall(timeoutMs: number): void {
    if (this.clientBackoff && this.consecutiveFailures > 0) this.trialUntil = Date.now() + timeoutMs;
  }

  lag(): number {
    return this.head === undefined || this.bestHead === undefined ? 0 : Math.max(0, this.bestHead - this.head);
  }

  /**
   * Lower is better: latency, inflated by the error rate (a node failing half its calls costs a
   * retry every other call, so it ranks like one ten times slower at 100 %). No cliff: a node
   * coming back from an outage wins its place again as its successes wash the errors out.
   * An unmeasured upstream ranks as fast, so it gets tried.
   */
  score(): number {
    return (this.latencyMs ?? 0) * (1 + 9 * this.errorRate);
  }

  ok(latencyMs: number): void {
    this.requests++;
    this.latencyMs = this.latencyMs === undefined ? latencyMs : this.latencyMs + ALPHA * (latencyMs - this.latencyMs);
    this.errorRate -= ALPHA * this.errorRate;
    this.closed();
    this.#samples[this.#sampleCount++ % WINDOW] = latencyMs;
  }

  /** No back-off any more: it answered (here, or another gateway worker's trial call). */
  closed(): void {
    this.consecutiveFailures = 0;
    this.downUntil = 0;
    this.clientBackoff = false;
    this.trialUntil = 0;
  }

  /**
   * The probe's call succeeded: it clears a back-off that probes caused (a node back from an
   * outage), but not one client calls caused (that takes a trial, see `beginCall`).
   */
  probeOk(latencyMs: number): void {
    if (!this.clientBackoff) return this.ok(latencyMs);
    this.requests++;
  }

  /** `byClient`: a client call failed (not the probe), so only a client call's success undoes it. */
  failed(reason: string, byClient = true): void {
    this.requests++;
    this.failures++;
    this.consecutiveFailures++;
    this.errorRate += ALPHA * (1 - this.errorRate);
    this.lastError = reason;
    this.lastErrorAt = Date.now();
    this.trialUntil = 0;
    if (byClient) this.clientBackoff = true;
    // Back off 1 s, 2 s, 4 s ... up to 30 s before it is a first choice again; the probe may
    // clear this sooner by reaching it, unless client calls failed.
    this.downUntil = Date.now() + Math.min(30_000, 1000 * 2 ** Math.min(this.consecutiveFailures - 1, 5));
  }

  /** The probe reached it (see `probeOk` for the back-off) and read its head. */
  probed(head: number | undefined): void {
    if (head !== undefined) this.head = head;
    this.probedAt = Date.now();
  }

  /** The `q` quantile (0..1) of recent latencies, or undefined before enough samples. */
  latencyQuantile(q: number): number | undefined {
    const n = Math.min(this.#sampleCount, WINDOW);
    if (n < 8) return undefined;
    const sorted = Array.from(this.#samples.subarray(0, n)).sort((a, b) => a - b);
    return sorted[Math.min(n - 1, Math.floor(q * n))];
  }

  status(maxLag: number): UpstreamStatus {
    if (this.down) return 'down';
    return this.lag() > maxLag ? 'lagging' : 'healthy';
  }

  snapshot(maxLag: number): UpstreamSnapshot {
    const head = this.head ?? null;
    return {
      url: this.label,
      status: this.status(maxLag),
      latency_ms: this.latencyMs === undefined ? null : Math.round(this.latencyMs * 10) / 10,
      error_rate: Math.round(this.errorRate * 1000) / 1000,
      head,
      lag: head === null || this.bestHead === undefined ? null : this.lag(),
      requests: this.requests,
      failures: this.failures,
      consecutive_failures: this.consecutiveFailures,
      down_until: this.down ? new Date(this.downUntil).toISOString() : null,
      last_error: this.lastError ?? null,
      last_error_at: this.lastErrorAt ? new Date(this.lastErrorAt).toISOString() : null,
      probed_at: this.probedAt ? new Date(this.probedAt).toISOString() : null,
    };
  }
}

/**
 * The order to try upstreams in: one due a half-open trial first (its failure moves the call on
 * to the next), then healthy ones by score; for calls that depend on the chain head, those
 * lagging more than `maxLag` blocks after them; then the ones demoted for disagreeing answers
 * (integrity policy); down ones last (soonest back first), so a full outage still answers with
 * an upstream's error.
 */
export function rank<T extends UpstreamHealth>(ups: readonly T[], needsHead: boolean, maxLag: number): T[] {
  if (ups.length === 1) return [ups[0]!];
  const now = Date.now();
  const tier = (u: T): number => (u.blockedUntil() > now ? 3 : u.demotedUntil > now ? 2 : needsHead && u.lag() > maxLag ? 1 : u.trialDue(now) ? -1 : 0);
  return [...ups].sort((a, b) => tier(a) - tier(b) || (tier(a) === 3 ? a.blockedUntil() - b.blockedUntil() : a.score() - b.score()));
}

const KEY_LIKE = /^[A-Za-z0-9_-]{16,}$/;

/** An upstream URL safe to show: no user info, key-like path segments and query values masked. */
export function redactUrl(raw: string): string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return '(invalid url)';
  }
  const auth = u.username || u.password ? '***@' : '';
  const path = u.pathname.split('/').map((s) => (KEY_LIKE.test(s) ? '***' : s)).join('/');
  const query = [...u.searchParams.keys()].map((k) => `${k}=***`).join('&');
  return `${u.protocol}//${auth}${u.host}${path === '/' ? '' : path}${query ? `?${query}` : ''}`;
}
