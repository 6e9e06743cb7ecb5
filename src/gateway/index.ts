import { releaseBodyBudgetThread, sharedBodyBudgetMemory } from '../util/body.js';
import type { Config } from '../config/index.js';
import { storeHealth, type Store } from '../store/index.js';
import { EndpointRegistry } from './registry.js';
import { UsageMeter } from './meter.js';
import { networkPolicy, upstreamOptions, UpstreamDirectory } from './upstreams/index.js';
import { NodeProbe } from './probe.js';
import type { CacheStats, ChainView } from './cache.js';
import { registerUpstreamMetrics } from './upstream-metrics.js';
import { Metrics } from '../metrics/index.js';
import type { Logger } from '../log/index.js';
import type { UpstreamSnapshot } from './health.js';
import { SharedWindows } from './rps-shared.js';
import { GatewayWorkers } from './workers/pool.js';
import type { ProbedWire } from './workers/protocol.js';
import type { RedisOutage } from '../limits/outage.js';
import { Supervisor } from '../runtime/supervisor.js';
import { mergeCalls, parseCursor, parseId, type RequestLogRead } from './request-log.js';
import type { TracingSetup } from '../telemetry/index.js';

export { priceRpc, priceRest } from '../pricing/credits.js';
export { RPC_ERRORS } from './errors.js';
export { RedisCacheTier, type RedisCacheOptions } from './cache-redis.js';
export type { EndpointRegistry, EndpointState } from './registry.js';
export type { UsageMeter } from './meter.js';
export type { UpstreamSnapshot } from './health.js';
export { UPSTREAM_STATE_FILE, type UpstreamStateFile } from './probe.js';
export { registerUpstreamMetrics } from './upstream-metrics.js';
export { GatewayListenError, type GatewayWorkers } from './workers/pool.js';
export type { RequestLogRead } from './request-log.js';

/** Usage counted by the gateway workers; `flush()` writes everything counted so far. */
export interface GatewayMeter {
  flush(): Promise<void>;
  readonly meter: UsageMeter;
}

export interface RequestLogQuery {
  limit: number;
  errorsOnly?: boolean;
  method?: string | undefined;
  after?: string | undefined;
  /** A previous page's `next_before`: older calls only. */
  before?: string | undefined;
}

/** The workers' response caches seen together (tests and the probe's reorg checks). */
export interface GatewayCache {
  get(key: string): Promise<string | undefined>;
  /** Whether every worker holds the answer: a fill in one reaches the others a moment later. */
  everywhere(key: string): Promise<boolean>;
  dropFrom(envId: number, height: number): Promise<number>;
  anchors(envId: number): Promise<Array<[number, string]>>;
  /** Summed over the workers, as they last reported (every 50 ms). */
  snapshot(): CacheStats;
}

export interface Gateway {
  /** The main thread's registry: the source of the workers' endpoint copies. */
  registry: EndpointRegistry;
  meter: GatewayMeter;
  probe: NodeProbe;
  /** Upstream health as the probe and the workers' traffic saw it. */
  upstreams: { snapshot(): Map<number, UpstreamSnapshot[]> };
  cache: GatewayCache | undefined;
  /** Head and finalized height per environment id, from the probe. */
  chain: Map<number, ChainView>;
  websockets: { readonly subscriptions: number };
  workers: GatewayWorkers;
  /**
   * An endpoint's recent calls on this instance (every worker's ring merged), newest first;
   * `after`: a previous read's cursor, for only what came since.
   */
  requestLog(endpointId: number, q: RequestLogQuery): Promise<RequestLogRead>;
  /** Starts the worker threads on the port (0: any) and resolves with the port once all listen. */
  listen(port: number, host: string): Promise<number>;
  /**
   * A config reload, after the config was updated in place and the store's catalog synced: the
   * workers take the new settings and catalog, then every endpoint is read again (plans' limits).
   */
  reload(): Promise<void>;
  /** `/ready` answers 503 from now on while calls are still served (SIGTERM, before close). */
  drain(): Promise<void>;
  /** Stops the listeners: client WebSockets closed (1001), in-flight requests finished, usage taken. */
  close(): Promise<void>;
  /** Stops background work and flushes usage; call after close(). */
  stop(): Promise<void>;
}

/**
 * The gateway: listeners in `gateway.workers` worker threads (workers/), which never touch the
 * store; here on the main thread, what feeds them: the endpoint registry (changes pushed), the
 * probe (chain views and upstream state pushed), and the usage meter (counts taken from them
 * and written to the store).
 */
export async function createGateway(
  store: Store, config: Config, log: (line: string) => void, metrics: Metrics = new Metrics({ enabled: false }), logger?: Logger,
  opts: {
    redis?: { url: string; keyPrefix: string; sharedCache: boolean }; supervisor?: Supervisor; redisOutage?: RedisOutage;
    /** Tracing on: each worker opens its own exporter with this. */
    tracing?: TracingSetup | undefined;
  } = {},
): Promise<Gateway> {
  const g = config.gateway;
  // The registry check, usage flush and probe: a failure (the store away) is logged, counted and retried.
  const supervisor = opts.supervisor ?? new Supervisor({ log, logger, metrics });
  const windows = new SharedWindows(g.workers);
  const registry = new EndpointRegistry(store, config);
  registry.onSlots = (n) => windows.ensure(n);
  let workers: GatewayWorkers | undefined;
  registry.onChange = async (rows) => { await workers?.endpoints(rows); };
  await registry.start(g.registry_reload_ms, supervisor);
  const meter = new UsageMeter(store, log, { supervisor });
  meter.start(g.usage_flush_ms);
  meter.observe(metrics);
  // The probe's own pools: it asks each node once, however many workers serve.
  const upstreams = new UpstreamDirectory(
    upstreamOptions(g, log),
    (envId) => {
      const network = store.catalog.environment(envId)?.network;
      return networkPolicy(config.networks.find((n) => n.slug === network?.slug), network?.family);
    },
  );
  const chain = new Map<number, ChainView>();
  const health = storeHealth(() => store.ping());
  const access = logger?.child({ component: 'gateway' });
  const bodyBudget = sharedBodyBudgetMemory(g.workers);
  const pool = new GatewayWorkers({
    count: g.workers,
    start: () => ({
      config, networks: store.catalog.networks, plans: store.catalog.plans, windows: windows.buffer, sockets: windows.sockets, bodyBudget, endpoints: registry.snapshot(),
      chain: [...chain], metricsEnabled: metrics.enabled, redis: opts.redis, accessLog: logger !== undefined, tracing: opts.tracing,
    }),
    log,
    onExit: (index) => {
      windows.releaseWorker(index);
      opts.redisOutage?.forget(`worker ${index} `);
      releaseBodyBudgetThread(bodyBudget, index);
    },
    onUsage: (rows) => {
      // Each row's day is the worker's: counts made just before midnight stay on that day.
      for (const [endpointId, accountId, method, requests, credits, dayStart] of rows) meter.record(endpointId, accountId, method, credits, requests, dayStart);
    },
    onAccess: (obj, msg) => access?.info(obj, msg),
    health,
    onRedis: (index, part, down, reason) => opts.redisOutage?.report(`worker ${index} ${part}`, down, reason),
  });
  workers = pool;
  if (metrics.enabled) metrics.addThreads(() => pool.metrics());

  const cache: GatewayCache | undefined = g.cache_max_bytes > 0 ? {
    get: async (key) => (await pool.cacheGet(key)).find((v) => v !== undefined),
    everywhere: async (key) => (await pool.cacheGet(key)).every((v) => v !== undefined),
    dropFrom: (envId, height) => pool.cacheDrop(envId, height),
    anchors: (envId) => pool.cacheAnchors(envId),
    snapshot: () => pool.cacheStats() ?? { hits: 0, misses: 0, entries: 0, bytes: 0, dropped: 0 },
  } : undefined;
  const probedAt = new Map<string, string | null>();
  const upstreamView = { snapshot: () => mergeUpstreams(upstreams.snapshot(), pool.upstreamViews()) };
  const probe = new NodeProbe(store, upstreams, log, {
    cache, views: chain, state: upstreamView.snapshot, supervisor,
    onRound: (roundEnd) => {
      pool.chain([...chain]);
      if (roundEnd) pool.probed([...upstreamsProbed(upstreams, probedAt)]);
    },
  });
  probe.start(g.probe_interval_ms);
  // Selection state, chain heights and the cache are served on the same /metrics as the rest.
  if (metrics.enabled) registerUpstreamMetrics(metrics.registry, { upstreams: upstreamView, cache, chain, catalog: store.catalog });

  let closed: Promise<void> | undefined;
  const close = () => {
    closed ??= (async () => {
      await registry.stop();
      await pool.stop();
    })();
    return closed;
  };
  return {
    registry, probe, upstreams: upstreamView, cache, chain, workers: pool,
    meter: {
      meter,
      async flush() {
        await pool.collectUsage();
        await meter.flush();
      },
    },
    websockets: { get subscriptions() { return pool.subscriptions; } },
    async requestLog(endpointId, q) {
      const after = parseCursor(q.after);
      const before = q.before === undefined ? undefined : parseId(q.before);
      return mergeCalls(await pool.requestLog({ endpointId, errorsOnly: q.errorsOnly ?? false, method: q.method }, after), after, q.limit, before);
    },
    listen: (port, host) => pool.listen(port, host),
    async reload() {
      upstreams.reconfigure(upstreamOptions(g, log));
      await pool.reload(config, store.catalog.networks, store.catalog.plans);
      await registry.recatalog();
    },
    drain: () => pool.drain(),
    close,
    async stop() {
      await close();
      await probe.stop();
      await meter.stop();
      await upstreams.close();
    },
  };
}

/**
 * What the probe learnt of each upstream, in config order, for the workers' copies; `reached`
 * only for the upstreams this round's probe got an answer from (`seen`: the last probe times).
 */
function* upstreamsProbed(dir: UpstreamDirectory, seen: Map<string, string | null>): Generator<[number, ProbedWire[]]> {
  for (const [envId, snaps] of dir.snapshot()) {
    yield [envId, snaps.map((s, i) => {
      const key = `${envId}/${i}`;
      const fresh = s.probed_at !== null && seen.get(key) !== s.probed_at;
      seen.set(key, s.probed_at);
      return [s.head, s.head === null || s.lag === null ? null : s.head + s.lag, fresh && s.status !== 'down', s.latency_ms];
    })];
  }
}

/**
 * One view of each upstream from the probe's (head, lag, probe time) and the workers' (their
 * traffic: requests, failures, latency, back-off): down when any worker backs off from it.
 */
/** The newest error any view saw (ISO times compare as text): a worker's older one must not hide it. */
function newestError(views: UpstreamSnapshot[]): Pick<UpstreamSnapshot, 'last_error' | 'last_error_at'> {
  let newest: UpstreamSnapshot | undefined;
  for (const u of views) if (u.last_error !== null && (!newest || (u.last_error_at ?? '') > (newest.last_error_at ?? ''))) newest = u;
  return { last_error: newest?.last_error ?? null, last_error_at: newest?.last_error_at ?? null };
}

function mergeUpstreams(probe: Map<number, UpstreamSnapshot[]>, workers: Array<Map<number, UpstreamSnapshot[]>>): Map<number, UpstreamSnapshot[]> {
  const out = new Map<number, UpstreamSnapshot[]>();
  const envIds = new Set<number>([...probe.keys(), ...workers.flatMap((w) => [...w.keys()])]);
  for (const envId of envIds) {
    const base = probe.get(envId);
    const views = workers.map((w) => w.get(envId)).filter((v): v is UpstreamSnapshot[] => v !== undefined);
    const n = Math.max(base?.length ?? 0, ...views.map((v) => v.length));
    const merged: UpstreamSnapshot[] = [];
    for (let i = 0; i < n; i++) {
      const p = base?.[i];
      const ws = views.map((v) => v[i]).filter((u): u is UpstreamSnapshot => u !== undefined);
      const first = p ?? ws[0]!;
      const all = p ? [p, ...ws] : ws;
      const measured = all.filter((u) => u.latency_ms !== null && u.requests > 0).sort((a, b) => b.requests - a.requests);
      const down = all.filter((u) => u.status === 'down').sort((a, b) => (b.down_until ?? '').localeCompare(a.down_until ?? ''))[0];
      const m: UpstreamSnapshot = {
        ...first,
        status: down ? 'down' : first.status,
        latency_ms: measured[0]?.latency_ms ?? first.latency_ms,
        error_rate: Math.max(...all.map((u) => u.error_rate)),
        requests: all.reduce((a, u) => a + u.requests, 0),
        failures: all.reduce((a, u) => a + u.failures, 0),
        consecutive_failures: Math.max(...all.map((u) => u.consecutive_failures)),
        down_until: down?.down_until ?? null,
        ...newestError(all),
      };
      if (p) {
        m.head = p.head;
        m.lag = p.lag;
        m.probed_at = p.probed_at;
        if (!down && p.status !== 'down') m.status = p.status;
      }
      merged.push(m);
    }
    out.set(envId, merged);
  }
  return out;
}
