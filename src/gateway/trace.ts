import { AsyncLocalStorage } from 'node:async_hooks';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { Environment } from '../store/index.js';
import type { Span, Tracing } from '../telemetry/index.js';
import type { EndpointState } from './registry.js';
import { loggedMethod } from './request-log.js';

/**
 * One gateway call's span while it is handled (tracing on only): its upstream attempts are
 * child spans (upstreams/call-handler.ts), and what the call's span reports at its end is
 * gathered here as the steps learn it.
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

/**
 * The call being handled, across its awaits: the upstream attempts deep in calls.ts, the
 * integrity checks and hedges find their parent here without every step passing it on.
 * Created with the first traced call, so a gateway without tracing has none.
 */
let current: AsyncLocalStorage<CallTrace> | undefined;

/**
 * Handles one request inside a span of its own: a child of the client's `traceparent` when it
 * sent one. The span ends when the answer is sent (or the client went away).
 */
export function traced<T>(tracing: Tracing, req: IncomingMessage, res: ServerResponse, handle: () => T): T {
  // Attributes only once it is known to be recorded: an unsampled span (most) costs less so.
  const span = tracing.start('gateway', 'server', req.headers);
  if (span.isRecording()) span.setAttribute('http.request.method', req.method ?? '');
  const t: CallTrace = { tracing, span, attempts: 0, upstream: undefined, cacheHit: false };
  res.once('close', () => endCall(t, res));
  current ??= new AsyncLocalStorage();
  return current.run(t, handle);
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
export function tracedMessage(tracing: Tracing, parent: IncomingHttpHeaders | undefined, ep: EndpointState, env: Environment, handle: () => Promise<void>): Promise<void> {
  const span = tracing.start('gateway', 'server', parent);
  if (span.isRecording()) {
    span.setAttributes({ 'rpcctl.transport': 'ws', 'rpcctl.network': env.network.slug, 'rpcctl.environment': env.slug, 'rpcctl.endpoint.id': ep.id });
  }
  const t: CallTrace = { tracing, span, attempts: 0, upstream: undefined, cacheHit: false };
  current ??= new AsyncLocalStorage();
  return current.run(t, handle).then(() => endMessage(t), (err: unknown) => {
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
export function traceReply(text: string): void {
  const t = callTrace();
  if (!t?.span.isRecording() || text.length > MAX_ERROR_TEXT || text.charCodeAt(0) !== 123 || !text.includes('"error"')) return;
  try {
    const code = (JSON.parse(text) as { error?: { code?: unknown } }).error?.code;
    if (typeof code === 'number') t.rpcCode = code;
  } catch { /* not JSON: nothing to add */ }
}

/**
 * Runs `fn` outside any call's span: work it starts that outlives the call (a subscription's
 * feed and its polls) must not make spans in, or count attempts for, the call that started it.
 */
export function untraced<T>(fn: () => T): T {
  return current ? current.exit(fn) : fn();
}

/** The call being handled on this async path, if it is traced. */
export function callTrace(): CallTrace | undefined {
  return current?.getStore();
}

/** The endpoint the call is for (network, environment, endpoint id). */
export function traceEndpoint(ep: EndpointState): void {
  const t = callTrace();
  if (!t?.span.isRecording()) return;
  const env = ep.env!;
  t.span.setAttributes({ 'rpcctl.network': env.network.slug, 'rpcctl.environment': env.slug, 'rpcctl.endpoint.id': ep.id });
}

/** The JSON-RPC method (a batch: its size and first method; REST: `GET /path`); the span is named after it. */
export function traceMethod(method: string, batch?: number, rest = false): void {
  const t = callTrace();
  if (!t?.span.isRecording()) return;
  const m = loggedMethod(method);
  t.span.updateName(batch === undefined ? m : `batch ${m}`);
  t.span.setAttribute('rpc.method', m);
  if (!rest) t.span.setAttribute('rpc.system', 'jsonrpc');
  if (batch !== undefined) t.span.setAttribute('rpcctl.batch_size', batch);
}

/** Answered from the cache, no upstream asked. */
export function traceCacheHit(): void {
  const t = callTrace();
  if (t) t.cacheHit = true;
}

/**
 * One attempt at an upstream, as a child of the call's span; its `traceparent` goes in
 * `headers`. `done` ends it with the answer's status or the failure. `label`: the upstream's
 * scheme://host:port (its path may hold a key). Undefined outside a client's call (a
 * subscription feed's polls): those make no span and send no traceparent.
 */
export function traceAttempt(tracing: Tracing, label: string, method: string, headers: Record<string, string>): ((status: number | undefined, error?: unknown) => void) | undefined {
  const t = callTrace();
  if (!t) return undefined;
  const span = tracing.start(`upstream ${method === '' ? 'batch' : loggedMethod(method)}`, 'client', t?.span);
  if (span.isRecording()) span.setAttribute('rpcctl.upstream', label);
  tracing.inject(span, headers);
  t.attempts++;
  return (status, error) => {
    if (span.isRecording()) {
      if (status !== undefined) span.setAttribute('http.response.status_code', status);
      if (error !== undefined) tracing.fail(span, error instanceof Error ? error.message : String(error));
    }
    if (error === undefined) t.upstream = label;
    span.end();
  };
}
