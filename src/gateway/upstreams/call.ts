import type { Upstream } from './upstream.js';
import type { UpstreamBody } from './body.js';
import { RpcctlError } from '../../util/errors.js';
import type { CallTrace } from '../trace.js';

/**
 * Every upstream failed (`E_UPSTREAM_FAILED`), timed out or the call's deadline passed
 * (`E_UPSTREAM_TIMEOUT`), or none serves the call's method (`E_METHOD_UNSUPPORTED`).
 */
export class UpstreamError extends RpcctlError {
  readonly code: 'E_UPSTREAM_FAILED' | 'E_UPSTREAM_TIMEOUT' | 'E_METHOD_UNSUPPORTED';
  /**
   * The node's own answer when it failed with a JSON-RPC error classified as its fault (or
   * "method not found"): what the client gets when no other upstream does better.
   */
  answer: UpstreamResponse | undefined;
  constructor(timeout: boolean | 'method', cause: unknown) {
    super(timeout === 'method' ? 'method not found' : timeout ? 'upstream timed out' : 'upstream failed', { cause });
    this.name = 'UpstreamError';
    this.code = timeout === 'method' ? 'E_METHOD_UNSUPPORTED' : timeout ? 'E_UPSTREAM_TIMEOUT' : 'E_UPSTREAM_FAILED';
  }
}

export interface UpstreamResponse {
  status: number;
  contentType: string | undefined;
  /** The upstream's declared Content-Length, if any: how the relay knows an answer is large before reading it. */
  contentLength: number | undefined;
  body: UpstreamBody;
  /** The upstream that answered. */
  upstream: Upstream;
  /** The first JSON-RPC error code in a judged answer (one small enough to be judged, rpc-errors.ts), for the request log. */
  readonly rpcCode: number | undefined;
  /**
   * The relay's way around the stream: calls back once with the whole body when it is at most
   * `BUFFERED_BYTES`, with the error that cut it, or with neither when it turned out larger
   * (then read on from `body`, which starts with what came so far). False: read `body`.
   */
  whole(done: (err: Error | undefined, body: Buffer | undefined) => void): boolean;
  /** Cancels the upstream's answer (the client went away). */
  cancel(): void;
}

export interface UpstreamRequest {
  method: string;
  /** Appended to the upstream URL's own path; '' for JSON-RPC. Includes the query string. */
  path: string;
  body: Buffer | undefined;
  contentType: string | undefined;
  /** Ends the call at once (shutdown); an aborted call does not count against the upstream. */
  signal?: AbortSignal;
  /**
   * Bitcoin Core answers JSON-RPC 1.0 errors with HTTP 500 and a JSON body: that is the node's
   * answer to pass on, not a failed node to move away from.
   */
  rpcErrorsAre500?: boolean;
  /**
   * A JSON-RPC call's method ('' for a batch): its answer is checked for errors that are the
   * node's fault (rpc-errors.ts) before it is handed on, and it goes only to upstreams that serve
   * the method. Undefined: passed on as answered (REST, the probe).
   */
  rpcMethod?: string;
  /** The probe's call: its success does not end a back-off client calls caused (health.ts). */
  probe?: boolean;
  /**
   * The client call it is sent for (tracing on): each attempt is a child span of it and sends its
   * traceparent. Absent (tracing off, the probe, a subscription feed's polls): no span, no traceparent.
   */
  trace?: CallTrace | undefined;
}

export interface RouteHints {
  /** The call reads the chain head (`latest`, `pending`, no block): upstreams lagging too far come last. */
  needsHead?: boolean;
  /** A read that may be sent twice: hedged when hedging is on. */
  idempotent?: boolean;
  /** False: one try only, on the best upstream (a transaction the chain must not get twice from us); default true. */
  retry?: boolean;
  /** Only these upstreams (a retry elsewhere). */
  only?: (u: Upstream) => boolean;
  /** The client call's deadline (performance.now() ms) across all its sends; default: from this send. */
  deadline?: number;
  /** A batch's methods: only upstreams configured to serve them all (if any do). */
  methods?: readonly string[];
}

