import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { defaultDataDir, findConfigFile, loadConfig, type Config } from '../config/index.js';
import { Store, storeHealth, storeUrl } from '../store/index.js';
import { openLimits, redisUrl, RedisLimits, RedisOutage, type Limits } from '../limits/index.js';
import { outageReporter } from '../limits/outage.js';
import { shareLimitsByHeartbeat } from '../limits/instances.js';
import { createMetricsServer, DEFAULT_METRICS_LISTEN, parseListen, type Readiness } from '../metrics/http.js';
import { createApiServer } from '../api/index.js';
import { createGateway, GatewayListenError, RedisCacheTier, type Gateway } from '../gateway/index.js';
import { startAddressWatch, type AddressWatch, type AddressWatchOptions } from '../watch/service.js';
import { watchFeature } from '../watch/feature.js';
import { sampleWatch } from '../watch/watches.js';
import { webhooksFeature } from '../webhooks/feature.js';
import { deliveryObserver } from '../webhooks/metrics.js';
import type { KeyUseRecorder } from '../api/key-use.js';
import type { RouteDef } from '../api/router.js';
import { createCabinet, type Cabinet, type CabinetOptions, type CabinetSection } from '../cabinet/index.js';
import { RetentionJob, retentionPolicy } from '../retention/index.js';
import { startPayments, type Payments } from '../payments/service.js';
import { paymentsFeature } from '../payments/feature.js';
import { Metrics } from '../metrics/index.js';
import { lineLogger, type Logger } from '../log/index.js';
import { observeRedis, storeQueryObserver } from './metrics.js';
import { applyOverrides, type ServeOverrides } from './overrides.js';
import { Supervisor } from '../runtime/supervisor.js';
import { RpcctlError } from '../util/errors.js';

export interface ServiceOptions {
  configFile?: string;
  dataDir?: string;
  env?: NodeJS.ProcessEnv;
  /** `--database`: a shared PostgreSQL; falls back to $RPCCTL_DATABASE_URL, then config `store.url`. */
  databaseUrl?: string;
  /** `--redis`: a shared Redis for limits; falls back to $RPCCTL_REDIS_URL, then config `redis.url`. */
  redisUrl?: string;
  log?: (line: string) => void;
  /** Structured logger (`rpcctl serve`): access logs, and the parts' lines through `lineLogger` unless `log` is given. */
  logger?: Logger;
  /** Address Watch tuning (scanner poll interval, delivery worker limits); tests and benches use it. */
  watch?: Pick<AddressWatchOptions, 'pollMs' | 'delivery' | 'leaseMs'>;
  /** Cabinet tuning (session lifetimes) and sections beyond the features' own. */
  cabinet?: Pick<CabinetOptions, 'sessions' | 'sections' | 'signIn'>;
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
  /** Last-use times of API keys, written in batches. */
  keyUse: KeyUseRecorder;
  payments: Payments;
  metrics: Metrics;
  /** `http://host:port` of the metrics listener (`/metrics`); undefined when there is none. */
  metricsUrl: string | undefined;
  limits: Limits;
  /** Runs every background task (names in docs/operations.md); `inject` is the fault tests' hook. */
  supervisor: Supervisor;
  /** `/ready`: the gateway listens, the service is not stopping (the store is asked by the API). */
  ready(): boolean;
  stop(): Promise<void>;
}

/**
 * A feature folder as serve/ composes it; `watchFeature`, `webhooksFeature` and `paymentsFeature`
 * each return one. It holds what serve/ hands down (routes to the API, a section to the cabinet,
 * gauges to the registry), which is alike for every feature. Start and stop are not in it: they
 * need different things (payments need the running watch), webhooks have no running part of
 * their own (the delivery worker runs inside Address Watch) and shutdown keeps a fixed order.
 */
interface Feature {
  routes: RouteDef[];
  section: CabinetSection;
  observe(metrics: Metrics): void;
}

/** What is open before any part starts. */
interface Base {
  env: NodeJS.ProcessEnv;
  logger: Logger | undefined;
  log: (line: string) => void;
  dataDir: string;
  config: Config;
  metrics: Metrics;
  supervisor: Supervisor;
  redis: string | undefined;
  store: Store;
  outage: RedisOutage | undefined;
  limits: Limits;
  sharedCache: RedisCacheTier | undefined;
}

/** The parts as they start: a failed start closes whichever are here, stop() all of them. */
interface Parts {
  gateway?: Gateway;
  addressWatch?: AddressWatch;
  payments?: Payments;
  apiServer?: Server;
  gatewayPort?: number;
  keyUse?: KeyUseRecorder;
  retention?: RetentionJob;
  metricsServer?: Server;
  leave?: () => Promise<void>;
  gatewayListening: boolean;
  stopping?: Promise<void>;
}

/** Starts every part of the service in this process and resolves once all are listening. */
export async function startService(opts: ServiceOptions = {}): Promise<RunningService> {
  const base = await openBase(opts);
  const parts: Parts = { gatewayListening: false };
  try {
    await startParts(base, opts, parts);
  } catch (err) {
    await closeAfterFailedStart(base, parts);
    throw err;
  }
  return running(base, parts);
}

/** Config, metrics, the supervisor, the store, the limits and the shared cache tier. */
async function openBase(opts: ServiceOptions): Promise<Base> {
  const env = opts.env ?? process.env;
  const logger = opts.logger;
  const log = opts.log ?? (logger ? lineLogger(logger) : ((line: string) => process.stderr.write(`${line}\n`)));
  const dataDir = opts.dataDir ?? defaultDataDir(env);
  const config = applyOverrides(loadConfig(findConfigFile(dataDir, opts.configFile)), opts.overrides ?? {});
  const metrics = new Metrics({ enabled: config.metrics.enabled, allowedIps: config.metrics.allowed_ips });
  // No background failure ends the process: each is logged at error, counted and retried.
  const supervisor = new Supervisor({ logger, log, metrics });
  const redis = redisUrl(opts.redisUrl, config.redis.url, env);
  const store = await Store.open({ dataDir, config, syncCatalog: 'always', env, url: storeUrl(opts.databaseUrl, config, env), queryTimeoutMs: config.store.query_timeout_ms, onQuery: storeQueryObserver(metrics) });
  // One warning per Redis outage for the process, however many of its clients notice it.
  const outage = redis ? new RedisOutage({ warn: logger ? lineLogger(logger, 'warn') : log, info: logger ? lineLogger(logger, 'info') : log }) : undefined;
  const limits = await openLimits(redis ? { url: redis, keyPrefix: config.redis.key_prefix, log, onOutage: outageReporter(outage!, 'limits') } : undefined);
  // Final answers one instance fetched serve the others; a reorg seen by one drops them everywhere.
  const sharedCache = redis && config.redis.cache_ttl_ms > 0 && config.gateway.cache_max_bytes > 0
    ? await RedisCacheTier.open({ url: redis, keyPrefix: config.redis.key_prefix, log, onOutage: outageReporter(outage!, 'cache'), ttlMs: config.redis.cache_ttl_ms, maxValueBytes: config.redis.cache_max_value_bytes })
    : undefined;
  return { env, logger, log, dataDir, config, metrics, supervisor, redis, store, outage, limits, sharedCache };
}

/** The gateway, Address Watch, payments, the features, the API with the cabinet, retention, the listeners. */
async function startParts(base: Base, opts: ServiceOptions, parts: Parts): Promise<void> {
  const { store, config, log, logger, metrics, supervisor, limits, redis, env } = base;
  // The gateway workers open their own Redis connections for the RPS windows and the cache's shared tier.
  const gateway = parts.gateway = await createGateway(store, config, log, metrics, logger, {
    redis: redis && limits.kind === 'redis' ? { url: redis, keyPrefix: config.redis.key_prefix, sharedCache: base.sharedCache !== undefined } : undefined,
    supervisor,
    redisOutage: base.outage,
  });
  const addressWatch = parts.addressWatch = await startAddressWatch({
    store, config, log, supervisor, ...opts.watch, delivery: { ...opts.watch?.delivery, onAttempt: deliveryObserver(metrics) },
  });
  observeRedis(metrics, limits, base.sharedCache);
  if (limits instanceof RedisLimits) parts.leave = shareLimitsByHeartbeat({ supervisor, db: store.db, instanceId: addressWatch.instanceId, limits, workers: gateway.workers });
  const payments = parts.payments = await startPayments({ store, config, log, addressWatch, env, supervisor });
  // Order kept from when Address Watch built its routes: the OpenAPI document lists them so,
  // and the cabinet's nav shows the sections so.
  const features: Feature[] = [
    watchFeature(addressWatch),
    webhooksFeature({ store, worker: addressWatch.worker, reconcile: () => addressWatch.reconcile(), sampleWatch }),
    paymentsFeature({ payments, addressWatch, store, config, limits, log }),
  ];
  for (const feature of features) feature.observe(metrics);
  const api = createApiWithCabinet(base, opts, parts, gateway, features);
  parts.keyUse = api.keyUse;
  const apiServer = parts.apiServer = await listen(api.server, config.api.port, config.api.host, 'api');
  parts.retention = new RetentionJob(store, retentionPolicy(config), log, supervisor);
  parts.retention.start(config.retention.interval_ms);
  parts.gatewayPort = await gateway.listen(config.gateway.port, config.gateway.host).catch((err: unknown) => {
    throw err instanceof GatewayListenError && err.code === 'EADDRINUSE' ? new AddressInUseError('gateway', config.gateway.host, config.gateway.port) : err;
  });
  parts.gatewayListening = true;
  const storeUp = storeHealth(() => store.ping());
  parts.metricsServer = await listenMetrics(metrics, config.metrics, log, async () => ({
    api: apiServer.listening && !parts.stopping, gateway: parts.gatewayListening && !parts.stopping, store: await storeUp(),
  }));
}

/** The API server and the cabinet on its listener: the features' routes go to one, their sections to the other. */
function createApiWithCabinet(base: Base, opts: ServiceOptions, parts: Parts, gateway: Gateway, features: Feature[]): ReturnType<typeof createApiServer> {
  const { store, config, log, logger, metrics, limits, supervisor } = base;
  let cabinet: Cabinet | undefined;
  const api = createApiServer({
    store, config, log, metrics, logger, limits, supervisor,
    routes: features.flatMap((feature) => feature.routes),
    // Pause and allowlist changes reach the gateway before the API answers.
    onEndpointChanged: (id) => gateway.registry.refresh(id),
    requestLog: (id, q) => gateway.requestLog(id, q),
    pages: (req, res) => cabinet!.handle(req, res),
    ready: () => parts.gatewayListening && !parts.stopping,
  });
  cabinet = createCabinet({
    store, config, log, router: api.router, app: api.app, keyUse: api.keyUse, limits, ...opts.cabinet,
    sections: [...features.map((feature) => feature.section), ...(opts.cabinet?.sections ?? [])],
  });
  return api;
}

async function closeAfterFailedStart(base: Base, parts: Parts): Promise<void> {
  await Promise.all([closeServer(parts.apiServer), parts.gateway?.close(), closeServer(parts.metricsServer)]);
  await parts.keyUse?.stop();
  await parts.retention?.stop();
  await parts.payments?.stop();
  await parts.addressWatch?.stop();
  await parts.gateway?.stop();
  await base.supervisor.stop();
  await base.store.close();
  await base.limits.close();
  await base.sharedCache?.close();
}

function running(base: Base, parts: Parts): RunningService {
  const { config, store, dataDir, metrics, limits, supervisor, log } = base;
  const gw = parts.gateway!;
  const watch = parts.addressWatch!;
  const pay = parts.payments!;
  const metricsServer = parts.metricsServer;
  return {
    config, store, dataDir, gateway: gw, addressWatch: watch, keyUse: parts.keyUse!, payments: pay, metrics, limits, supervisor,
    ready: () => parts.gatewayListening && !parts.stopping,
    metricsUrl: metricsServer ? urlOf(metricsServer, (metricsServer.address() as AddressInfo).address) : undefined,
    apiUrl: urlOf(parts.apiServer!, config.api.host),
    gatewayUrl: urlOfPort(parts.gatewayPort!, config.gateway.host),
    stop() {
      parts.stopping ??= (async () => {
        // Stop taking requests and let in-flight ones finish; then the workers record what
        // they have (blocks, deliveries, usage) before the store closes. A step that takes
        // a while says what it waits for.
        // The others stop counting this instance at once: their share grows while it drains.
        await parts.leave?.().catch(() => {});
        await waitingFor(log, 'in-flight requests to finish (at most 5 s)', Promise.all([closeServer(parts.apiServer), gw.close(), closeServer(metricsServer)]));
        await parts.keyUse?.stop();
        await parts.retention?.stop();
        await waitingFor(log, 'payment orders: screening and transitions in flight', pay.stop());
        await waitingFor(log, 'Address Watch: the scanners\' current blocks and webhook deliveries in flight', watch.stop());
        await waitingFor(log, 'the gateway: usage to be written', gw.stop());
        // Whatever else runs under it (the parts stopped their own tasks above).
        await supervisor.stop();
        await store.close();
        await limits.close();
        await base.sharedCache?.close();
      })();
      return parts.stopping;
    },
  };
}

/** Awaits `work`; if it takes longer than a moment, says what the process is waiting for. */
async function waitingFor<T>(log: (line: string) => void, what: string, work: Promise<T>, afterMs = 500): Promise<T> {
  const timer = setTimeout(() => log(`shutdown: waiting for ${what}`), afterMs);
  try {
    return await work;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The metrics listener (`metrics.listen`). The default address is a convenience: taken there
 * (another instance on the machine), the service runs on with a warning; an address the
 * operator chose must be had.
 */
async function listenMetrics(metrics: Metrics, o: Config['metrics'], log: (line: string) => void, readiness: Readiness): Promise<Server | undefined> {
  if (!o.enabled || o.listen === false) return undefined;
  const { host, port } = parseListen(o.listen ?? DEFAULT_METRICS_LISTEN);
  try {
    return await listen(createMetricsServer(metrics, o.token, readiness), port, host, 'metrics');
  } catch (err) {
    if (o.listen !== undefined || !(err instanceof AddressInUseError)) throw err;
    log(`metrics: cannot listen on ${host}:${port}, the address is already in use: no metrics listener (set metrics.listen)`);
    return undefined;
  }
}

/** A port another process holds; `part` says which listener wanted it, so the CLI can name its flag. */
export class AddressInUseError extends RpcctlError {
  readonly code = 'E_ADDRESS_IN_USE';
  readonly part: 'api' | 'gateway' | 'metrics';
  readonly host: string;
  readonly port: number;
  constructor(part: 'api' | 'gateway' | 'metrics', host: string, port: number) {
    super(`cannot listen on ${host}:${port}: the address is already in use`);
    this.name = 'AddressInUseError';
    this.part = part;
    this.host = host;
    this.port = port;
  }
}

function listen(server: Server, port: number, host: string, part: 'api' | 'gateway' | 'metrics'): Promise<Server> {
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
  return urlOfPort((server.address() as AddressInfo).port, host);
}

function urlOfPort(port: number, host: string): string {
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
