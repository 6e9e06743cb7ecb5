import { Pool } from 'undici';
import { UpstreamHealth } from '../health.js';
import { upstreamLabel } from '../../metrics/index.js';
import type { GatewayMetrics, NetworkLabels } from '../metrics.js';
import { MethodRouting, type MethodRules } from './methods.js';

/** `rpc_error`: a JSON-RPC error the classification (rpc-errors.ts) puts on the node. */
export type FailureReason = 'timeout' | 'connect' | 'http_5xx' | 'http_429' | 'rpc_error';

/** One upstream node with its own keep-alive pool and health. */
export class Upstream extends UpstreamHealth {
  readonly pool: Pool;
  readonly basePath: string;
  /** From `user:password@` in the URL (Bitcoin Core's rpcauth); sent on every request. */
  readonly authorization: string | undefined;
  readonly latency: { observe(seconds: number): void } | undefined;
  readonly timeoutMs: number;
  /** The methods it serves (configured, and learnt from "method not found" answers). */
  readonly methods: MethodRouting;
  /** When a failed client call was last logged, and how many since (UpstreamSet's rate limit). */
  failureLoggedAt = 0;
  failuresUnlogged = 0;
  /** scheme://host:port: how spans name it (the path may hold a provider key). */
  readonly origin: string;
  readonly #failed: ((reason: FailureReason) => void) | undefined;
  readonly #skipped: (() => void) | undefined;
  constructor(url: string, timeoutMs: number, metrics?: GatewayMetrics, network?: NetworkLabels, methods?: MethodRules) {
    super(url);
    this.methods = new MethodRouting(methods);
    this.timeoutMs = timeoutMs;
    if (metrics && network) {
      const labels = { ...network, upstream: upstreamLabel(url) };
      this.latency = metrics.upstreamLatency.labels(labels);
      this.#failed = (reason) => metrics.upstreamFailures.inc({ ...labels, reason });
      this.#skipped = () => metrics.upstreamMethodSkips.inc(labels);
    }
    const u = new URL(url);
    this.origin = u.origin;
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

  /** Counts a failure for selection (health.ts) and, labelled by kind, in the metrics; `byClient` as in `failed`. */
  markFailed(reason: FailureReason, detail: string, byClient = true): void {
    this.#failed?.(reason);
    this.failed(detail, byClient);
  }

  /** It answered "method not found" for `method`: skipped for it for `ttlMs` (counted; the set logs it). */
  skipMethod(method: string, ttlMs: number): void {
    this.#skipped?.();
    this.methods.learnUnsupported(method, ttlMs);
  }
}
