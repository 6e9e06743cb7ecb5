import { Pool, type Dispatcher } from 'undici';
import { rank, UpstreamHealth, type UpstreamSnapshot } from './health.js';
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
  /** The upstream that answered. */
  upstream: Upstream;
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

type FailureReason = 'timeout' | 'connect' | 'http_5xx' | 'http_429';

/** One upstream node with its own keep-alive pool and health. */
export class Upstream extends UpstreamHealth {
  readonly pool: Pool;
  readonly basePath: string;
  /** From `user:password@` in the URL (Bitcoin Core's rpcauth); sent on every request. */
  readonly authorization: string | undefined;
  readonly latency: { observe(seconds: number): void } | undefined;
  readonly #failed: ((reason: FailureReason) => void) | undefined;
  constructor(url: string, timeoutMs: number, metrics?: GatewayMetrics, network?: string) {
    super(url);
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

  /** Counts a failure for selection (health.ts) and, labelled by kind, in the metrics. */
  markFailed(reason: FailureReason, detail: string): void {
    this.#failed?.(reason);
    this.failed(detail);
  }
}

export interface UpstreamSetOptions {
  timeoutMs: number;
  /** Blocks an upstream may lag behind the best head and still serve calls that read the head. */
  maxLagBlocks: number;
  /** Hedge idempotent reads after this latency quantile of the chosen upstream (0..1); undefined: never. */
  hedgeQuantile: number | undefined;
}

export interface RouteHints {
  /** The call reads the chain head (`latest`, `pending`, no block): upstreams lagging too far come last. */
  needsHead?: boolean;
  /** A read that may be sent twice: hedged when hedging is on. */
  idempotent?: boolean;
  /** Only these upstreams (a retry elsewhere). */
  only?: (u: Upstream) => boolean;
}

const NO_HINTS: RouteHints = {};

/**
 * The upstreams of one network environment. Each call goes to the best one by health, latency
 * and lag (see health.ts); a connection error, a timeout or a 5xx moves on to the next. Down
 * ones are still tried last, so a full outage answers with the last upstream's failure instead
 * of nothing.
 */
export class UpstreamSet {
  readonly upstreams: Upstream[];
  readonly #opts: UpstreamSetOptions;

  constructor(urls: readonly string[], opts: UpstreamSetOptions, metrics?: GatewayMetrics, network?: string) {
    this.upstreams = urls.map((u) => new Upstream(u, opts.timeoutMs, metrics, network));
    this.#opts = opts;
  }

  get maxLagBlocks(): number {
    return this.#opts.maxLagBlocks;
  }

  async send(req: UpstreamRequest, hints: RouteHints = NO_HINTS): Promise<UpstreamResponse> {
    const candidates = hints.only ? this.upstreams.filter(hints.only) : this.upstreams;
    if (candidates.length === 0) throw new UpstreamError(false, new Error('no upstream configured'));
    const order = rank(candidates, hints.needsHead ?? false, this.#opts.maxLagBlocks);
    let lastError: unknown;
    let i = 0;
    const q = this.#opts.hedgeQuantile;
    if (hints.idempotent && q !== undefined && order.length > 1 && !order[1]!.down) {
      const delay = order[0]!.latencyQuantile(q);
      if (delay !== undefined) {
        try {
          return await this.#hedged(order[0]!, order[1]!, req, delay);
        } catch (err) {
          if (req.signal?.aborted) throw err;
          lastError = err;
          i = 2;
        }
      }
    }
    for (; i < order.length; i++) {
      try {
        return await this.#attempt(order[i]!, req, undefined);
      } catch (err) {
        // Cancelled by the caller (shutdown): no next upstream, nobody's fault.
        if (req.signal?.aborted) throw err;
        lastError = err;
      }
    }
    throw lastError instanceof UpstreamError ? lastError : new UpstreamError(false, lastError);
  }

  /** One request to one upstream, bypassing selection: the probe's way to reach every node. */
  sendTo(up: Upstream, req: UpstreamRequest): Promise<UpstreamResponse> {
    return this.#attempt(up, req, undefined);
  }

  /** Sends to `a`; if it has not answered after `delayMs`, to `b` too; the first answer wins, the other is aborted. */
  #hedged(a: Upstream, b: Upstream, req: UpstreamRequest, delayMs: number): Promise<UpstreamResponse> {
    return new Promise((resolve, reject) => {
      let settled = false;
      let running = 0;
      let startedB = false;
      const controllers: AbortController[] = [];
      const launch = (up: Upstream) => {
        const ac = new AbortController();
        controllers.push(ac);
        running++;
        this.#attempt(up, req, ac.signal).then((res) => {
          if (settled) return void res.body.destroy();
          settled = true;
          clearTimeout(timer);
          for (const c of controllers) if (c !== ac) c.abort();
          resolve(res);
        }, (err: unknown) => {
          running--;
          if (settled) return;
          if (!startedB) {
            startedB = true;
            clearTimeout(timer);
            launch(b);
          } else if (running === 0) {
            settled = true;
            reject(err);
          }
        });
      };
      const timer = setTimeout(() => {
        if (startedB || settled) return;
        startedB = true;
        launch(b);
      }, delayMs);
      launch(a);
    });
  }

  async #attempt(up: Upstream, req: UpstreamRequest, hedge: AbortSignal | undefined): Promise<UpstreamResponse> {
    const started = performance.now();
    const signal = req.signal && hedge ? AbortSignal.any([req.signal, hedge]) : req.signal ?? hedge;
    let res: Dispatcher.ResponseData;
    const headers: Record<string, string> = req.contentType ? { 'content-type': req.contentType, accept: 'application/json' } : { accept: 'application/json' };
    if (up.authorization) headers.authorization = up.authorization;
    try {
      res = await up.pool.request({
        method: req.method as Dispatcher.HttpMethod,
        path: up.basePath + (req.path || (up.basePath ? '' : '/')),
        headers,
        body: req.body,
        signal,
      });
    } catch (err) {
      // The loser of a hedge, or a call cancelled at shutdown, was aborted by us: not the upstream's fault.
      if (req.signal?.aborted) throw err;
      const timeout = TIMEOUT_CODES.has((err as { code?: string }).code ?? '');
      if (!signal?.aborted) up.markFailed(timeout ? 'timeout' : 'connect', (err as { code?: string }).code ?? (err as Error).message);
      throw new UpstreamError(timeout, err);
    }
    up.latency?.observe((performance.now() - started) / 1000);
    // A provider's rate limit is its fault, not the client's: try another, and rank it down.
    const rpcError = req.rpcErrorsAre500 && res.statusCode === 500 && String(res.headers['content-type']).startsWith('application/json');
    if ((res.statusCode >= 500 && !rpcError) || res.statusCode === 429) {
      res.body.resume();
      up.markFailed(res.statusCode === 429 ? 'http_429' : 'http_5xx', `HTTP ${res.statusCode}`);
      throw new UpstreamError(false, new Error(`upstream answered ${res.statusCode}`));
    }
    up.ok(performance.now() - started);
    const ct = res.headers['content-type'];
    return { status: res.statusCode, contentType: Array.isArray(ct) ? ct[0] : ct, body: res.body, upstream: up };
  }

  snapshot(): UpstreamSnapshot[] {
    return this.upstreams.map((u) => u.snapshot(this.#opts.maxLagBlocks));
  }

  async close(): Promise<void> {
    await Promise.all(this.upstreams.map((u) => u.pool.close().catch(() => {})));
  }
}

/** Upstream sets by environment id, created on first use. */
export class UpstreamDirectory {
  readonly #sets = new Map<number, UpstreamSet>();
  readonly #opts: UpstreamSetOptions;
  readonly #maxLagFor: (envId: number) => number | undefined;
  readonly #observer: UpstreamObserver | undefined;
  /**
   * `maxLagFor`: a network's own lag tolerance (fast chains need more blocks), else the options'.
   * `observer`: where latency and failures are reported (the integrated `/metrics`).
   */
  constructor(opts: UpstreamSetOptions, maxLagFor: (envId: number) => number | undefined = () => undefined, observer?: UpstreamObserver) {
    this.#opts = opts;
    this.#maxLagFor = maxLagFor;
    this.#observer = observer;
  }
  for(envId: number, urls: readonly string[]): UpstreamSet {
    let set = this.#sets.get(envId);
    if (!set) {
      const o = this.#observer;
      set = new UpstreamSet(urls, { ...this.#opts, maxLagBlocks: this.#maxLagFor(envId) ?? this.#opts.maxLagBlocks },
        o?.metrics.enabled ? o.metrics : undefined, o?.nameOf(envId));
      this.#sets.set(envId, set);
    }
    return set;
  }
  /** Every environment's upstreams, by environment id: for `admin upstreams` and metrics. */
  snapshot(): Map<number, UpstreamSnapshot[]> {
    return new Map([...this.#sets].map(([id, set]) => [id, set.snapshot()]));
  }
  async close(): Promise<void> {
    await Promise.all([...this.#sets.values()].map((s) => s.close()));
  }
}
