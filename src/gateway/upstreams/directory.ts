import type { Config } from '../../config/index.js';
import type { UpstreamSnapshot } from '../health.js';
import type { GatewayMetrics, NetworkLabels } from '../metrics.js';
import { UpstreamSet, type UpstreamSetOptions } from './set.js';
import { traitsOf } from '../../chains/traits.js';

/** Where an upstream set reports latency and failures; labels are fixed per upstream. */
export interface UpstreamObserver {
  metrics: GatewayMetrics;
  /** The `network` and `env` labels of an environment id. */
  labelsOf(envId: number): NetworkLabels;
}

/** What a network configures for its upstream sets, over the gateway-wide options. */
export type NetworkPolicy = Partial<Pick<UpstreamSetOptions, 'maxLagBlocks' | 'errorClasses' | 'familyErrorClasses' | 'upstreamMethods'>>;

/** The gateway-wide options of upstream sets, from config. */
export function upstreamOptions(g: Config['gateway'], log?: (line: string) => void): UpstreamSetOptions {
  return {
    timeoutMs: g.upstream_timeout_ms, maxLagBlocks: g.max_lag_blocks, hedgeQuantile: g.hedge_quantile ?? undefined,
    deadlineMs: g.upstream_deadline_ms ?? undefined, unsupportedMethodTtlMs: g.unsupported_method_ttl_ms, log,
  };
}

/**
 * A network's policy from its config (`max_lag_blocks`, `error_classes`, `upstream_methods`) and
 * its family's error classes (`gateway.errorRules` of its traits).
 */
export function networkPolicy(network: Config['networks'][number] | undefined, family: string | undefined): NetworkPolicy | undefined {
  const familyErrorClasses = family === undefined ? undefined : traitsOf(family).gateway.errorRules;
  const own = familyErrorClasses && familyErrorClasses.length > 0 ? { familyErrorClasses } : undefined;
  if (!network) return own;
  return { maxLagBlocks: network.max_lag_blocks, errorClasses: network.error_classes, upstreamMethods: network.upstream_methods, ...own };
}

/**
 * Upstream sets by environment id, created on first use. A config reload (`reconfigure`) keeps
 * each set whose URLs and settings are unchanged, with what it learnt (health, latency, methods);
 * a set whose environment changed is replaced at its next use. A replaced set is not closed: a
 * call still running on it (or a subscription feed polling through it) finishes there, and its
 * idle connections end on their own.
 */
export class UpstreamDirectory {
  readonly #sets = new Map<number, { set: UpstreamSet; key: string; urls: readonly string[]; generation: number }>();
  /** Bumped by each reconfigure: a set made before is checked against the new settings once. */
  #generation = 0;
  #opts: UpstreamSetOptions;
  #policyFor: (envId: number) => NetworkPolicy | undefined;
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

  /** New settings (a config reload): sets are checked against them at their next use. */
  reconfigure(opts: UpstreamSetOptions, policyFor: (envId: number) => NetworkPolicy | undefined = this.#policyFor): void {
    this.#opts = opts;
    this.#policyFor = policyFor;
    this.#generation++;
  }

  for(envId: number, urls: readonly string[]): UpstreamSet {
    const known = this.#sets.get(envId);
    // The hot path: the same environment object since the last reconfigure.
    if (known !== undefined && known.urls === urls && known.generation === this.#generation) return known.set;
    const p = this.#policyFor(envId);
    const opts: UpstreamSetOptions = {
      ...this.#opts,
      maxLagBlocks: p?.maxLagBlocks ?? this.#opts.maxLagBlocks,
      errorClasses: p?.errorClasses ?? this.#opts.errorClasses,
      familyErrorClasses: p?.familyErrorClasses,
      upstreamMethods: p?.upstreamMethods ?? this.#opts.upstreamMethods,
    };
    const key = setKey(urls, opts);
    if (known?.key === key) {
      known.urls = urls;
      known.generation = this.#generation;
      return known.set;
    }
    const o = this.#observer;
    const set = new UpstreamSet(urls, opts, o?.metrics.enabled ? o.metrics : undefined, o?.labelsOf(envId));
    this.#sets.set(envId, { set, key, urls, generation: this.#generation });
    return set;
  }
  /** Every environment's upstreams, by environment id: for `admin upstreams` and metrics. */
  snapshot(): Map<number, UpstreamSnapshot[]> {
    return new Map([...this.#sets].map(([id, { set }]) => [id, set.snapshot()]));
  }
  async close(): Promise<void> {
    await Promise.all([...this.#sets.values()].map(({ set }) => set.close()));
  }
}

/** What a set is built from (the log function aside): equal keys, the same set. */
function setKey(urls: readonly string[], o: UpstreamSetOptions): string {
  return JSON.stringify([urls, o.timeoutMs, o.maxLagBlocks, o.hedgeQuantile ?? null, o.deadlineMs ?? null, o.unsupportedMethodTtlMs ?? null,
    o.errorClasses ?? null, o.familyErrorClasses ?? null, o.upstreamMethods ?? null]);
}
