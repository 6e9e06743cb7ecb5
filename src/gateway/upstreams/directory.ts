import type { UpstreamSnapshot } from '../health.js';
import type { GatewayMetrics, NetworkLabels } from '../metrics.js';
import { UpstreamSet, type UpstreamSetOptions } from './set.js';

/** Where an upstream set reports latency and failures; labels are fixed per upstream. */
export interface UpstreamObserver {
  metrics: GatewayMetrics;
  /** The `network` and `env` labels of an environment id. */
  labelsOf(envId: number): NetworkLabels;
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
