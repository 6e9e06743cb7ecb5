/**
 * One gateway worker thread: the HTTP and WebSocket listeners on the shared port (reusePort),
 * with endpoints, chain views and usage counts in memory. It never opens the store: the main
 * thread sends endpoint changes and probe results, and takes the usage counts.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { Server } from 'node:http';
import { Catalog } from '../../store/catalog.js';
import { EndpointTable } from '../registry.js';
import { SharedWindows } from '../rps-shared.js';
import { networkPolicy, upstreamOptions, UpstreamDirectory, type Upstream } from '../upstreams/index.js';
import { ResponseCache, type ChainView } from '../cache.js';
import { RedisCacheTier } from '../cache-redis.js';
import { CallHandler } from '../calls.js';
import { logsPolicies } from '../logs.js';
import { IntegrityChecks } from '../integrity.js';
import { RequestLog } from '../request-log.js';
import { createGatewayServer, replaceListener } from '../server.js';
import { Metrics } from '../../metrics/index.js';
import { gatewayMetrics, networkLabels, UNKNOWN_NETWORK, type GatewayMetrics } from '../metrics.js';
import { observeRequests, sampleAccessLog } from '../observe.js';
import { IpAllowlist } from '../../util/ip.js';
import { WebSocketGateway } from '../ws/server.js';
import { RedisLimits, type WindowLimiter } from '../../limits/index.js';
import { observeRedisFallbacks } from '../../metrics/redis.js';
import type { Logger } from '../../log/index.js';
import type { FromWorker, ToWorker, UsageWire, WorkerStart } from './protocol.js';
import { startTracing, type Tracing } from '../../telemetry/index.js';
import { updateInPlace } from '../../config/live.js';

const port = parentPort!;
const start = workerData as WorkerStart;
const post = (m: FromWorker) => port.postMessage(m);
const log = (line: string) => post({ t: 'log', line });

/** How often counted usage goes to the main thread (it writes it on its own interval). */
const USAGE_PUSH_MS = 100;
/** How often subscriptions, upstream health and cache stats go to the main thread's view, when they changed. */
const STATE_PUSH_MS = 50;

/**
 * Usage counted per (endpoint, method) for the current UTC day, handed to the main thread's
 * UsageMeter in batches: each count leaves this thread exactly once.
 */
class WorkerMeter {
  #counts = new Map<number, { accountId: number; methods: Map<string, { requests: number; credits: number }> }>();
  #day = Math.floor(Date.now() / 86_400_000);
  #out: UsageWire[] = [];

  record(endpointId: number, accountId: number, method: string, credits: number, requests = 1): void {
    const day = Math.floor(Date.now() / 86_400_000);
    if (day !== this.#day) {
      this.#drainCounts();
      this.#day = day;
    }
    let e = this.#counts.get(endpointId);
    if (!e) this.#counts.set(endpointId, e = { accountId, methods: new Map() });
    const c = e.methods.get(method);
    if (c) {
      c.requests += requests;
      c.credits += credits;
    } else {
      e.methods.set(method, { requests, credits });
    }
  }

  /** Everything counted so far, forgotten here. */
  take(): UsageWire[] {
    this.#drainCounts();
    const out = this.#out;
    this.#out = [];
    return out;
  }

  #drainCounts(): void {
    if (this.#counts.size === 0) return;
    const at = this.#day * 86_400_000;
    for (const [endpointId, { accountId, methods }] of this.#counts) {
      for (const [method, c] of methods) this.#out.push([endpointId, accountId, method, c.requests, c.credits, at]);
    }
    this.#counts = new Map();
  }
}

/** The service drains before it stops: `/ready` answers 503, calls are still served. */
let draining = false;

/** The networks and plans as the main thread last sent them (at start, then at each reload). */
let catalogNow: Catalog;

const pendingAsks = new Map<number, (value: unknown) => void>();
let askSeq = 0;
function ask<T>(what: 'health'): Promise<T> {
  const seq = ++askSeq;
  return new Promise<T>((resolve) => {
    pendingAsks.set(seq, resolve as (v: unknown) => void);
    post({ t: 'ask', seq, what });
  });
}

/** What a running worker is made of: what the main thread's messages act on. */
interface WorkerParts {
  catalog: Catalog;
  registry: EndpointTable;
  upstreams: UpstreamDirectory;
  chain: Map<number, ChainView>;
  meter: WorkerMeter;
  metrics: Metrics;
  cache: ReplicatedCache | undefined;
  limits: RedisLimits | undefined;
  /** This worker's request logs; undefined with `gateway.request_log_size` 0. */
  requestLog: RequestLog | undefined;
  server: Server;
  websockets: WebSocketGateway;
  /** This thread's own provider and exporter (tracing on only): no span crosses to the main thread. */
  tracing: Tracing | undefined;
  /** Sends the state to the main thread when it changed. */
  pushState: () => void;
  timers: NodeJS.Timeout[];
  /** Builds the request path anew over the current config, catalog and upstreams (a config reload). */
  rebuild: () => void;
}

/** Redis's parts of the worker: absent without Redis. */
interface RedisParts {
  limits: RedisLimits | undefined;
  sharedRps: WindowLimiter | undefined;
  sharedCache: RedisCacheTier | undefined;
}

async function main(): Promise<void> {
  const { config } = start;
  const g = config.gateway;
  const { catalog, registry } = openEndpoints();
  const windows = new SharedWindows(start.workers, { windows: start.windows, sockets: start.sockets });
  const meter = new WorkerMeter();
  const tracing = start.tracing ? await startTracing(start.tracing, log, `gateway-${start.index}`) : undefined;
  const metrics = new Metrics({ enabled: start.metricsEnabled, processMetrics: false, allowedIps: config.metrics.allowed_ips });
  // Registers the gateway's metrics: once per thread.
  const gm = gatewayMetrics(metrics);
  const upstreams = openUpstreams(gm);
  shareBackOffs(upstreams);
  const chain = new Map<number, ChainView>(start.chain);
  const redis: RedisParts = start.redis ? await openRedis(start.redis, registry, windows, metrics) : { limits: undefined, sharedRps: undefined, sharedCache: undefined };
  // The memory the operator gave the cache is the machine's, split between the workers.
  const cache = g.cache_max_bytes > 0 ? new ReplicatedCache(Math.max(1, Math.floor(g.cache_max_bytes / start.workers)), redis.sharedCache) : undefined;
  const requestLog = g.request_log_size > 0 ? new RequestLog(g.request_log_size) : undefined;
  const parts = startServers({ catalog, registry, upstreams, chain, meter, metrics, cache, limits: redis.limits, requestLog, tracing }, gm, windows, redis.sharedRps);
  port.on('message', (m: ToWorker) => onMessage(parts, m));
  const server = parts.server;
  server.once('error', (err: NodeJS.ErrnoException) => post({ t: 'failed', code: err.code, message: err.message }));
  server.listen({ port: start.port, host: start.host, reusePort: true } as Parameters<Server['listen']>[0], () => post({ t: 'listening' }));
}

/** The endpoints of the start message, in memory; the message's copy is dropped. */
function openEndpoints(): { catalog: Catalog; registry: EndpointTable } {
  const catalog = catalogNow = new Catalog(start.networks, start.plans);
  const registry = new EndpointTable(catalog, start.config.gateway.host_prefix);
  registry.applyPack(start.endpoints);
  // workerData lives as long as the thread: the snapshot is not kept beside the table.
  start.endpoints = { uuids: '', numbers: new Float64Array(0), allowlists: [] };
  return { catalog, registry };
}

function openUpstreams(gm: GatewayMetrics): UpstreamDirectory {
  const labelsOf = (envId: number) => {
    const env = catalogNow.environment(envId);
    return env ? networkLabels(env) : UNKNOWN_NETWORK;
  };
  // The config and the catalog are read at each look: a reload replaces them.
  const policyFor = (envId: number) => {
    const network = catalogNow.environment(envId)?.network;
    return networkPolicy(start.config.networks.find((n) => n.slug === network?.slug), network?.family);
  };
  return new UpstreamDirectory(upstreamOptions(start.config.gateway, log), policyFor, { metrics: gm, labelsOf });
}

/** RPS windows (and the shared cache tier, when asked for) in Redis, with this machine's windows as the fallback. */
async function openRedis(redis: NonNullable<WorkerStart['redis']>, registry: EndpointTable, windows: SharedWindows, metrics: Metrics): Promise<RedisParts> {
  const { config } = start;
  // The main thread reports the outage once for the whole process (limits/outage.ts).
  const onOutage = (part: string) => (down: boolean, reason: string) => post({ t: 'redis', part, down, reason });
  const limits = await RedisLimits.open({ url: redis.url, keyPrefix: redis.keyPrefix, log, onOutage: onOutage('limits'), decisionTimeoutMs: config.redis.decision_timeout_ms });
  limits.liveInstances = start.liveInstances;
  // Redis away or slow: this machine's shared windows decide, exact across its workers.
  const here = (key: string, limit: number, cost: number) => {
    const ep = registry.byId(Number(key));
    return ep ? windows.take(ep.slot, limit, cost) : 0;
  };
  const sharedRps = limits.window('rps', 1000, { admit: here, take: (key, limit, cost = 1) => (here(key, limit, cost) === cost ? 0 : 1) });
  let sharedCache: RedisCacheTier | undefined;
  if (redis.sharedCache) {
    sharedCache = await RedisCacheTier.open({
      url: redis.url, keyPrefix: redis.keyPrefix, log, onOutage: onOutage('cache'), ttlMs: config.redis.cache_ttl_ms, maxValueBytes: config.redis.cache_max_value_bytes,
    });
  }
  // The decisions this thread took without Redis, summed with the main thread's at scrape.
  observeRedisFallbacks(metrics, [{ part: 'limits', source: limits }, ...(sharedCache ? [{ part: 'cache', source: sharedCache }] : [])]);
  return { limits, sharedRps, sharedCache };
}

/** The HTTP server with its WebSocket listener, its observers, and the timers that push usage and state. */
function startServers(
  base: Omit<WorkerParts, 'server' | 'websockets' | 'pushState' | 'timers' | 'rebuild'>, gm: GatewayMetrics, windows: SharedWindows, sharedRps: WindowLimiter | undefined,
): WorkerParts {
  const { config } = start;
  const g = config.gateway;
  const { registry, meter, upstreams, metrics, cache, chain, requestLog, tracing } = base;
  const socketPlaces = {
    acquire: (ep: { slot: number }, max: number) => windows.acquireSocket(ep.slot, start.index, max),
    release: (ep: { slot: number }) => windows.releaseSocket(ep.slot, start.index),
  };
  const callHandler = () => new CallHandler({
    upstreams, cache, views: chain, logsPolicy: logsPolicies(config), maxResponseBytes: config.gateway.max_logs_response_bytes,
    integrity: IntegrityChecks.from(config, metrics, log),
  });
  const calls = callHandler();
  const localRps = (ep: { slot: number; rpsLimit: number }, cost: number) => windows.take(ep.slot, ep.rpsLimit, cost);
  const deps = (handler: CallHandler) => ({
    config, registry, meter, upstreams, calls: handler, log, metrics, sharedRps, localRps, storeHealth: storeHealthFromMain,
    bodyBudget: { memory: start.bodyBudget, index: start.index }, requestLog, tracing, draining: () => draining,
  });
  const server = createGatewayServer(deps(calls));
  if (metrics.enabled) observeRequests(server, registry, gm);
  const accessLog = start.accessLog ? workerLogger() : undefined;
  if (accessLog) sampleAccessLog(server, registry, accessLog, g.access_log_sample, new IpAllowlist(g.trusted_proxies));
  const websockets = new WebSocketGateway({ config, registry, meter, upstreams, metrics: gm, sharedRps, localRps, socketPlaces, calls, log, accessLog: accessLog?.child({ component: 'gateway' }),
    workers: start.workers,
    draining: () => draining,
    tracing,
    // The main thread's count of subscriptions is read by tests right after a subscribe: sent at once.
    onSubscriptions: () => pushState(),
  });
  websockets.attach(server);

  const pushUsage = () => {
    const rows = meter.take();
    if (rows.length > 0) post({ t: 'usage-push', rows });
  };
  let lastState = '';
  const pushState = () => {
    const state: Extract<FromWorker, { t: 'state' }> = { t: 'state', subscriptions: websockets.subscriptions, upstreams: [...upstreams.snapshot()], cache: cache?.snapshot() };
    const text = JSON.stringify(state);
    if (text === lastState) return;
    lastState = text;
    post(state);
  };
  const timers = [setInterval(pushUsage, USAGE_PUSH_MS), setInterval(pushState, STATE_PUSH_MS)];
  // The context, call handler and integrity checks are built from the config once each; a
  // reload builds them again and new requests and calls take them (requests in flight finish
  // on the ones they began with).
  const rebuild = () => {
    const next = callHandler();
    replaceListener(server, deps(next));
    websockets.reconfigure({ upstreams, calls: next });
  };
  return { ...base, server, websockets, pushState, timers, rebuild };
}

/** The main thread's messages: endpoint and chain changes, probe results, questions, stop. */
function onMessage(w: WorkerParts, m: ToWorker): void {
  switch (m.t) {
    case 'endpoints':
      w.registry.apply(m.rows);
      return reply(m.seq, true);
    case 'chain':
      for (const [envId, view] of m.views) w.chain.set(envId, view);
      return;
    case 'probed':
      return applyProbes(w, m.envs);
    case 'usage':
      return reply(m.seq, w.meter.take());
    case 'metrics':
      w.metrics.registry.getMetricsAsJSON().then((json) => reply(m.seq, json), () => reply(m.seq, []));
      return;
    case 'cache-drop': {
      const n = w.cache ? w.cache.dropFrom(m.envId, m.height) : 0;
      // The main thread's view of the stats moves with the drop it asked for.
      w.pushState();
      return reply(m.seq, n);
    }
    case 'cache-anchors':
      return reply(m.seq, w.cache ? w.cache.anchors(m.envId) : []);
    case 'upstream-failed':
      return applyBackOff(w, m);
    case 'upstream-closed':
      return applyClosed(w, m);
    case 'cache-set':
      w.cache?.setHere(m.key, m.text, m.envId, m.height, m.hash);
      return;
    case 'cache-get':
      return reply(m.seq, w.cache?.get(m.key));
    case 'request-log':
      return reply(m.seq, w.requestLog ? { seq: w.requestLog.seq, calls: w.requestLog.read(m.query) } : undefined);
    case 'instances':
      if (w.limits) w.limits.liveInstances = m.live;
      return;
    case 'reload':
      return reply(m.seq, reload(w, m));
    case 'drain':
      draining = true;
      // Idle keep-alive connections go now; busy ones are closed after their answer.
      w.server.closeIdleConnections();
      return reply(m.seq, true);
    case 'close-sockets':
      w.websockets.close().then(() => reply(m.seq, true), () => reply(m.seq, true));
      return;
    case 'stop':
      void stop(w.server, w.websockets).then(async () => {
        for (const t of w.timers) clearInterval(t);
        // The spans of the calls just finished (at most 2 s: the main thread waits for this answer).
        await w.tracing?.shutdown();
        // The last counts go with the answer: nothing counted is left behind. The main
        // thread ends this thread then; connections to upstreams and Redis go with it.
        reply(m.seq, w.meter.take());
      });
      return;
    case 'answer': {
      const resolve = pendingAsks.get(m.seq);
      pendingAsks.delete(m.seq);
      resolve?.(m.value);
      return;
    }
  }
}

/**
 * A config reload: the config updated in place (everything that reads it at use sees the new
 * values), the catalog replaced (endpoints look their environment up again), the upstreams told
 * their new settings, and the request path built again. Settings that cannot change live were
 * refused on the main thread before this message was sent.
 */
function reload(w: WorkerParts, m: Extract<ToWorker, { t: 'reload' }>): true {
  updateInPlace(start.config, m.config);
  w.catalog = catalogNow = new Catalog(m.networks, m.plans);
  w.registry.recatalog(w.catalog);
  w.upstreams.reconfigure(upstreamOptions(start.config.gateway, log));
  w.rebuild();
  return true;
}

function applyProbes(w: WorkerParts, envs: Extract<ToWorker, { t: 'probed' }>['envs']): void {
  for (const [envId, ups] of envs) {
    const env = w.catalog.environment(envId);
    if (!env) continue;
    const set = w.upstreams.for(envId, env.upstreams);
    set.upstreams.forEach((up, i) => {
      const p = ups[i];
      if (!p) return;
      // The probe's answer counts as one of this copy's own probe answers, as it does on a
      // single thread: back in the rotation unless client calls failed (health.ts, half-open).
      if (p[2]) up.probeOk(p[3] ?? up.latencyMs ?? 0);
      if (p[0] !== null) up.probed(p[0]);
      up.bestHead = p[1] ?? undefined;
    });
  }
}

function upstreamOf(w: WorkerParts, envId: number, index: number): Upstream | undefined {
  const env = w.catalog.environment(envId);
  return env ? w.upstreams.for(envId, env.upstreams).upstreams[index] : undefined;
}

/** Another worker's upstream failure, applied here (see shareBackOffs). */
function applyBackOff(w: WorkerParts, m: Extract<ToWorker, { t: 'upstream-failed' }>): void {
  const up = upstreamOf(w, m.envId, m.index);
  if (!up) return;
  up.downUntil = Math.max(up.downUntil, m.downUntil);
  up.consecutiveFailures = Math.max(up.consecutiveFailures, m.consecutiveFailures);
  // Workers send client calls only: the probe's answers do not end this back-off either.
  up.clientBackoff = true;
  up.lastError = m.reason;
  up.lastErrorAt = Date.now();
}

/** Another worker's trial call succeeded: the back-off ends here too (see shareBackOffs). */
function applyClosed(w: WorkerParts, m: Extract<ToWorker, { t: 'upstream-closed' }>): void {
  const up = upstreamOf(w, m.envId, m.index);
  if (up?.clientBackoff) up.closed();
}

/**
 * An upstream one worker saw fail is backed off by the others at once (through the main
 * thread), as a single gateway would: a provider's 429 is not met again by each worker in turn.
 * Likewise a trial call that ends a back-off ends it for all.
 */
function shareBackOffs(upstreams: UpstreamDirectory): void {
  const seen = new WeakSet<object>();
  const forEnv = upstreams.for.bind(upstreams);
  upstreams.for = (envId, urls) => {
    const set = forEnv(envId, urls);
    if (seen.has(set)) return set;
    seen.add(set);
    set.upstreams.forEach((up, index) => {
      const failed = up.failed.bind(up);
      up.failed = (reason: string, byClient?: boolean) => {
        failed(reason, byClient);
        post({ t: 'upstream-failed', envId, index, downUntil: up.downUntil, consecutiveFailures: up.consecutiveFailures, reason });
      };
      const ok = up.ok.bind(up);
      up.ok = (latencyMs: number) => {
        const trial = up.clientBackoff;
        ok(latencyMs);
        if (trial) post({ t: 'upstream-closed', envId, index });
      };
    });
    return set;
  };
}

/**
 * A final answer one worker fetched is copied to the others (through the main thread), so a
 * client whose next connection lands on another worker still gets it from memory.
 */
class ReplicatedCache extends ResponseCache {
  override set(key: string, text: string, envId: number, height: number | undefined, hash: string | undefined): void {
    super.set(key, text, envId, height, hash);
    post({ t: 'cache-set', key, text, envId, height: height ?? null, hash: hash ?? null });
  }

  setHere(key: string, text: string, envId: number, height: number | null, hash: string | null): void {
    super.set(key, text, envId, height ?? undefined, hash ?? undefined);
  }
}

let lastHealth = true;
/**
 * `/health` reports the store as the main thread last saw it; a main thread busy for a moment
 * (a long query, a flush) gets a second, then the last answer stands rather than a slow /health.
 */
async function storeHealthFromMain(): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => { timer = setTimeout(() => resolve(lastHealth), 1000); });
  const answer = ask<boolean>('health').then((ok) => (lastHealth = ok));
  try {
    return await Promise.race([answer, late]);
  } finally {
    clearTimeout(timer);
  }
}

function reply(seq: number, value: unknown): void {
  post({ t: 'reply', seq, value });
}

/** Stops accepting, closes client WebSockets, lets in-flight requests finish (at most 5 s). */
async function stop(server: Server, websockets: WebSocketGateway): Promise<void> {
  await websockets.close();
  if (!server.listening) return;
  await new Promise<void>((resolve) => {
    const timer = setTimeout(() => server.closeAllConnections(), 5000);
    server.close(() => {
      clearTimeout(timer);
      resolve();
    });
    server.closeIdleConnections();
  });
}

/** The access log's lines go to the main thread's logger. */
function workerLogger(): Logger {
  const make = (bindings: Record<string, unknown>): unknown => ({
    child: (more: Record<string, unknown>) => make({ ...bindings, ...more }),
    info: (obj: Record<string, unknown>, msg: string) => post({ t: 'access', obj: { ...bindings, ...obj }, msg }),
  });
  return make({}) as Logger;
}

main().catch((err: unknown) => post({ t: 'failed', code: (err as NodeJS.ErrnoException).code, message: (err as Error).stack ?? String(err) }));
