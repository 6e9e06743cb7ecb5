import type { Config } from '../../config/index.js';
import { IpAllowlist } from '../../util/ip.js';
import { BodyBudget } from '../../util/body.js';
import type { EndpointLookup, EndpointState } from '../registry.js';
import type { UsageMeter } from '../meter.js';
import type { Metrics } from '../../metrics/index.js';
import type { WindowLimiter } from '../../limits/index.js';
import type { UpstreamDirectory } from '../upstreams/index.js';
import type { CallHandler } from '../calls.js';
import type { RequestLog } from '../request-log.js';
import type { Tracing } from '../../telemetry/index.js';

export interface GatewayDeps {
  config: Config;
  registry: EndpointLookup;
  meter: Pick<UsageMeter, 'record'>;
  upstreams: UpstreamDirectory;
  /** Finality cache, null retries and eth_getLogs guards (calls.ts); absent: plain forwarding. */
  calls?: CallHandler;
  log: (line: string) => void;
  metrics?: Metrics;
  /** RPS windows shared by every instance (Redis); without it each endpoint's window is in memory. */
  sharedRps?: WindowLimiter;
  /** The RPS windows of this machine's gateway workers (rps-shared.ts), used without `sharedRps`. */
  localRps: (ep: EndpointState, cost: number) => number;
  /** Whether the store answers, for `/health`. */
  storeHealth?: () => Promise<boolean>;
  /** This worker's row in the body budget all workers charge (util/body.ts). */
  bodyBudget?: { memory: SharedArrayBuffer; index: number };
  /** This worker's request logs (request-log.ts); absent: none kept. */
  requestLog?: RequestLog;
  /** Each call a span (trace.ts); absent (tracing off): nothing traced. */
  tracing?: Tracing | undefined;
  /** True once the service drains before it stops (SIGTERM): `/ready` answers 503. */
  draining?: () => boolean;
}

/** How many of `cost` requests an endpoint's RPS window admits now, or later (Redis). */
export type TakeRps = (ep: EndpointState, cost: number) => number | Promise<number>;

/**
 * What every request step reads, built once per server: the steps are plain functions over it,
 * so a request allocates no closures of its own.
 */
export interface GatewayContext {
  readonly g: Config['gateway'];
  readonly registry: EndpointLookup;
  readonly meter: Pick<UsageMeter, 'record'>;
  readonly upstreams: UpstreamDirectory;
  readonly calls: CallHandler | undefined;
  readonly takeRps: TakeRps;
  readonly storeHealth: (() => Promise<boolean>) | undefined;
  /** Proxies whose X-Forwarded-For names the client. */
  readonly trusted: IpAllowlist;
  /** `{host_prefix}-`: the Host labels checked against the endpoint's own. */
  readonly hostPrefix: string;
  readonly budget: BodyBudget;
  readonly requestLog: RequestLog | undefined;
  readonly tracing: Tracing | undefined;
  readonly draining: (() => boolean) | undefined;
}

export function gatewayContext(deps: GatewayDeps): GatewayContext {
  const g = deps.config.gateway;
  return {
    g,
    registry: deps.registry,
    meter: deps.meter,
    upstreams: deps.upstreams,
    calls: deps.calls,
    takeRps: rpsWindow(deps.sharedRps, deps.localRps),
    storeHealth: deps.storeHealth,
    trusted: new IpAllowlist(g.trusted_proxies),
    hostPrefix: `${g.host_prefix}-`,
    budget: new BodyBudget(g.max_inflight_bytes_per_ip, g.max_inflight_bytes, deps.bodyBudget),
    requestLog: deps.requestLog,
    tracing: deps.tracing,
    draining: deps.draining,
  };
}

/**
 * Where the endpoints' RPS windows count: this machine's shared windows (synchronous), or
 * shared by every instance through `shared` (Redis), which answers later. Either way the answer
 * is how many of `cost` requests were admitted.
 */
export function rpsWindow(shared: WindowLimiter | undefined, local: (ep: EndpointState, cost: number) => number): TakeRps {
  if (!shared) return local;
  // Keyed by the endpoint's id, not its UUID: the UUID is the endpoint's URL, a credential.
  return (ep, cost) => shared.admit(String(ep.id), ep.rpsLimit, cost);
}
