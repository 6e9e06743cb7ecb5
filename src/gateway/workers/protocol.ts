import type { Config } from '../../config/index.js';
import type { Network, CatalogPlan } from '../../store/index.js';
import type { ChainView, CacheStats } from '../cache.js';
import type { UpstreamSnapshot } from '../health.js';
import type { EndpointPack, EndpointWire } from '../registry.js';
import type { CallQuery } from '../request-log.js';
import type { TracingSetup } from '../../telemetry/index.js';

/** What a gateway worker starts from (its `workerData`). */
export interface WorkerStart {
  index: number;
  workers: number;
  config: Config;
  networks: Network[];
  plans: CatalogPlan[];
  port: number;
  host: string;
  /** The shared RPS windows (rps-shared.ts). */
  windows: SharedArrayBuffer;
  /** Open WebSockets per endpoint (rps-shared.ts). */
  sockets: SharedArrayBuffer;
  /** Request-body bytes in flight, per client address across workers (util/body.ts). */
  bodyBudget: SharedArrayBuffer;
  endpoints: EndpointPack;
  chain: Array<[number, ChainView]>;
  metricsEnabled: boolean;
  /** Redis for RPS windows and the cache's shared tier, when the service has one. */
  redis: { url: string; keyPrefix: string; sharedCache: boolean } | undefined;
  /** Live instances of the fleet (heartbeats): the RPS windows' share while Redis is away. */
  liveInstances: number;
  accessLog: boolean;
  /** Where this worker exports its spans (tracing on only): each worker has its own exporter. */
  tracing: TracingSetup | undefined;
}

/** A usage count: endpoint, account, method, requests, credits, a time in its UTC day. */
export type UsageWire = [number, number, string, number, number, number];

/** What the probe learnt of one upstream, for the workers' copies: head, best head, reached this round, latency. */
export type ProbedWire = [head: number | null, bestHead: number | null, reached: boolean, latencyMs: number | null];

export type ToWorker =
  | { t: 'endpoints'; seq: number; rows: EndpointWire[] }
  | { t: 'chain'; views: Array<[number, ChainView]> }
  | { t: 'probed'; envs: Array<[number, ProbedWire[]]> }
  | { t: 'usage'; seq: number }
  | { t: 'metrics'; seq: number }
  | { t: 'cache-drop'; seq: number; envId: number; height: number }
  | { t: 'cache-anchors'; seq: number; envId: number }
  | { t: 'cache-get'; seq: number; key: string }
  /** One endpoint's request log; answered with this worker's `{ seq, calls: CallWire[] }`. */
  | { t: 'request-log'; seq: number; query: CallQuery }
  | CacheSet
  | UpstreamFailed
  | UpstreamClosed
  | { t: 'close-sockets'; seq: number }
  | { t: 'instances'; live: number }
  /** The service drains before it stops: `/ready` answers 503 from now on. */
  | { t: 'drain'; seq: number }
  /** A config reload (answered once applied): the whole config, and the catalog the store now holds. */
  | { t: 'reload'; seq: number; config: Config; networks: Network[]; plans: CatalogPlan[] }
  | { t: 'stop'; seq: number }
  | { t: 'answer'; seq: number; value: unknown };

export type FromWorker =
  | { t: 'listening' }
  | { t: 'failed'; code: string | undefined; message: string }
  | { t: 'reply'; seq: number; value: unknown }
  | { t: 'usage-push'; rows: UsageWire[] }
  | CacheSet
  | UpstreamFailed
  | UpstreamClosed
  | { t: 'log'; line: string }
  /** This worker's Redis client for `part` (limits, cache) lost Redis or has it back. */
  | { t: 'redis'; part: string; down: boolean; reason: string }
  | { t: 'access'; obj: Record<string, unknown>; msg: string }
  | { t: 'state'; subscriptions: number; upstreams: Array<[number, UpstreamSnapshot[]]>; cache: CacheStats | undefined }
  /** A question to the main thread ('health'); answered with 'answer'. */
  | { t: 'ask'; seq: number; what: 'health' };

/** A final answer one worker cached, for the others. */
export interface CacheSet { t: 'cache-set'; key: string; text: string; envId: number; height: number | null; hash: string | null }

/** An upstream whose back-off from client failures one worker's trial call ended: ended by the others too. */
export interface UpstreamClosed { t: 'upstream-closed'; envId: number; index: number }

/** An upstream one worker saw fail, backed off by the others too. */
export interface UpstreamFailed { t: 'upstream-failed'; envId: number; index: number; downUntil: number; consecutiveFailures: number; reason: string }
