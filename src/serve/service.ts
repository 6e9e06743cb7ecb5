import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { defaultDataDir, findConfigFile, loadConfig, secretsFromFiles, type Config } from '../config/index.js';
import { Store, storeHealth, storeUrl, syncCatalog } from '../store/index.js';
import { changedSettings, restartOnly, updateInPlace } from '../config/live.js';
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
import { startWebhooks, type Webhooks, type WebhooksOptions } from '../webhooks/service.js';
import { watchFacts } from '../watch/facts.js';
import { openOrderOf, ownsWatch } from '../payments/holds.js';
import { deliveryObserver } from '../webhooks/metrics.js';
import type { KeyUseRecorder } from '../api/key-use.js';
import type { RouteDef } from '../api/router.js';
import { createCabinet, type Cabinet, type CabinetOptions, type CabinetSection } from '../cabinet/index.js';
import { RetentionJob, retentionPolicy } from '../retention/index.js';
import { startPayments, type Payments } from '../payments/service.js';
import { paymentsFeature } from '../payments/feature.js';
import { startPayouts, type Payouts } from '../payouts/service.js';
import { payoutsFeature } from '../payouts/feature.js';
import { Metrics } from '../metrics/index.js';
import { lineLogger, setLogLevel, type Logger } from '../log/index.js';
import { observeRedis, storeQueryObserver } from './metrics.js';
import { applyOverrides, type ServeOverrides } from './overrides.js';
import { Supervisor } from '../runtime/supervisor.js';
import { RpcctlError } from '../util/errors.js';
import { startTracing, tracingSetup, type Tracing, type TracingSetup } from '../telemetry/index.js';

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
  /** Address Watch tuning (scanner poll interval, lease) and the delivery worker's; tests and benches use it. */
  watch?: Pick<AddressWatchOptions, 'pollMs' | 'leaseMs'> & { delivery?: WebhooksOptions['delivery'] };
  /** Cabinet tuning (session lifetimes) and sections beyond the features' own. */
  cabinet?: Pick<CabinetOptions, 'sessions' | 'sections' | 'signIn'>;
  /** `rpcctl serve` flags: --host, --port, --gateway-port, --dev. */
  overrides?: ServeOverrides;
  /** The logger's level follows config `log.level` (at start and at each reload): no `--log-level` or $RPCCTL_LOG_LEVEL was given. */
  logLevelFromConfig?: boolean;
}

export interface RunningService {
  config: Config;
  store: Store;
  dataDir: string;
  apiUrl: string;
  gatewayUrl: string;
  gateway: Gateway;
  addressWatch: AddressWatch;
  /** The webhook delivery worker (webhooks/service.ts). */
  webhooks: Webhooks;
  /** Last-use times of API keys, written in batches. */
  keyUse: KeyUseRecorder;
  payments: Payments;
  /** Refunds and payouts tracked to final (payouts/service.ts). */
  payouts: Payouts;
  metrics: Metrics;
  /** `http://host:port` of the metrics listener (`/metrics`); undefined when there is none. */
  metricsUrl: string | undefined;
  limits: Limits;
  /** Runs every background task (names in docs/operations.md); `inject` is the fault tests' hook. */
  supervisor: Supervisor;
  /** `/ready`: the gateway listens, the service is neither draining nor stopping (the store is asked by the API). */
  ready(): boolean;
  /**
   * Reads the config file again and applies what can change live (config/live.ts) to every
   * part; a config that does not load, or changes a setting that needs a restart, is refused
   * and the running one stays. Counted in `rpcctl_config_reloads_total{result}`.
   */
  reload(): Promise<ReloadOutcome>;
  /**
   * `/ready` turns 503 on every listener while everything keeps serving, for `ms` (or until
   * `stop()`): load balancers take the instance out before its listeners close.
   */
  drain(ms: number): Promise<void>;
  stop(): Promise<void>;
}

/** What a reload did: the settings it applied, or why it was refused (no secret in either). */
export type ReloadOutcome = { ok: true; changed: string[] } | { ok: false; reason: string };

/**
 * A feature folder as serve/ composes it; `watchFeature`, `webhooksFeature` and `paymentsFeature`
 * each return one. It holds what serve/ hands down (routes to the API, a section to the cabinet,
 * gauges to the registry), which is alike for every feature. Start and stop are not in it: they
 * need different things (watch and payments need the running webhook service, payments the
 * running watch) and shutdown keeps a fixed order.
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
  /** Tracing on (`telemetry.otlp.endpoint`): the workers' exporter setup and the main thread's own. */
  tracing: { setup: TracingSetup; main: Tracing } | undefined;
}

/** The parts as they start: a failed start closes whichever are here, stop() all of them. */
interface Parts {
  gateway?: Gateway;
  webhooks?: Webhooks;
  addressWatch?: AddressWatch;
  payments?: Payments;
  payouts?: Payouts;
  apiServer?: Server;
  gatewayPort?: number;
  keyUse?: KeyUseRecorder;
  retention?: RetentionJob;
  metricsServer?: Server;
  leave?: () => Promise<void>;
  gatewayListening: boolean;
  draining?: boolean;
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
  return running(base, parts, opts);
}

/** Config, metrics, the supervisor, the store, the limits and the shared cache tier. */
async function openBase(opts: ServiceOptions): Promise<Base> {
  // `RPCCTL_*_FILE`: secrets as Kubernetes and systemd hand them over, read once here.
  const env = secretsFromFiles(opts.env ?? process.env);
  const logger = opts.logger;
  const log = opts.log ?? (logger ? lineLogger(logger) : ((line: string) => process.stderr.write(`${line}\n`)));
  const dataDir = opts.dataDir ?? defaultDataDir(env);
  const config = applyOverrides(loadConfig(findConfigFile(dataDir, opts.configFile), env), opts.overrides ?? {});
  if (opts.logLevelFromConfig && logger) setLogLevel(logger, config.log.level);
  const traces = tracingSetup(config.telemetry, env);
  const metrics = new Metrics({ enabled: config.metrics.enabled, allowedIps: config.metrics.allowed_ips });
  // No background failure ends the process: each is logged at error, counted and retried.
  const supervisor = new Supervisor({ logger, log, metrics });
  const redis = redisUrl(opts.redisUrl, config.redis.url, env);
  const store = await Store.open({ dataDir, config, syncCatalog: 'always', env, url: storeUrl(opts.databaseUrl, config, env), queryTimeoutMs: config.store.query_timeout_ms, onQuery: storeQueryObserver(metrics) });
  // One warning per Redis outage for the process, however many of its clients notice it.
  const outage = redis ? new RedisOutage({ warn: logger ? lineLogger(logger, 'warn') : log, info: logger ? lineLogger(logger, 'info') : log }) : undefined;
  const limits = await openLimits(redis ? {
    url: redis, keyPrefix: config.redis.key_prefix, log, onOutage: outageReporter(outage!, 'limits'), decisionTimeoutMs: config.redis.decision_timeout_ms,
  } : undefined);
  // Final answers one instance fetched serve the others; a reorg seen by one drops them everywhere.
  const sharedCache = redis && config.redis.cache_ttl_ms > 0 && config.gateway.cache_max_bytes > 0
    ? await RedisCacheTier.open({ url: redis, keyPrefix: config.redis.key_prefix, log, onOutage: outageReporter(outage!, 'cache'), ttlMs: config.redis.cache_ttl_ms, maxValueBytes: config.redis.cache_max_value_bytes })
    : undefined;
  const tracing = traces && { setup: traces, main: await startTracing(traces, log, 'main') };
  return { env, logger, log, dataDir, config, metrics, supervisor, redis, store, outage, limits, sharedCache, tracing };
}

/** The gateway, Address Watch, payments, the features, the API with the cabinet, retention, the listeners. */
async function startParts(base: Base, opts: ServiceOptions, parts: Parts): Promise<void> {
  const { store, config, log, logger, metrics, supervisor, limits, redis, env } = base;
  // The gateway workers open their own Redis connections for the RPS windows and the cache's shared tier.
  const gateway = parts.gateway = await createGateway(store, config, log, metrics, logger, {
    redis: redis && limits.kind === 'redis' ? { url: redis, keyPrefix: config.redis.key_prefix, sharedCache: base.sharedCache !== undefined } : undefined,
    supervisor,
    redisOutage: base.outage,
    tracing: base.tracing?.setup,
  });
  const tracing = base.tracing?.main;
  // Webhooks first: Address Watch and payments write deliveries and wake it.
  const webhooks = parts.webhooks = startWebhooks({
    store, config, log, supervisor, watch: watchFacts, delivery: { ...opts.watch?.delivery, onAttempt: deliveryObserver(metrics), tracing },
  });
  const addressWatch = parts.addressWatch = await startAddressWatch({
    store, config, log, supervisor, pollMs: opts.watch?.pollMs, leaseMs: opts.watch?.leaseMs, webhooks, tracing,
  });
  observeRedis(metrics, limits, base.sharedCache);
  if (limits instanceof RedisLimits) parts.leave = shareLimitsByHeartbeat({ supervisor, db: store.db, instanceId: addressWatch.instanceId, limits, workers: gateway.workers });
  const payments = parts.payments = await startPayments({ store, config, log, addressWatch, webhooks, env, supervisor });
  const payouts = parts.payouts = startPayouts({ store, config, log, addressWatch, webhooks, supervisor, rates: payments.rates });
  // Order kept from when Address Watch built its routes: the OpenAPI document lists them so,
  // and the cabinet's nav shows the sections so.
  const features: Feature[] = [
    watchFeature(addressWatch, { openOrderOf: (accountId, watchId) => openOrderOf(store.db, accountId, watchId), holderChanged: ownsWatch }),
    webhooksFeature({ store, worker: webhooks.worker, watch: watchFacts, reconcile: () => addressWatch.reconcile(), sampleWatch }),
    paymentsFeature({ payments, addressWatch, store, config, limits, log }),
    payoutsFeature({ payouts, limits, log }),
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
    api: apiServer.listening && !parts.stopping && !parts.draining, gateway: parts.gatewayListening && !parts.stopping && !parts.draining, store: await storeUp(),
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
    ready: () => parts.gatewayListening && !parts.stopping && !parts.draining,
    tracing: base.tracing?.main,
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
  await parts.payouts?.stop();
  await parts.payments?.stop();
  await parts.addressWatch?.stop();
  await parts.webhooks?.stop();
  await parts.gateway?.stop();
  await base.supervisor.stop();
  await base.store.close();
  await base.limits.close();
  await base.sharedCache?.close();
  await base.tracing?.main.shutdown();
}

function running(base: Base, parts: Parts, opts: ServiceOptions): RunningService {
  const { config, store, dataDir, metrics, limits, supervisor, log } = base;
  const gw = parts.gateway!;
  const watch = parts.addressWatch!;
  const hooks = parts.webhooks!;
  const pay = parts.payments!;
  const outs = parts.payouts!;
  const metricsServer = parts.metricsServer;
  const reloads = metrics.counter('config_reloads_total', 'Config reloads (SIGHUP, rpcctl admin reload) by result: applied, or refused (the running config stays)', ['result']);
  let reloading: Promise<ReloadOutcome> = Promise.resolve({ ok: true, changed: [] });
  const gatewayState = { behind: false };
  let endDrain = () => {};
  return {
    config, store, dataDir, gateway: gw, addressWatch: watch, webhooks: hooks, keyUse: parts.keyUse!, payments: pay, payouts: outs, metrics, limits, supervisor,
    ready: () => parts.gatewayListening && !parts.stopping && !parts.draining,
    reload() {
      // One at a time: a second SIGHUP waits for the first and reads the file again.
      // Never rejects: a rejected link would refuse every later reload unread, and SIGHUP's
      // handler would end the process over a store that did not answer once.
      reloading = reloading.then(() => reloadConfig(base, opts, gw, gatewayState)).catch((err: unknown): ReloadOutcome => ({
        ok: false, reason: `the reload failed: ${(err as Error).message}`,
      })).then((outcome) => {
        reloads.inc({ result: outcome.ok ? 'applied' : 'refused' });
        log(outcome.ok
          ? `config: reloaded${outcome.changed.length ? `: ${outcome.changed.join(', ')}` : ' (nothing changed)'}`
          : `config: reload refused, the running config stays: ${outcome.reason}`);
        return outcome;
      });
      return reloading;
    },
    async drain(ms) {
      if (parts.stopping) return;
      parts.draining = true;
      await gw.drain();
      if (ms > 0) log(`shutdown: draining for ${ms / 1000} s: /ready answers 503, calls are still served`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ms);
        endDrain = () => { clearTimeout(timer); resolve(); };
      });
    },
    metricsUrl: metricsServer ? urlOf(metricsServer, (metricsServer.address() as AddressInfo).address) : undefined,
    apiUrl: urlOf(parts.apiServer!, config.api.host),
    gatewayUrl: urlOfPort(parts.gatewayPort!, config.gateway.host),
    stop() {
      endDrain();
      parts.stopping ??= (async () => {
        // Stop taking requests and let in-flight ones finish; then the workers record what
        // they have (blocks, deliveries, usage) before the store closes. A step that takes
        // a while says what it waits for.
        // The others stop counting this instance at once: their share grows while it drains.
        await parts.leave?.().catch(() => {});
        await waitingFor(log, 'in-flight requests to finish (at most 5 s)', Promise.all([closeServer(parts.apiServer), gw.close(), closeServer(metricsServer)]));
        await parts.keyUse?.stop();
        await parts.retention?.stop();
        await waitingFor(log, 'refunds and payouts: transitions in flight', outs.stop());
        await waitingFor(log, 'payment orders: screening and transitions in flight', pay.stop());
        await waitingFor(log, 'Address Watch: the scanners\' current blocks', watch.stop());
        await waitingFor(log, 'webhook deliveries in flight', hooks.stop());
        await waitingFor(log, 'the gateway: usage to be written', gw.stop());
        // Whatever else runs under it (the parts stopped their own tasks above).
        await supervisor.stop();
        await store.close();
        await limits.close();
        await base.sharedCache?.close();
        // Last: the spans of everything above (at most 2 s).
        await base.tracing?.main.shutdown();
      })();
      return parts.stopping;
    },
  };
}

/**
 * The config file read again as at start (same file, same environment, same flags); refused
 * when it does not load or changes what only a restart can. The store's catalog is synced
 * (networks, plans) before anything in memory changes, so a sync the store refuses changes
 * nothing; then the config is updated in place (config/live.ts) and the gateway told.
 */
async function reloadConfig(base: Base, opts: ServiceOptions, gateway: Gateway, gatewayState: { behind: boolean }): Promise<ReloadOutcome> {
  let next: Config;
  try {
    next = applyOverrides(loadConfig(findConfigFile(base.dataDir, opts.configFile), base.env), opts.overrides ?? {});
  } catch (err) {
    return { ok: false, reason: (err as Error).message };
  }
  const changed = changedSettings(base.config, next);
  const restart = restartOnly(changed);
  if (restart.length > 0) return { ok: false, reason: `changing ${restart.join(', ')} needs a restart` };
  if (changed.length === 0 && !gatewayState.behind) return { ok: true, changed };
  try {
    if (changed.some((p) => p === 'networks' || p.startsWith('networks.') || p === 'plans' || p.startsWith('plans.'))) {
      await syncCatalog(base.store.db, next);
      await base.store.reloadCatalog();
    }
  } catch (err) {
    return { ok: false, reason: (err as Error).message };
  }
  updateInPlace(base.config, next);
  if (opts.logLevelFromConfig && base.logger) setLogLevel(base.logger, next.log.level);
  try {
    // Reads every endpoint from the store: an outage here leaves the config applied and the
    // gateway on the old one until a reload that gets through (which then asks it again).
    gatewayState.behind = true;
    await gateway.reload();
    gatewayState.behind = false;
  } catch (err) {
    return { ok: false, reason: `the config is read, but the gateway could not take it (send SIGHUP again): ${(err as Error).message}` };
  }
  return { ok: true, changed };
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
