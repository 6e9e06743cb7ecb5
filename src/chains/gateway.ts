// The gateway traits: what the JSON-RPC gateway needs to know of a family's methods and nodes,
// filled by every family in its traits.ts (light: gateway workers load them). The gateway reads
// only these; no method name of any chain is written in src/gateway/ (test/chains-shape.test.ts).

import { RpcctlError } from '../util/errors.js';

/** The chain as the probe last saw it for one environment (best head, finalized height). */
export interface ChainView {
  head: number;
  finalized: number;
}

/** How the gateway may send one call. */
export interface CallClass {
  /** The call reads the chain head: upstreams lagging more than `max_lag_blocks` come last. */
  readonly needsHead: boolean;
  /** A read that may be sent twice at once: hedged when hedging is on. */
  readonly idempotent: boolean;
  /** After a failed try the call may go to another upstream; false: one try only (a transaction sent twice). */
  readonly retry: boolean;
}

/** A ranged query guarded by `max_logs_block_range` and priced per started `logs_block_unit` (EVM's log query). */
export interface RangeQuery {
  /** The method itself. */
  readonly method: string;
  /** A method that installs the same range server-side (a filter): refused over the limit, never split. */
  readonly filterMethod: string | undefined;
  /** The block range a call's params name (tags read from `view`); undefined: unknown or not a range. */
  range(params: unknown, view: ChainView | undefined): { from: number; to: number } | undefined;
  /** The params of the same query over `from..to` (a chunk of a split). */
  withRange(params: unknown, from: number, to: number): unknown[];
  /** What a split chunk's error message calls the query. */
  readonly label: string;
}

/** A family's method knowledge: classes of calls by method (and params). */
export interface MethodClasses {
  classOf(method: string, params: unknown): CallClass;
  /** Reads whose null may only mean "this node has not seen it yet": asked again of a node further ahead. */
  nullMayLag(method: string): boolean;
  /** Methods usage names as they are; any other name a client sends is counted as `other`. */
  isStandard(method: string): boolean;
  readonly rangeQuery: RangeQuery | undefined;
}

/** What a cache plan decided before the upstream was asked: the answer may be cached once it is in hand. */
export interface CacheDecision {
  /** The height the params name, if any; else it is read from the result. */
  height: number | undefined;
  /** Where the result says its block is; undefined: the params said it (or it never changes). */
  resultBlock: 'block' | 'tx' | undefined;
}

/**
 * Which answers cannot change: cached per environment until a reorg at their height. Never
 * anything that is not final, never a null, never an error.
 */
export interface CachePlan {
  decide(method: string, params: readonly unknown[], view: ChainView | undefined): CacheDecision | undefined;
  /** The height and block hash a result belongs to when it is final under `decision`; undefined: do not cache. */
  finalOf(decision: CacheDecision, result: unknown, view: ChainView | undefined): { height: number | undefined; hash: string | undefined } | undefined;
}

/** One request the probe sends to one upstream. */
export interface ProbeRequest {
  method: 'GET' | 'POST';
  path: string;
  body: string | undefined;
  contentType: string | undefined;
}

/** What one upstream told the probe. */
export interface ProbeReading {
  version: string | null;
  /** Its head (block, ledger or slot height); undefined when it told none. */
  head: number | undefined;
  /** Its own finalized height, where the family reports one. */
  finalized?: number | undefined;
  /** The node says it is unhealthy (behind, starting): counted as a failed probe. */
  unhealthy?: string | undefined;
}

/**
 * How the probe reads each upstream's version and head: the per-upstream head that lag-aware
 * choice measures against the best.
 */
export interface HeadProbe {
  request: ProbeRequest;
  /** Reads the answer; throws when it cannot (then `fallback`, if any, is tried). */
  read(status: number, text: string): ProbeReading;
  /** A simpler request when the first is refused (providers that refuse batches): the head alone. */
  fallback: { request: ProbeRequest; read(status: number, text: string): ProbeReading } | undefined;
  /** The hash of the block at a height (the cache's anchors after a reorg); undefined: the family caches nothing by block. */
  blockHash: { request(height: number): ProbeRequest; read(text: string): string | undefined } | undefined;
}

/** A JSON-RPC error class rule (the shape of `networks[].error_classes`). */
export interface NodeErrorRule {
  code?: number | undefined;
  message?: string | undefined;
  class: 'upstream' | 'caller' | 'method';
}

/** One kind of subscription of a WebSocket protocol: its subscribe call, unsubscribe call and notifications. */
export interface SubscriptionKind {
  readonly subscribe: string;
  readonly unsubscribe: string;
  readonly notification: string;
}

/** What the HTTP side offers a feed while no WebSocket upstream does (EVM: newHeads and logs, polled). */
export interface FeedPolling {
  /** The head height. */
  readonly head: string;
  /** A block by number and by hash (the header, parent hash): `[height or hash, false]`. */
  readonly blockByNumber: string;
  readonly blockByHash: string;
  /** The ranged log query for a logs feed. */
  readonly logs: string;
}

/** A family's WebSocket subscriptions, served on the endpoint's URL. */
export interface WsProtocol {
  readonly kinds: readonly SubscriptionKind[];
  /**
   * Checks and normalises a subscribe call's params into the feed it names (the same filter
   * written two ways shares one upstream subscription): `type` labels metrics and feeds.
   * Throws a `SubscribeParamsError` naming what is wrong.
   */
  normalise(kind: SubscriptionKind, params: unknown): { type: string; params: unknown[] };
  /** A new subscription id for a client: how the family writes them (EVM: a hex string; Solana: a number). */
  newId(): string | number;
  /** Feed types the HTTP side can serve by polling (undefined: none; feeds need a WebSocket upstream). */
  readonly polling: (FeedPolling & { types: readonly string[] }) | undefined;
}

/** Subscribe params the protocol refuses, with the JSON-RPC code to answer. */
export class SubscribeParamsError extends RpcctlError {
  readonly code = 'E_SUBSCRIBE_PARAMS';
  readonly rpcCode: number;
  constructor(rpcCode: number, message: string) {
    super(message);
    this.name = 'SubscribeParamsError';
    this.rpcCode = rpcCode;
  }
}

const EVERY_CALL: CallClass = { needsHead: true, idempotent: true, retry: true };

/** For families whose every call reads the head and may be sent twice (REST reads; Horizon and Tron's submits are keyed by the transaction). */
export const PLAIN_METHODS: MethodClasses = {
  classOf: () => EVERY_CALL,
  nullMayLag: () => false,
  isStandard: () => false,
  rangeQuery: undefined,
};

/** A probe of one request whose answer tells version and head, nothing to fall back to and no block hashes to check. */
export function singleRequestProbe(request: ProbeRequest, read: (text: string) => ProbeReading): HeadProbe {
  return {
    request,
    read: (status, text) => {
      if (status >= 400) throw new Error(`upstream answered ${status}`);
      return read(text);
    },
    fallback: undefined,
    blockHash: undefined,
  };
}
