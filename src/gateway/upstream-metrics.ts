import { Counter, Gauge, type Registry } from 'prom-client';
import type { Catalog } from '../store/index.js';
import type { CacheStats, ChainView } from './cache.js';
import type { UpstreamSnapshot } from './health.js';
import { upstreamLabel } from '../metrics/index.js';

/**
 * Per-upstream and cache metrics, read from the gateway's live state when scraped (nothing is
 * counted twice, nothing runs between scrapes). Labels: `network`, `env` and the upstream's
 * scheme://host:port like every upstream metric (src/metrics) — never a path or query, which
 * may hold a provider key that the masking of `admin upstreams` does not recognise.
 */
export function registerUpstreamMetrics(registry: Registry, deps: {
  upstreams: { snapshot(): Map<number, UpstreamSnapshot[]> }; cache: { snapshot(): CacheStats | undefined } | undefined; chain: Map<number, ChainView>; catalog: Pick<Catalog, 'environment'>;
}): void {
  const labelsOf = (envId: number) => {
    const env = deps.catalog.environment(envId);
    return { network: env?.network.slug ?? String(envId), env: env?.slug ?? '' };
  };
  // One set per registry: a second gateway on the same registry (tests) keeps the first's.
  if (registry.getSingleMetric('rpcctl_upstream_up')) return;
  const perUpstream = (name: string, help: string, value: (u: UpstreamSnapshot) => number | null) =>
    new Gauge({
      name, help, labelNames: ['network', 'env', 'upstream'], registers: [registry],
      collect() {
        this.reset();
        for (const [envId, ups] of deps.upstreams.snapshot()) {
          const l = labelsOf(envId);
          for (const u of ups) {
            const v = value(u);
            if (v !== null) this.set({ ...l, upstream: upstreamLabel(u.url) }, v);
          }
        }
      },
    });
  perUpstream('rpcctl_upstream_up', '1 when the upstream is in the rotation (healthy or lagging), 0 when backed off after failures', (u) => (u.status === 'down' ? 0 : 1));
  perUpstream('rpcctl_upstream_lag_blocks', 'Blocks the upstream is behind the best head any upstream of its environment reported', (u) => u.lag);
  perUpstream('rpcctl_upstream_latency_ewma_seconds', 'EWMA of the upstream\'s time to answer headers, in seconds', (u) => (u.latency_ms === null ? null : u.latency_ms / 1000));
  perUpstream('rpcctl_upstream_error_ratio', 'EWMA of the upstream\'s failures (0..1)', (u) => u.error_rate);
  // Running totals kept by the selection state: counters (a worker that restarts starts again from 0, as a process would).
  const totalPerUpstream = (name: string, help: string, value: (u: UpstreamSnapshot) => number) =>
    new Counter({
      name, help, labelNames: ['network', 'env', 'upstream'], registers: [registry],
      collect() {
        this.reset();
        for (const [envId, ups] of deps.upstreams.snapshot()) {
          const l = labelsOf(envId);
          for (const u of ups) this.inc({ ...l, upstream: upstreamLabel(u.url) }, value(u));
        }
      },
    });
  totalPerUpstream('rpcctl_upstream_selection_requests_total', 'Requests sent to the upstream, probes included, as the selection state counts them', (u) => u.requests);
  totalPerUpstream('rpcctl_upstream_selection_failures_total', 'Failed requests to the upstream, probes included, as the selection state counts them', (u) => u.failures);

  const perEnv = (name: string, help: string, value: (v: ChainView) => number) => new Gauge({
    name, help, labelNames: ['network', 'env'], registers: [registry],
    collect() {
      this.reset();
      for (const [envId, view] of deps.chain) this.set(labelsOf(envId), value(view));
    },
  });
  perEnv('rpcctl_chain_head', 'Best head any upstream of the environment reported', (v) => v.head);
  perEnv('rpcctl_chain_finalized', 'Finalized height the cache trusts', (v) => v.finalized);

  const cacheGauge = (name: string, help: string, key: 'entries' | 'bytes') => new Gauge({
    name, help, registers: [registry],
    collect() {
      const s = deps.cache?.snapshot();
      this.set(s ? s[key] : 0);
    },
  });
  const cacheCounter = (name: string, help: string, key: 'hits' | 'misses' | 'dropped') => new Counter({
    name, help, registers: [registry],
    collect() {
      const s = deps.cache?.snapshot();
      this.reset();
      this.inc(s ? s[key] : 0);
    },
  });
  cacheCounter('rpcctl_cache_hits_total', 'Calls answered from the finality cache', 'hits');
  cacheCounter('rpcctl_cache_misses_total', 'Cacheable calls the cache did not hold', 'misses');
  cacheGauge('rpcctl_cache_entries', 'Answers held by the finality cache', 'entries');
  cacheGauge('rpcctl_cache_bytes', 'Approximate bytes held by the finality cache', 'bytes');
  cacheCounter('rpcctl_cache_reorg_dropped_total', 'Cached answers dropped because a reorg replaced their blocks', 'dropped');
}
