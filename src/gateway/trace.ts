import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { Environment } from '../store/index.js';
import type { Span, Tracing } from '../telemetry/index.js';
import type { EndpointState } from './registry.js';
import { loggedMethod } from './request-log.js';

/**
 * One gateway call's span while it is handled (tracing on only): its upstream attempts are
 * child spans (upstreams/call-handler.ts), and what the call's span reports at its end is
 * gathered here as the steps learn it. Handed down explicitly (UpstreamRequest.trace, the
 * `trace` arguments of calls.ts and integrity.ts), never through an AsyncLocalStorage: on
 * Node 22 (and 24 under --no-async-context-frame) one used once turns on async hooks for the
 * whole thread for good, and every promise of every call, sampled or not, pays for it (3-5x
 * for a loop of awaits). The pinned Node 24 runs it on AsyncContextFrame, which is cheap.
 */
export interface CallTrace {
  readonly tracing: Tracing;
  readonly span: Span;
  attempts: number;
  /** The upstream that answered last (scheme://host:port: its path may hold a key). */
  upstream: string | undefined;
  cacheHit: boolean;
  /** A WebSocket call's answer was this JSON-RPC error (its span's status: no HTTP status per message). */
  rpcCode?: number | undefined;
}

/** Each HTTP call's trace, found by its response (every step of the HTTP path has it). */
const calls = new WeakMap<ServerResponse, CallTrace>();

/**
 * Handles one request inside a span of its own: a child of the client's `traceparent` when it
 * sent one. The span ends when the answer is sent (or the client went away); the steps find
 * it with `traceOf(res)`.
 */
export function traced<T>(tracing: Tracing, req: IncomingMessage, res: ServerResponse, handle: () => T): T {
  const span = tracing.start('gateway', 'server', req.headers);
  const t: CallTrace = { tracing, span, attempts: 0, upstream: undefined, cacheHit: false };
  calls.set(res, t);
  // Attributes and the end only once it is known to be recorded: ending an unsampled span
  // does nothing, so most calls (unsampled) carry no listener and no attributes.
  if (span.isRecording()) {
    span.setAttribute('http.request.method', req.method ?? '');
    res.once('close', () => endCall(t, res));
  }
  return handle();
}

/** The HTTP call `res` answers, if tracing is on. */
export function traceOf(res: ServerResponse): CallTrace | undefined {
  return calls.get(res);
}

function endCall(t: CallTrace, res: ServerResponse): void {
  const { span } = t;
  if (span.isRecording()) {
    const status = res.writableFinished ? res.statusCode : 499;
    span.setAttributes({ 'http.response.status_code': status, 'rpcctl.attempts': t.attempts, 'rpcctl.cache_hit': t.cacheHit });
    if (t.upstream) span.setAttribute('rpcctl.upstream', t.upstream);
    if (status >= 500) t.tracing.fail(span, `HTTP ${status}`);
  }
  span.end();
}

/**
 * Handles one WebSocket message (a call or a batch) inside a span of its own: a child of the
 * `traceparent` the client sent on the upgrade request (`parent`), if any. The span ends once
 * the message is answered; `traceReply` gives it the answer's error code.
 */
export function tracedMessage(tracing: Tracing, parent: IncomingHttpHeaders | undefined, ep: EndpointState, env: Environment, handle: (t: CallTrace) => Promise<void>): Promise<void> {
  const span = tracing.start('gateway', 'server', parent);
  if (span.isRecording()) {
    span.setAttributes({ 'rpcctl.transport': 'ws', 'rpcctl.network': env.network.slug, 'rpcctl.environment': env.slug, 'rpcctl.endpoint.id': ep.id });
  }
  const t: CallTrace = { tracing, span, attempts: 0, upstream: undefined, cacheHit: false };
  if (!span.isRecording()) return handle(t);
  return handle(t).then(() => endMessage(t), (err: unknown) => {
    endMessage(t, err);
    throw err;
  });
}

/** The gateway's own failures: what the HTTP path answers with a 5xx (upstream failed or timed out, internal error). */
const FAILED_CODES = new Set([-32010, -32011, -32603]);

function endMessage(t: CallTrace, err?: unknown): void {
  const { span } = t;
  if (span.isRecording()) {
    span.setAttributes({ 'rpcctl.attempts': t.attempts, 'rpcctl.cache_hit': t.cacheHit });
    if (t.upstream) span.setAttribute('rpcctl.upstream', t.upstream);
    if (t.rpcCode !== undefined) span.setAttribute('rpc.jsonrpc.error_code', t.rpcCode);
    if (err !== undefined) t.tracing.fail(span, 'internal error');
    else if (t.rpcCode !== undefined && FAILED_CODES.has(t.rpcCode)) t.tracing.fail(span, `JSON-RPC error ${t.rpcCode}`);
  }
  span.end();
}

/** Error answers are small: a longer one is taken for a result (not parsed on a traced call's path). */
const MAX_ERROR_TEXT = 4096;

/** A WebSocket call's answer as sent: a single call's JSON-RPC error code, if it is one (a batch's answers are not read). */
export function traceReply(t: CallTrace | undefined, text: string): void {
  if (!t?.span.isRecording() || text.length > MAX_ERROR_TEXT || text.charCodeAt(0) !== 123 || !text.includes('"error"')) return;
  try {
    const code = (JSON.parse(text) as { error?: { code?: unknown } }).error?.code;
    if (typeof code === 'number') t.rpcCode = code;
  } catch { /* not JSON: nothing to add */ }
}

/** The endpoint the call is for (network, environment, endpoint id). */
export function traceEndpoint(t: CallTrace | undefined, ep: EndpointState): void {
  if (!t?.span.isRecording()) return;
  const env = ep.env!;
  t.span.setAttributes({ 'rpcctl.network': env.network.slug, 'rpcctl.environment': env.slug, 'rpcctl.endpoint.id': ep.id });
}

/** The JSON-RPC method (a batch: its size and first method; REST: `GET /path`); the span is named after it. */
export function traceMethod(t: CallTrace | undefined, method: string, batch?: number, rest = false): void {
  if (!t?.span.isRecording()) return;
  const m = loggedMethod(method);
  t.span.updateName(batch === undefined ? m : `batch ${m}`);
  t.span.setAttribute('rpc.method', m);
  if (!rest) t.span.setAttribute('rpc.system', 'jsonrpc');
  if (batch !== undefined) t.span.setAttribute('rpcctl.batch_size', batch);
}

/** Answered from the cache, no upstream asked. */
export function traceCacheHit(t: CallTrace | undefined): void {
  if (t) t.cacheHit = true;
}

/**
 * One attempt at an upstream, as a child of the call's span; its `traceparent` goes in
 * `headers`. `done` ends it with the answer's status or the failure. `label`: the upstream's
 * scheme://host:port (its path may hold a key). Only within a client's call (`t`): a
 * subscription feed's polls and the probe's calls have none, make no span and send no traceparent.
 */
export function traceAttempt(t: CallTrace, label: string, method: string, headers: Record<string, string>): ((status: number | undefined, error?: unknown) => void) | undefined {
  const tracing = t.tracing;
  t.attempts++;
  // An unsampled call (most) records nothing below it: no child span, no end to wait for; the
  // node still gets its trace id and its flags (not sampled), the call's span as the parent.
  if (!t.span.isRecording()) {
    tracing.inject(t.span, headers);
    return undefined;
  }
  const span = tracing.start(`upstream ${method === '' ? 'batch' : loggedMethod(method)}`, 'client', t.span);
  if (span.isRecording()) span.setAttribute('rpcctl.upstream', label);
  tracing.inject(span, headers);
  return (status, error) => {
    if (span.isRecording()) {
      if (status !== undefined) span.setAttribute('http.response.status_code', status);
      if (error !== undefined) tracing.fail(span, error instanceof Error ? error.message : String(error));
    }
    if (error === undefined) t.upstream = label;
    span.end();
  };
}
