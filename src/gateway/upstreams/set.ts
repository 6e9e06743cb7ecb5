import { rank, type UpstreamSnapshot } from '../health.js';
import type { GatewayMetrics, NetworkLabels } from '../metrics.js';
import { UpstreamError, type RouteHints, type UpstreamRequest, type UpstreamResponse } from './call.js';
import { dispatchTo } from './call-handler.js';
import { hedged } from './hedge.js';
import { Upstream } from './upstream.js';

export interface UpstreamSetOptions {
  timeoutMs: number;
  /** Blocks an upstream may lag behind the best head and still serve calls that read the head. */
  maxLagBlocks: number;
  /** Hedge idempotent reads after this latency quantile of the chosen upstream (0..1); undefined: never. */
  hedgeQuantile: number | undefined;
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
          return await hedged(order[0]!, order[1]!, req, delay);
        } catch (err) {
          if (req.signal?.aborted) throw err;
          lastError = err;
          i = 2;
        }
      }
    }
    for (; i < order.length; i++) {
      try {
        return await dispatchTo(order[i]!, req, undefined);
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
    return dispatchTo(up, req, undefined);
  }

  snapshot(): UpstreamSnapshot[] {
    return this.upstreams.map((u) => u.snapshot(this.#opts.maxLagBlocks));
  }

  async close(): Promise<void> {
    await Promise.all(this.upstreams.map((u) => u.pool.close().catch(() => {})));
  }
}
