import { Pool } from 'undici';
import { UpstreamHealth } from '../health.js';
import { upstreamLabel } from '../../metrics/index.js';
import type { GatewayMetrics, NetworkLabels } from '../metrics.js';

export type FailureReason = 'timeout' | 'connect' | 'http_5xx' | 'http_429';

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
