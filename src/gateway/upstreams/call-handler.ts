import { addAbortListener } from 'node:events';
import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';
import { BUFFERED_BYTES, UpstreamBody } from './body.js';
import { UpstreamError, type UpstreamRequest, type UpstreamResponse } from './call.js';
import type { Upstream } from './upstream.js';

const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT']);

/** One request to one upstream, as undici's dispatch handler; `hedge` aborts it when the other of a hedged pair won. */
export function dispatchTo(up: Upstream, req: UpstreamRequest, hedge: AbortSignal | undefined): Promise<UpstreamResponse> {
  const signal = req.signal && hedge ? AbortSignal.any([req.signal, hedge]) : req.signal ?? hedge;
  const headers: Record<string, string> = req.contentType ? { 'content-type': req.contentType, accept: 'application/json' } : { accept: 'application/json' };
  if (up.authorization) headers.authorization = up.authorization;
  return new Promise((resolve, reject) => {
    // Through `dispatch` rather than `request`: most answers are a few hundred bytes, and
    // `request` builds a Readable (and an async scope) for each; see UpstreamCallHandler.
    const handler = new UpstreamCallHandler(up, req, signal, resolve, reject);
    up.pool.dispatch({
      method: req.method as Dispatcher.HttpMethod,
      path: up.basePath + (req.path || (up.basePath ? '' : '/')),
      headers,
      body: req.body,
    }, handler);
  });
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

  constructor(up: Upstream, req: UpstreamRequest, signal: AbortSignal | undefined, resolve: (res: UpstreamResponse) => void, reject: (err: unknown) => void) {
    this.upstream = up;
    this.#req = req;
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
    up.latency?.observe((performance.now() - this.#started) / 1000);
    const resolve = this.#resolve!;
    this.#resolve = undefined;
    // A provider's rate limit is its fault, not the client's: try another, and rank it down.
    const rpcError = this.#req.rpcErrorsAre500 && statusCode === 500 && String(ct).startsWith('application/json');
    if ((statusCode >= 500 && !rpcError) || statusCode === 429) {
      this.#discard = true;
      this.#unlisten?.[Symbol.dispose]();
      up.markFailed(statusCode === 429 ? 'http_429' : 'http_5xx', `HTTP ${statusCode}`);
      this.#reject(new UpstreamError(false, new Error(`upstream answered ${statusCode}`)));
      return;
    }
    up.ok(performance.now() - this.#started);
    this.status = statusCode;
    this.contentType = ct;
    this.contentLength = typeof cl === 'string' ? Number(cl) : undefined;
    this.#chunks = [];
    resolve(this);
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
      if (!this.#signal?.aborted) this.upstream.markFailed(timeout ? 'timeout' : 'connect', code ?? err.message);
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
