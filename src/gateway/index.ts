import type { Server } from 'node:http';
import type { Config } from '../config/index.js';
import { storeHealth, type Store } from '../store/index.js';
import { EndpointRegistry } from './registry.js';
import { UsageMeter } from './meter.js';
import { UpstreamDirectory } from './upstreams.js';
import { NodeProbe } from './probe.js';
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
export type { EndpointRegistry, EndpointState } from './registry.js';
export type { UsageMeter } from './meter.js';

export interface Gateway {
  server: Server;
  registry: EndpointRegistry;
  meter: UsageMeter;
  probe: NodeProbe;
  websockets: WebSocketGateway;
  /** Closes client WebSockets (1001): upgraded sockets would otherwise hold the listener's close open. */
  closeSockets(): Promise<void>;
  /** Stops background work and flushes usage; call after the server stopped accepting. */
  stop(): Promise<void>;
}

export async function createGateway(
  store: Store, config: Config, log: (line: string) => void, metrics: Metrics = new Metrics({ enabled: false }), logger?: Logger,
  opts: { sharedRps?: WindowLimiter } = {},
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
  const upstreams = new UpstreamDirectory(config.gateway.upstream_timeout_ms, { metrics: gm, nameOf });
  const probe = new NodeProbe(store, upstreams, log);
  probe.start(config.gateway.probe_interval_ms);
  const server = createGatewayServer({ config, registry, meter, upstreams, log, metrics, sharedRps: opts.sharedRps, storeHealth: storeHealth(() => store.ping()) });
  if (metrics.enabled) observeRequests(server, registry, gm);
  if (logger) sampleAccessLog(server, registry, logger, config.gateway.access_log_sample, new IpAllowlist(config.gateway.trusted_proxies));
  const websockets = new WebSocketGateway({ config, registry, meter, upstreams, metrics: gm, sharedRps: opts.sharedRps, log, accessLog: logger?.child({ component: 'gateway' }) });
  websockets.attach(server);
  return {
    server, registry, meter, probe, websockets,
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
