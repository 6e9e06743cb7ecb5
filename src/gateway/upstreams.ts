import { Readable } from 'node:stream';
import { addAbortListener } from 'node:events';
import type { IncomingHttpHeaders } from 'node:http';
import { Pool, type Dispatcher } from 'undici';
import { rank, UpstreamHealth, type UpstreamSnapshot } from './health.js';
import { upstreamLabel } from '../metrics/index.js';
import type { GatewayMetrics, NetworkLabels } from './metrics.js';
import { RpcctlError } from '../util/errors.js';

export class UpstreamError extends RpcctlError {
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
  /** The upstream's declared Content-Length, if any: how the relay knows an answer is large before reading it. */
  contentLength: number | undefined;
  body: UpstreamBody;
  /** The upstream that answered. */
  upstream: Upstream;
  /**
   * The relay's way around the stream: calls back once with the whole body when it is at most
   * `BUFFERED_BYTES`, with the error that cut it, or with neither when it turned out larger
   * (then read on from `body`, which starts with what came so far). False: read `body`.
   */
  whole(done: (err: Error | undefined, body: Buffer | undefined) => void): boolean;
  /** Cancels the upstream's answer (the client went away). */
  cancel(): void;
}

/** An answer's body as a stream, for the callers that read it so (the cache, probes, WebSocket). */
export class UpstreamBody extends Readable {
  readonly #resume: () => void;
  readonly #abort: (err: Error) => void;
  constructor(resume: () => void, abort: (err: Error) => void) {
    super();
    this.#resume = resume;
    this.#abort = abort;
  }
  override _read(): void {
    this.#resume();
  }
  override _destroy(err: Error | null, cb: (err?: Error | null) => void): void {
    if (!this.readableEnded) this.#abort(err ?? new Error('upstream answer cancelled'));
    cb(err);
  }
  async text(): Promise<string> {
    const parts: Buffer[] = [];
    for await (const chunk of this) parts.push(chunk as Buffer);
    return Buffer.concat(parts).toString('utf8');
  }
}

/**
 * Upstream answers up to this size are gathered and passed on whole (relay.ts: one `res.end(buf)`
 * with a Content-Length); larger ones are streamed. Most JSON-RPC answers are a few hundred
 * bytes, and at this size the streaming machinery's fixed cost no longer matters next to the copying.
 */
export const BUFFERED_BYTES = 64 * 1024;

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
  /** The `network` and `env` labels of an environment id. */
  labelsOf(envId: number): NetworkLabels;
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
  constructor(url: string, timeoutMs: number, metrics?: GatewayMetrics, network?: NetworkLabels) {
    super(url);
    if (metrics && network) {
      const labels = { ...network, upstream: upstreamLabel(url) };
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

  constructor(urls: readonly string[], opts: UpstreamSetOptions, metrics?: GatewayMetrics, network?: NetworkLabels) {
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

  #attempt(up: Upstream, req: UpstreamRequest, hedge: AbortSignal | undefined): Promise<UpstreamResponse> {
    const signal = req.signal && hedge ? AbortSignal.any([req.signal, hedge]) : req.signal ?? hedge;
    const headers: Record<string, string> = req.contentType ? { 'content-type': req.contentType, accept: 'application/json' } : { accept: 'application/json' };
    if (up.authorization) headers.authorization = up.authorization;
    return new Promise((resolve, reject) => {
      // Through `dispatch` rather than `request`: most answers are a few hundred bytes, and
      // `request` builds a Readable (and an async scope) for each; see Answer.
      const handler = new Answer(up, req, signal, resolve, reject);
      up.pool.dispatch({
        method: req.method as Dispatcher.HttpMethod,
        path: up.basePath + (req.path || (up.basePath ? '' : '/')),
        headers,
        body: req.body,
      }, handler);
    });
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
        o?.metrics.enabled ? o.metrics : undefined, o?.labelsOf(envId));
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

const CONTENT_TYPE = 'content-type';
const CONTENT_LENGTH = 'content-length';
const EMPTY: Buffer[] = [];
const EMPTY_BODY = Buffer.alloc(0);

/**
 * One upstream call, as undici's dispatch handler and as the UpstreamResponse handed on at the
 * head (as `pool.request` did): status and failures judged there, then the body gathered in
 * memory up to BUFFERED_BYTES for `whole`, or turned into a stream (`body`) when larger or
 * asked for. Errors and cancellation reach whichever of the two is in use.
 */
class Answer implements UpstreamResponse, Dispatcher.DispatchHandler {
  status = 0;
  contentType: string | undefined;
  contentLength: number | undefined;
  readonly upstream: Upstream;
  readonly #req: UpstreamRequest;
  readonly #signal: AbortSignal | undefined;
  readonly #started = performance.now();
  #resolve: ((res: UpstreamResponse) => void) | undefined;
  readonly #reject: (err: unknown) => void;
  #controller: Dispatcher.DispatchController | undefined;
  #unlisten: Disposable | undefined;
  /** After the head: ignore the body (an answer refused as a failure). */
  #discard = false;
  #chunks: Buffer[] = EMPTY;
  #size = 0;
  #ended = false;
  #error: Error | undefined;
  #stream: UpstreamBody | undefined;
  #done: ((err: Error | undefined, body: Buffer | undefined) => void) | undefined;

  constructor(up: Upstream, req: UpstreamRequest, signal: AbortSignal | undefined, resolve: (res: UpstreamResponse) => void, reject: (err: unknown) => void) {
    this.upstream = up;
    this.#req = req;
    this.#signal = signal;
    this.#resolve = resolve;
    this.#reject = reject;
    if (signal) this.#unlisten = addAbortListener(signal, () => this.cancel(signal.reason as Error ?? new Error('aborted')));
  }

  get body(): UpstreamBody {
    if (!this.#stream) {
      const s = new UpstreamBody(() => this.#controller?.resume(), (err) => this.cancel(err));
      this.#stream = s;
      for (const c of this.#chunks) s.push(c);
      this.#chunks = EMPTY;
      if (this.#error) s.destroy(this.#error);
      else if (this.#ended) s.push(null);
    }
    return this.#stream;
  }

  whole(done: (err: Error | undefined, body: Buffer | undefined) => void): boolean {
    if (this.#stream) return false;
    if (this.#ended || this.#error) done(this.#error, this.#error ? undefined : this.#joined());
    else this.#done = done;
    return true;
  }

  cancel(reason: Error = new Error('upstream answer cancelled')): void {
    if (this.#ended || this.#error) return;
    if (this.#controller) this.#controller.abort(reason);
    else this.#error = reason;
  }

  #joined(): Buffer {
    const c = this.#chunks;
    this.#chunks = EMPTY;
    return c.length === 0 ? EMPTY_BODY : c.length === 1 ? c[0]! : Buffer.concat(c, this.#size);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    if (this.#error) return controller.abort(this.#error);
    this.#controller = controller;
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    if (statusCode < 200) return;
    const ctv = headers[CONTENT_TYPE];
    const ct = Array.isArray(ctv) ? ctv[0] : ctv;
    const cl = headers[CONTENT_LENGTH];
    const up = this.upstream;
    up.latency?.observe((performance.now() - this.#started) / 1000);
    const resolve = this.#resolve!;
    this.#resolve = undefined;
    // A provider's rate limit is its fault, not the client's: try another, and rank it down.
    const rpcError = this.#req.rpcErrorsAre500 && statusCode === 500 && String(ct).startsWith('application/json');
    if ((statusCode >= 500 && !rpcError) || statusCode === 429) {
      this.#discard = true;
      this.#unlisten?.[Symbol.dispose]();
      up.markFailed(statusCode === 429 ? 'http_429' : 'http_5xx', `HTTP ${statusCode}`);
      this.#reject(new UpstreamError(false, new Error(`upstream answered ${statusCode}`)));
      return;
    }
    up.ok(performance.now() - this.#started);
    this.status = statusCode;
    this.contentType = ct;
    this.contentLength = typeof cl === 'string' ? Number(cl) : undefined;
    this.#chunks = [];
    resolve(this);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.#discard) return;
    if (this.#stream) {
      if (!this.#stream.push(chunk)) controller.pause();
      return;
    }
    this.#size += chunk.length;
    this.#chunks.push(chunk);
    if (this.#size <= BUFFERED_BYTES) return;
    // Larger than a whole answer is kept: a stream from here on, with backpressure.
    const done = this.#done;
    this.#done = undefined;
    const s = this.body;
    done?.(undefined, undefined);
    if (s.readableLength >= s.readableHighWaterMark) controller.pause();
  }

  onResponseEnd(): void {
    this.#ended = true;
    this.#unlisten?.[Symbol.dispose]();
    if (this.#discard) return;
    if (this.#stream) return void this.#stream.push(null);
    const done = this.#done;
    this.#done = undefined;
    done?.(undefined, this.#joined());
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    this.#unlisten?.[Symbol.dispose]();
    if (this.#resolve) {
      this.#resolve = undefined;
      this.#error = err;
      // The loser of a hedge, or a call cancelled at shutdown, was aborted by us: not the upstream's fault.
      if (this.#req.signal?.aborted) return this.#reject(err);
      const code = (err as { code?: string }).code;
      const timeout = TIMEOUT_CODES.has(code ?? '');
      if (!this.#signal?.aborted) this.upstream.markFailed(timeout ? 'timeout' : 'connect', code ?? err.message);
      return this.#reject(new UpstreamError(timeout, err));
    }
    if (this.#discard || this.#ended) return;
    this.#error = err;
    this.#chunks = EMPTY;
    if (this.#stream) return void this.#stream.destroy(err);
    const done = this.#done;
    this.#done = undefined;
    done?.(err, undefined);
  }
}
