import type { Config } from '../../config/index.js';
import type { UpstreamSnapshot } from '../health.js';
import type { GatewayMetrics, NetworkLabels } from '../metrics.js';
import { UpstreamSet, type UpstreamSetOptions } from './set.js';

/** Where an upstream set reports latency and failures; labels are fixed per upstream. */
export interface UpstreamObserver {
  metrics: GatewayMetrics;
  /** The `network` and `env` labels of an environment id. */
  labelsOf(envId: number): NetworkLabels;
}

/** What a network configures for its upstream sets, over the gateway-wide options. */
export type NetworkPolicy = Partial<Pick<UpstreamSetOptions, 'maxLagBlocks' | 'errorClasses' | 'upstreamMethods'>>;

/** The gateway-wide options of upstream sets, from config. */
export function upstreamOptions(g: Config['gateway'], log?: (line: string) => void): UpstreamSetOptions {
  return {
    timeoutMs: g.upstream_timeout_ms, maxLagBlocks: g.max_lag_blocks, hedgeQuantile: g.hedge_quantile ?? undefined,
    deadlineMs: g.upstream_deadline_ms ?? undefined, unsupportedMethodTtlMs: g.unsupported_method_ttl_ms, log,
  };
}

/** A network's policy from its config (`max_lag_blocks`, `error_classes`, `upstream_methods`). */
export function networkPolicy(network: Config['networks'][number] | undefined): NetworkPolicy | undefined {
  if (!network) return undefined;
  return { maxLagBlocks: network.max_lag_blocks, errorClasses: network.error_classes, upstreamMethods: network.upstream_methods };
}

/** Upstream sets by environment id, created on first use. */
export class UpstreamDirectory {
  readonly #sets = new Map<number, UpstreamSet>();
  readonly #opts: UpstreamSetOptions;
  readonly #policyFor: (envId: number) => NetworkPolicy | undefined;
  readonly #observer: UpstreamObserver | undefined;
  /**
   * `policyFor`: a network's own settings (fast chains need more lag blocks; its nodes' error
   * dialects and methods), else the options'.
   * `observer`: where latency and failures are reported (the integrated `/metrics`).
   */
  constructor(opts: UpstreamSetOptions, policyFor: (envId: number) => NetworkPolicy | undefined = () => undefined, observer?: UpstreamObserver) {
    this.#opts = opts;
    this.#policyFor = policyFor;
    this.#observer = observer;
  }
  for(envId: number, urls: readonly string[]): UpstreamSet {
    let set = this.#sets.get(envId);
    if (!set) {
      const o = this.#observer;
      const p = this.#policyFor(envId);
      set = new UpstreamSet(urls, {
        ...this.#opts,
        maxLagBlocks: p?.maxLagBlocks ?? this.#opts.maxLagBlocks,
        errorClasses: p?.errorClasses ?? this.#opts.errorClasses,
        upstreamMethods: p?.upstreamMethods ?? this.#opts.upstreamMethods,
      }, o?.metrics.enabled ? o.metrics : undefined, o?.labelsOf(envId));
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
