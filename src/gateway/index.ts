import type { Server } from 'node:http';
import type { Config } from '../config/index.js';
import type { Store } from '../store/index.js';
import { EndpointRegistry } from './registry.js';
import { UsageMeter } from './meter.js';
import { UpstreamDirectory } from './upstreams.js';
import { NodeProbe } from './probe.js';
import { ResponseCache, type ChainView } from './cache.js';
import { CallHandler } from './calls.js';
import { logsPolicies } from './logs.js';
import { createGatewayServer } from './server.js';

export { priceRpc, priceRest } from './credits.js';
export { RPC_ERRORS } from './errors.js';
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
  /** Stops background work and flushes usage; call after the server stopped accepting. */
  stop(): Promise<void>;
}

export async function createGateway(store: Store, config: Config, log: (line: string) => void): Promise<Gateway> {
  const registry = new EndpointRegistry(store, config);
  await registry.start(config.gateway.registry_reload_ms);
  const meter = new UsageMeter(store, log);
  meter.start();
  const g = config.gateway;
  const upstreams = new UpstreamDirectory(
    { timeoutMs: g.upstream_timeout_ms, maxLagBlocks: g.max_lag_blocks, hedgeQuantile: g.hedge_quantile ?? undefined },
    (envId) => config.networks.find((n) => n.slug === store.catalog.environment(envId)?.network.slug)?.max_lag_blocks,
  );
  // The probe writes the chain views (head, finalized) that the cache and the getLogs guard read.
  const views = new Map<number, ChainView>();
  const cache = g.cache_max_bytes > 0 ? new ResponseCache(g.cache_max_bytes) : undefined;
  const probe = new NodeProbe(store, upstreams, log, { cache, views });
  probe.start(g.probe_interval_ms);
  const calls = new CallHandler({ upstreams, cache, views, logsPolicy: logsPolicies(config), maxResponseBytes: g.max_logs_response_bytes });
  const server = createGatewayServer({ config, registry, meter, upstreams, calls, log });
  return {
    server, registry, meter, probe, upstreams, cache, chain: views,
    async stop() {
      registry.stop();
      await probe.stop();
      await meter.stop();
      await upstreams.close();
    },
  };
}
