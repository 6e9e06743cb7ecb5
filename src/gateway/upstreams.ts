import { Pool, type Dispatcher } from 'undici';
import { upstreamLabel } from '../metrics/index.js';
import type { GatewayMetrics } from './metrics.js';

export class UpstreamError extends Error {
  readonly code: 'E_UPSTREAM_FAILED' | 'E_UPSTREAM_TIMEOUT';
  constructor(timeout: boolean, cause: unknown) {
    super(timeout ? 'upstream timed out' : 'upstream failed', { cause });
    this.name = 'UpstreamError';
    this.code = timeout ? 'E_UPSTREAM_TIMEOUT' : 'E_UPSTREAM_FAILED';
  }
}

export interface UpstreamResponse {
  status: number;
  contentType: string | undefined;
  body: Dispatcher.ResponseData['body'];
}

export interface UpstreamRequest {
  method: string;
  /** Appended to the upstream URL's own path; '' for JSON-RPC. Includes the query string. */
  path: string;
  body: Buffer | undefined;
  contentType: string | undefined;
  /** Ends the call at once (shutdown); an aborted call does not count against the upstream. */
  signal?: AbortSignal;
  /**
   * Bitcoin Core answers JSON-RPC 1.0 errors with HTTP 500 and a JSON body: that is the node's
   * answer to pass on, not a failed node to move away from.
   */
  rpcErrorsAre500?: boolean;
}

const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT']);

/** Where an upstream set reports latency and failures; labels are fixed per upstream. */
export interface UpstreamObserver {
  metrics: GatewayMetrics;
  /** `{network}-{env}` of an environment id. */
  nameOf(envId: number): string;
}

type FailureReason = 'timeout' | 'connect' | 'http_5xx';

/** One upstream node with its own keep-alive pool and health. */
class Upstream {
  readonly pool: Pool;
  readonly basePath: string;
  /** From `user:password@` in the URL (Bitcoin Core's rpcauth); sent on every request. */
  readonly authorization: string | undefined;
  failures = 0;
  downUntil = 0;
  readonly latency: { observe(seconds: number): void } | undefined;
  readonly #failed: ((reason: FailureReason) => void) | undefined;
  constructor(url: string, timeoutMs: number, metrics?: GatewayMetrics, network?: string) {
    if (metrics && network) {
      const labels = { network, upstream: upstreamLabel(url) };
      this.latency = metrics.upstreamLatency.labels(labels);
      this.#failed = (reason) => metrics.upstreamFailures.inc({ ...labels, reason });
    }
    const u = new URL(url);
    this.basePath = u.pathname === '/' ? '' : u.pathname.replace(/\/$/, '');
    this.authorization = u.username || u.password
      ? `Basic ${Buffer.from(`${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`).toString('base64')}`
      : undefined;
    this.pool = new Pool(u.origin, {
      connections: 128,
      pipelining: 1,
      keepAliveTimeout: 30_000,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      connectTimeout: Math.min(timeoutMs, 5000),
    });
  }
  get healthy(): boolean {
    return this.downUntil <= Date.now();
  }
  markFailed(reason: FailureReason): void {
    this.#failed?.(reason);
    this.failures++;
    // Back off 1 s, 2 s, 4 s ... up to 30 s before trying it again as a first choice.
    this.downUntil = Date.now() + Math.min(30_000, 1000 * 2 ** Math.min(this.failures - 1, 5));
  }
  markOk(): void {
    this.failures = 0;
    this.downUntil = 0;
  }
}

/**
 * The upstreams of one network environment, in config order. Healthy ones are tried first;
 * a connection error, a timeout or a 5xx moves on to the next. Dead ones are still tried last,
 * so a full outage answers with the last upstream's failure instead of nothing.
 */
export class UpstreamSet {
  readonly #upstreams: Upstream[];

  constructor(urls: readonly string[], timeoutMs: number, metrics?: GatewayMetrics, network?: string) {
    this.#upstreams = urls.map((u) => new Upstream(u, timeoutMs, metrics, network));
  }

  async send(req: UpstreamRequest): Promise<UpstreamResponse> {
    const ups = this.#upstreams;
    if (ups.length === 0) throw new UpstreamError(false, new Error('no upstream configured'));
    let order: Upstream[] = ups;
    if (ups.length > 1 && !ups.every((u) => u.healthy)) {
      order = [...ups.filter((u) => u.healthy), ...ups.filter((u) => !u.healthy)];
    }
    let lastError: UpstreamError | undefined;
    for (let i = 0; i < order.length; i++) {
      const up = order[i]!;
      const started = up.latency ? performance.now() : 0;
      try {
        const headers: Record<string, string> = req.contentType ? { 'content-type': req.contentType, accept: 'application/json' } : { accept: 'application/json' };
        if (up.authorization) headers.authorization = up.authorization;
        const res = await up.pool.request({
          method: req.method as Dispatcher.HttpMethod,
          path: up.basePath + (req.path || (up.basePath ? '' : '/')),
          headers,
          body: req.body,
          signal: req.signal,
        });
        up.latency?.observe((performance.now() - started) / 1000);
        const rpcError = req.rpcErrorsAre500 && res.statusCode === 500 && String(res.headers['content-type']).startsWith('application/json');
        if (res.statusCode >= 500 && !rpcError && i < order.length - 1) {
          res.body.resume();
          up.markFailed('http_5xx');
          continue;
        }
        if (res.statusCode >= 500 && !rpcError) {
          res.body.resume();
          up.markFailed('http_5xx');
          lastError = new UpstreamError(false, new Error(`upstream answered ${res.statusCode}`));
          break;
        }
        up.markOk();
        const ct = res.headers['content-type'];
        return { status: res.statusCode, contentType: Array.isArray(ct) ? ct[0] : ct, body: res.body };
      } catch (err) {
        if (req.signal?.aborted) throw err;
        const timeout = TIMEOUT_CODES.has((err as { code?: string }).code ?? '');
        up.markFailed(timeout ? 'timeout' : 'connect');
        lastError = new UpstreamError(timeout, err);
      }
    }
    throw lastError ?? new UpstreamError(false, undefined);
  }

  async close(): Promise<void> {
    await Promise.all(this.#upstreams.map((u) => u.pool.close().catch(() => {})));
  }
}

/** Upstream sets by environment id, created on first use. */
export class UpstreamDirectory {
  readonly #sets = new Map<number, UpstreamSet>();
  readonly #timeoutMs: number;
  readonly #observer: UpstreamObserver | undefined;
  constructor(timeoutMs: number, observer?: UpstreamObserver) {
    this.#timeoutMs = timeoutMs;
    this.#observer = observer;
  }
  for(envId: number, urls: readonly string[]): UpstreamSet {
    let set = this.#sets.get(envId);
    if (!set) {
      const o = this.#observer;
      set = new UpstreamSet(urls, this.#timeoutMs, o?.metrics.enabled ? o.metrics : undefined, o?.nameOf(envId));
      this.#sets.set(envId, set);
    }
    return set;
  }
  async close(): Promise<void> {
    await Promise.all([...this.#sets.values()].map((s) => s.close()));
  }
}
