import type { Server } from 'node:http';
import type { Config } from '../config/index.js';
import { storeHealth, type Store } from '../store/index.js';
import { EndpointRegistry } from './registry.js';
import { UsageMeter } from './meter.js';
import { UpstreamDirectory } from './upstreams.js';
import { NodeProbe } from './probe.js';
import { createGatewayServer } from './server.js';
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
  /** Stops background work and flushes usage; call after the server stopped accepting. */
  stop(): Promise<void>;
}

export async function createGateway(store: Store, config: Config, log: (line: string) => void, opts: { sharedRps?: WindowLimiter } = {}): Promise<Gateway> {
  const registry = new EndpointRegistry(store, config);
  await registry.start(config.gateway.registry_reload_ms);
  const meter = new UsageMeter(store, log);
  meter.start();
  const upstreams = new UpstreamDirectory(config.gateway.upstream_timeout_ms);
  const probe = new NodeProbe(store, upstreams, log);
  probe.start(config.gateway.probe_interval_ms);
  const server = createGatewayServer({ config, registry, meter, upstreams, log, sharedRps: opts.sharedRps, storeHealth: storeHealth(() => store.ping()) });
  return {
    server, registry, meter, probe,
    async stop() {
      registry.stop();
      await probe.stop();
      await meter.stop();
      await upstreams.close();
    },
  };
}
