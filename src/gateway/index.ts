import type { Server } from 'node:http';
import type { Config } from '../config/index.js';
import { storeHealth, type Store } from '../store/index.js';
import { EndpointRegistry } from './registry.js';
import { UsageMeter } from './meter.js';
import { UpstreamDirectory } from './upstreams.js';
import { NodeProbe } from './probe.js';
import { ResponseCache, type ChainView, type SharedCacheTier } from './cache.js';
import { CallHandler } from './calls.js';
import { logsPolicies } from './logs.js';
import { registerUpstreamMetrics } from './upstream-metrics.js';
import { createGatewayServer } from './server.js';
import { Metrics } from '../metrics/index.js';
import { gatewayMetrics } from './metrics.js';
import { observeRequests, sampleAccessLog } from './observe.js';
import type { Logger } from '../log/index.js';
import { IpAllowlist } from '../util/ip.js';
import { WebSocketGateway } from './ws/server.js';
import type { WindowLimiter } from '../limits/index.js';

export { priceRpc, priceRest } from './credits.js';
export { RPC_ERRORS } from './errors.js';
export { RedisCacheTier, type RedisCacheOptions } from './cache-redis.js';
export type { EndpointRegistry, EndpointState } from './registry.js';
export type { UsageMeter } from './meter.js';
export type { UpstreamSnapshot } from './health.js';
export { UPSTREAM_STATE_FILE, type UpstreamStateFile } from './probe.js';
export { registerUpstreamMetrics } from './upstream-metrics.js';

export interface Gateway {
  server: Server;
  registry: EndpointRegistry;
  meter: UsageMeter;
  probe: NodeProbe;
  upstreams: UpstreamDirectory;
  cache: ResponseCache | undefined;
  /** Head and finalized height per environment id, from the probe. */
  chain: Map<number, ChainView>;
  websockets: WebSocketGateway;
  /** Closes client WebSockets (1001): upgraded sockets would otherwise hold the listener's close open. */
  closeSockets(): Promise<void>;
  /** Stops background work and flushes usage; call after the server stopped accepting. */
  stop(): Promise<void>;
}

export async function createGateway(
  store: Store, config: Config, log: (line: string) => void, metrics: Metrics = new Metrics({ enabled: false }), logger?: Logger,
  opts: { sharedRps?: WindowLimiter; sharedCache?: SharedCacheTier } = {},
): Promise<Gateway> {
  const registry = new EndpointRegistry(store, config);
  await registry.start(config.gateway.registry_reload_ms);
  const meter = new UsageMeter(store, log);
  meter.start(config.gateway.usage_flush_ms);
  meter.observe(metrics);
  const gm = gatewayMetrics(metrics);
  const nameOf = (envId: number) => {
    const env = store.catalog.environment(envId);
    return env ? `${env.network.slug}-${env.slug}` : 'unknown';
  };
  const g = config.gateway;
  const upstreams = new UpstreamDirectory(
    { timeoutMs: g.upstream_timeout_ms, maxLagBlocks: g.max_lag_blocks, hedgeQuantile: g.hedge_quantile ?? undefined },
    (envId) => config.networks.find((n) => n.slug === store.catalog.environment(envId)?.network.slug)?.max_lag_blocks,
    { metrics: gm, nameOf },
  );
  // The probe writes the chain views (head, finalized) that the cache and the getLogs guard read.
  const chain = new Map<number, ChainView>();
  const cache = g.cache_max_bytes > 0 ? new ResponseCache(g.cache_max_bytes, opts.sharedCache) : undefined;
  const probe = new NodeProbe(store, upstreams, log, { cache, views: chain });
  probe.start(g.probe_interval_ms);
  // Selection state, chain heights and the cache are served on the same /metrics as the rest.
  if (metrics.enabled) registerUpstreamMetrics(metrics.registry, { upstreams, cache, chain, catalog: store.catalog });
  const calls = new CallHandler({ upstreams, cache, views: chain, logsPolicy: logsPolicies(config), maxResponseBytes: g.max_logs_response_bytes });
  const server = createGatewayServer({
    config, registry, meter, upstreams, calls, log, metrics, sharedRps: opts.sharedRps, storeHealth: storeHealth(() => store.ping()),
  });
  if (metrics.enabled) observeRequests(server, registry, gm);
  if (logger) sampleAccessLog(server, registry, logger, config.gateway.access_log_sample, new IpAllowlist(config.gateway.trusted_proxies));
  const websockets = new WebSocketGateway({ config, registry, meter, upstreams, metrics: gm, sharedRps: opts.sharedRps, calls, log, accessLog: logger?.child({ component: 'gateway' }) });
  websockets.attach(server);
  return {
    server, registry, meter, probe, upstreams, cache, chain, websockets,
    closeSockets: () => websockets.close(),
    async stop() {
      await websockets.close();
      registry.stop();
      await probe.stop();
      await meter.stop();
      await upstreams.close();
    },
  };
}
