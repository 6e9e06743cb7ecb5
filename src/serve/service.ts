import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { defaultDataDir, findConfigFile, loadConfig, type Config } from '../config/index.js';
import { Store } from '../store/index.js';
import { createApiServer } from '../api/index.js';
import { createGateway, type Gateway } from '../gateway/index.js';
import { startAddressWatch, type AddressWatch, type AddressWatchOptions } from '../watch/service.js';
import { applyOverrides, type ServeOverrides } from './overrides.js';

export interface ServiceOptions {
  configFile?: string;
  dataDir?: string;
  env?: NodeJS.ProcessEnv;
  log?: (line: string) => void;
  /** Address Watch tuning (scanner poll interval, delivery worker limits); tests and benches use it. */
  watch?: Pick<AddressWatchOptions, 'pollMs' | 'delivery'>;
  /** `rpcctl serve` flags: --host, --port, --gateway-port, --dev. */
  overrides?: ServeOverrides;
}

export interface RunningService {
  config: Config;
  store: Store;
  dataDir: string;
  apiUrl: string;
  gatewayUrl: string;
  gateway: Gateway;
  addressWatch: AddressWatch;
  stop(): Promise<void>;
}

/** Starts every part of the service in this process and resolves once all are listening. */
export async function startService(opts: ServiceOptions = {}): Promise<RunningService> {
  const env = opts.env ?? process.env;
  const log = opts.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const dataDir = opts.dataDir ?? defaultDataDir(env);
  const config = applyOverrides(loadConfig(findConfigFile(dataDir, opts.configFile)), opts.overrides ?? {});
  const store = await Store.open({ dataDir, config, syncCatalog: 'always', env });

  let gateway: Gateway | undefined;
  let addressWatch: AddressWatch | undefined;
  let apiServer: Server | undefined;
  let gatewayServer: Server | undefined;
  try {
    gateway = await createGateway(store, config, log);
    addressWatch = await startAddressWatch({ store, config, log, ...opts.watch });
    const gw = gateway;
    const api = createApiServer({
      store, config, log,
      routes: [...addressWatch.routes],
      // Pause and allowlist changes reach the gateway before the API answers.
      onEndpointChanged: (id) => gw.registry.refresh(id),
    });
    apiServer = await listen(api.server, config.api.port, config.api.host, 'api');
    gatewayServer = await listen(gateway.server, config.gateway.port, config.gateway.host, 'gateway');
  } catch (err) {
    await Promise.all([closeServer(apiServer), closeServer(gatewayServer)]);
    await addressWatch?.stop();
    await gateway?.stop();
    await store.close();
    throw err;
  }
  const gw = gateway;
  const watch = addressWatch;

  let stopping: Promise<void> | undefined;
  return {
    config, store, dataDir, gateway: gw, addressWatch: watch,
    apiUrl: urlOf(apiServer, config.api.host),
    gatewayUrl: urlOf(gatewayServer, config.gateway.host),
    stop() {
      stopping ??= (async () => {
        // Stop taking requests and let in-flight ones finish; then the workers record what
        // they have (blocks, deliveries, usage) before the store closes.
        await Promise.all([closeServer(apiServer), closeServer(gatewayServer)]);
        await watch.stop();
        await gw.stop();
        await store.close();
      })();
      return stopping;
    },
  };
}

/** A port another process holds; `part` says which listener wanted it, so the CLI can name its flag. */
export class AddressInUseError extends Error {
  readonly code = 'E_ADDRESS_IN_USE';
  readonly part: 'api' | 'gateway';
  readonly host: string;
  readonly port: number;
  constructor(part: 'api' | 'gateway', host: string, port: number) {
    super(`cannot listen on ${host}:${port}: the address is already in use`);
    this.name = 'AddressInUseError';
    this.part = part;
    this.host = host;
    this.port = port;
  }
}

function listen(server: Server, port: number, host: string, part: 'api' | 'gateway'): Promise<Server> {
  return new Promise((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException) => {
      reject(err.code === 'EADDRINUSE' ? new AddressInUseError(part, host, port) : err);
    };
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve(server);
    });
  });
}

function urlOf(server: Server, host: string): string {
  const { port } = server.address() as AddressInfo;
  const h = host.includes(':') ? `[${host}]` : host === '0.0.0.0' ? '127.0.0.1' : host;
  return `http://${h}:${port}`;
}

/** Stops accepting, lets in-flight requests finish, then drops idle keep-alive sockets. */
export function closeServer(server: Server | undefined, graceMs = 5000): Promise<void> {
  if (!server?.listening) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => server.closeAllConnections(), graceMs);
    server.close(() => {
      clearTimeout(timer);
      resolve();
    });
    server.closeIdleConnections();
  });
}
