import { addAbortListener } from 'node:events';
import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';
import { BUFFERED_BYTES, UpstreamBody } from './body.js';
import { UpstreamError, type UpstreamRequest, type UpstreamResponse } from './call.js';
import type { Upstream } from './upstream.js';
import type { ErrorClassifier } from './rpc-errors.js';
import { traceAttempt } from '../trace.js';

const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT']);

/**
 * One request to one upstream, as undici's dispatch handler; `hedge` aborts it when the other of
 * a hedged pair won. `judge`: JSON-RPC answers are checked for the node's errors before they are
 * handed on. `timeoutMs`: shorter than the pool's timeout (what is left of the call's deadline).
 */
export function dispatchTo(up: Upstream, req: UpstreamRequest, hedge: AbortSignal | undefined, judge?: ErrorClassifier, timeoutMs?: number): Promise<UpstreamResponse> {
  const signal = req.signal && hedge ? AbortSignal.any([req.signal, hedge]) : req.signal ?? hedge;
  const headers: Record<string, string> = req.contentType ? { 'content-type': req.contentType, accept: 'application/json' } : { accept: 'application/json' };
  if (up.authorization) headers.authorization = up.authorization;
  if (!req.probe) up.beginCall(timeoutMs ?? up.timeoutMs);
  // A traced client call's attempt: a span (when sampled), its traceparent sent to the node.
  const ended = req.trace ? traceAttempt(req.trace, up.origin, req.rpcMethod ?? req.method, headers) : undefined;
  const answer = new Promise<UpstreamResponse>((resolve, reject) => {
    // Through `dispatch` rather than `request`: most answers are a few hundred bytes, and
    // `request` builds a Readable (and an async scope) for each; see UpstreamCallHandler.
    const handler = new UpstreamCallHandler(up, req, signal, resolve, reject, judge);
    up.pool.dispatch({
      method: req.method as Dispatcher.HttpMethod,
      path: up.basePath + (req.path || (up.basePath ? '' : '/')),
      headers,
      body: req.body,
      ...(timeoutMs === undefined ? undefined : { headersTimeout: timeoutMs, bodyTimeout: timeoutMs }),
    }, handler);
  });
  if (ended) answer.then((res) => ended(res.status), (err: unknown) => ended(undefined, err));
  return answer;
}

const CONTENT_TYPE = 'content-type';
const CONTENT_LENGTH = 'content-length';
const EMPTY: Buffer[] = [];
const EMPTY_BODY = Buffer.alloc(0);

/**
 * One upstream call, as undici's dispatch handler and as the UpstreamResponse handed on at the
 * head (as `pool.request` did): status and failures judged there, then the body gathered in
 * memory up to BUFFERED_BYTES for `whole`, or turned into a stream (`body`) when larger or
 * asked for. Errors and cancellation reach whichever of the two is in use.
 */
export class UpstreamCallHandler implements UpstreamResponse, Dispatcher.DispatchHandler {
  status = 0;
  contentType: string | undefined;
  contentLength: number | undefined;
  rpcCode: number | undefined = undefined;
  readonly upstream: Upstream;
  readonly #req: UpstreamRequest;
  readonly #signal: AbortSignal | undefined;
  readonly #started = performance.now();
  #resolve: ((res: UpstreamResponse) => void) | undefined;
  readonly #reject: (err: unknown) => void;
  #controller: Dispatcher.DispatchController | undefined;
  #unlisten: Disposable | undefined;
  /** After the head: ignore the body (an answer refused as a failure). */
  #discard = false;
  #chunks: Buffer[] = EMPTY;
  #size = 0;
  #ended = false;
  #error: Error | undefined;
  #stream: UpstreamBody | undefined;
  #done: ((err: Error | undefined, body: Buffer | undefined) => void) | undefined;
  readonly #judge: ErrorClassifier | undefined;
  /** Between head and end of an answer that is judged before it is handed on: the time to its head. */
  #judgingSince: number | undefined;

  constructor(up: Upstream, req: UpstreamRequest, signal: AbortSignal | undefined, resolve: (res: UpstreamResponse) => void, reject: (err: unknown) => void,
    judge?: ErrorClassifier) {
    this.upstream = up;
    this.#req = req;
    this.#judge = judge;
    this.#signal = signal;
    this.#resolve = resolve;
    this.#reject = reject;
    if (signal) this.#unlisten = addAbortListener(signal, () => this.cancel(signal.reason as Error ?? new Error('aborted')));
  }

  get body(): UpstreamBody {
    if (!this.#stream) {
      const s = new UpstreamBody(() => this.#controller?.resume(), (err) => this.cancel(err));
      this.#stream = s;
      for (const c of this.#chunks) s.push(c);
      this.#chunks = EMPTY;
      if (this.#error) s.destroy(this.#error);
      else if (this.#ended) s.push(null);
    }
    return this.#stream;
  }

  whole(done: (err: Error | undefined, body: Buffer | undefined) => void): boolean {
    if (this.#stream) return false;
    if (this.#ended || this.#error) done(this.#error, this.#error ? undefined : this.#joined());
    else this.#done = done;
    return true;
  }

  cancel(reason: Error = new Error('upstream answer cancelled')): void {
    if (this.#ended || this.#error) return;
    if (this.#controller) this.#controller.abort(reason);
    else this.#error = reason;
  }

  #joined(): Buffer {
    const c = this.#chunks;
    this.#chunks = EMPTY;
    return c.length === 0 ? EMPTY_BODY : c.length === 1 ? c[0]! : Buffer.concat(c, this.#size);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    if (this.#error) return controller.abort(this.#error);
    this.#controller = controller;
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    if (statusCode < 200) return;
    const ctv = headers[CONTENT_TYPE];
    const ct = Array.isArray(ctv) ? ctv[0] : ctv;
    const cl = headers[CONTENT_LENGTH];
    const up = this.upstream;
    const ms = performance.now() - this.#started;
    up.latency?.observe(ms / 1000);
    // A provider's rate limit is its fault, not the client's: try another, and rank it down.
    const rpcError = this.#req.rpcErrorsAre500 && statusCode === 500 && String(ct).startsWith('application/json');
    if ((statusCode >= 500 && !rpcError) || statusCode === 429) {
      this.#resolve = undefined;
      this.#discard = true;
      this.#unlisten?.[Symbol.dispose]();
      up.markFailed(statusCode === 429 ? 'http_429' : 'http_5xx', `HTTP ${statusCode}`, !this.#req.probe);
      this.#reject(new UpstreamError(false, new Error(`upstream answered ${statusCode}`)));
      return;
    }
    this.status = statusCode;
    this.contentType = ct;
    this.contentLength = typeof cl === 'string' ? Number(cl) : undefined;
    this.#chunks = [];
    // A JSON-RPC answer that may be an error (and is small, as errors are) is handed on only
    // once it is whole and judged (onResponseEnd).
    if (this.#judge && statusCode < 300 && !(this.contentLength! > BUFFERED_BYTES)) {
      this.#judgingSince = ms;
      return;
    }
    this.#accept(ms);
  }

  /** The answer is the one handed on: the upstream answered well. */
  #accept(ms: number): void {
    const resolve = this.#resolve!;
    this.#resolve = undefined;
    if (this.#req.probe) this.upstream.probeOk(ms);
    else this.upstream.ok(ms);
    resolve(this);
  }

  /** The whole answer of a call being judged: handed on, or refused as the node's failure. */
  #judged(ms: number, body: Buffer): void {
    const verdict = this.#judge!.judge(body, this);
    if (verdict === undefined) return this.#accept(ms);
    this.#resolve = undefined;
    const up = this.upstream;
    let err: UpstreamError;
    // Only client calls are judged (the probe's carry no JSON-RPC method).
    if (verdict.class === 'method') {
      // It answered, and quickly: healthy, it just lacks the method (the set learns that).
      up.ok(ms);
      err = new UpstreamError('method', new Error(verdict.detail));
    } else {
      up.markFailed('rpc_error', verdict.detail);
      err = new UpstreamError(false, new Error(verdict.detail));
    }
    err.answer = this;
    this.#reject(err);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.#discard) return;
    if (this.#stream) {
      if (!this.#stream.push(chunk)) controller.pause();
      return;
    }
    this.#size += chunk.length;
    this.#chunks.push(chunk);
    if (this.#size <= BUFFERED_BYTES) return;
    // Too large to be an error worth judging: handed on now, streamed.
    if (this.#judgingSince !== undefined) {
      const ms = this.#judgingSince;
      this.#judgingSince = undefined;
      this.#accept(ms);
    }
    // Larger than a whole answer is kept: a stream from here on, with backpressure.
    const done = this.#done;
    this.#done = undefined;
    const s = this.body;
    done?.(undefined, undefined);
    if (s.readableLength >= s.readableHighWaterMark) controller.pause();
  }

  onResponseEnd(): void {
    this.#ended = true;
    this.#unlisten?.[Symbol.dispose]();
    if (this.#discard) return;
    if (this.#stream) return void this.#stream.push(null);
    if (this.#judgingSince !== undefined) {
      const ms = this.#judgingSince;
      this.#judgingSince = undefined;
      const body = this.#joined();
      // Kept for `whole`, which the relay calls once the answer is handed on.
      if (body.length > 0) this.#chunks = [body];
      return this.#judged(ms, body);
    }
    const done = this.#done;
    this.#done = undefined;
    done?.(undefined, this.#joined());
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    this.#unlisten?.[Symbol.dispose]();
    if (this.#resolve) {
      this.#resolve = undefined;
      this.#error = err;
      // The loser of a hedge, or a call cancelled at shutdown, was aborted by us: not the upstream's fault.
      if (this.#req.signal?.aborted) return this.#reject(err);
      const code = (err as { code?: string }).code;
      const timeout = TIMEOUT_CODES.has(code ?? '');
      if (!this.#signal?.aborted) this.upstream.markFailed(timeout ? 'timeout' : 'connect', code ?? err.message, !this.#req.probe);
      return this.#reject(new UpstreamError(timeout, err));
    }
    if (this.#discard || this.#ended) return;
    this.#error = err;
    this.#chunks = EMPTY;
    if (this.#stream) return void this.#stream.destroy(err);
    const done = this.#done;
    this.#done = undefined;
    done?.(err, undefined);
  }
}
