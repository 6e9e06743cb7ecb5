import type { IncomingMessage, ServerResponse } from 'node:http';
import { jsonDeeperThan } from '../../util/json-depth.js';
import { RPC_ERRORS, rpcError } from '../errors.js';
import { asId } from '../refusals.js';
import { parseJson, parseRpc, type ParsedRpc, type RpcCall } from '../jsonrpc.js';
import type { EndpointState } from '../registry.js';
import { passedOn } from '../observe.js';
import { UpstreamError, type UpstreamResponse } from '../upstreams/index.js';
import { batchHints, type CallHandler } from '../calls.js';
import { bill } from '../bill.js';
import { traitsOf } from '../../chains/traits.js';
import type { GatewayContext } from './context.js';
import { readCapped } from './read-body.js';
import { forward } from './forward.js';
import { loggedMethod, noteCode, noteOf } from '../request-log.js';
import { traceCacheHit, traceMethod, traceOf } from '../trace.js';
import { relay, send, sendAnswer, sendBatchUpstreamError, sendJson, sendUpstreamError } from './respond.js';

type Batch = Extract<ParsedRpc, { kind: 'batch' }>;

/**
 * A JSON-RPC request (`POST /{uuid}`): read, parsed, a single call answered here; a batch goes
 * on to `batch`. Only calls the upstream (or the cache) answered are billed.
 */
export async function rpc(cx: GatewayContext, req: IncomingMessage, res: ServerResponse, ep: EndpointState, rest: string, ip: string): Promise<void> {
  if (req.method !== 'POST' || !(rest === '' || rest === '/' || rest.startsWith('?') || rest.startsWith('/?'))) {
    req.resume();
    return send(res, 405, 'methodNotAllowed');
  }
  const body = await readCapped(cx, req, res, ip);
  if (!body) return;
  // Before anything parses it: re-serialising a batch or keying the cache recurses.
  if (jsonDeeperThan(body)) return send(res, 400, 'tooDeep');
  const parsed = parseRpc(body);
  if (parsed.kind === 'parse-error') return send(res, 400, 'parse');
  if (parsed.kind === 'invalid') {
    noteCode(res, -32600);
    return parsed.id === null && parsed.message === 'invalid request'
      ? send(res, 400, 'invalidRequest')
      : sendJson(res, 400, rpcError(-32600, parsed.message, parsed.id));
  }
  if (parsed.kind === 'batch') return batch(cx, res, ep, parsed, body);
  const env = ep.env!;
  const calls = cx.calls;
  const note = noteOf(res);
  if (note) note.method = loggedMethod(parsed.call.method);
  if (cx.tracing) traceMethod(traceOf(res), parsed.call.method);
  // The spec's exact body, `id` null, for a single call over the window. A call the cache
  // answers takes its place in the window like any other.
  let one = cx.takeRps(ep, 1);
  if (typeof one !== 'number') one = await one;
  if (one === 0) return send(res, 429, 'rps');
  if (calls && await answerCall(cx, res, ep, calls, parsed.call, body)) return;
  const gateway = traitsOf(ep.env!.network.family).gateway;
  const upstream = await forward(cx, res, ep, {
    method: 'POST', path: '', body, contentType: 'application/json', rpcErrorsAre500: gateway.rpcErrorsAre500, rpcMethod: parsed.call.method,
  }, gateway.methods.classOf(parsed.call.method, parsed.call.params), undefined, asId(parsed.call.id));
  if (!upstream) return;
  if (upstream.status >= 200 && upstream.status < 300) {
    const credits = bill(cx.meter, ep, env.network, parsed.call.method, calls?.units(env, parsed.call) ?? 1);
    if (note) note.credits = credits;
  }
  return relay(res, upstream);
}

/** A batch within `max_batch`: screened, cut to the RPS window, answered in part by the cache, the rest forwarded. */
async function batch(cx: GatewayContext, res: ServerResponse, ep: EndpointState, parsed: Batch, body: Buffer): Promise<void> {
  const note = noteOf(res);
  if (note) {
    note.batch = parsed.valid.length + parsed.rejected.length;
    note.method = loggedMethod(parsed.calls[0]?.method ?? '');
  }
  if (cx.tracing) traceMethod(traceOf(res), parsed.calls[0]?.method ?? '', parsed.valid.length + parsed.rejected.length);
  if (parsed.valid.length + parsed.rejected.length > cx.g.max_batch) return send(res, 400, 'batchTooLarge');
  const env = ep.env!;
  const calls = cx.calls;
  // Elements we refuse ourselves (an eth_getLogs range over the limit) join the invalid ones.
  const malformed = parsed.rejected.length;
  calls?.screenBatch(env, parsed);
  // Nothing left to send: 400 when an element was malformed, else (our own refusals, as a
  // single call gets them) 200 with the errors, which clients read as JSON-RPC errors.
  noteCode(res, parsed.rejected[0]?.error.code);
  if (parsed.valid.length === 0) return sendJson(res, malformed > 0 ? 400 : 200, parsed.rejected);
  // A batch takes what is left of the window (cached elements included: they are calls like
  // any other); the elements over it are answered in place, each with its own id.
  let admitted = cx.takeRps(ep, parsed.calls.length);
  if (typeof admitted !== 'number') admitted = await admitted;
  const overWindow = parsed.calls.slice(admitted).map((c) => rpcError(RPC_ERRORS.rps.code, RPC_ERRORS.rps.message, asId(c.id)));
  const ours = overWindow.length === 0 ? parsed.rejected : [...parsed.rejected, ...overWindow];
  if (overWindow.length > 0) noteCode(res, RPC_ERRORS.rps.code);
  if (admitted === 0) return sendJson(res, 429, ours);
  const inWindow: Batch = admitted === parsed.calls.length && ours === parsed.rejected ? parsed
    : { kind: 'batch', valid: parsed.valid.slice(0, admitted), calls: parsed.calls.slice(0, admitted), rejected: ours };
  if (calls && await answerBatch(cx, res, ep, calls, inWindow)) return;
  const forwardBody = ours.length > 0 ? Buffer.from(JSON.stringify(inWindow.valid)) : body;
  const gateway = traitsOf(ep.env!.network.family).gateway;
  const upstream = await forward(cx, res, ep, {
    method: 'POST', path: '', body: forwardBody, contentType: 'application/json', rpcErrorsAre500: gateway.rpcErrorsAre500, rpcMethod: '',
  }, batchHints(gateway.methods, inWindow.calls), (err) => batchFailed(res, err, inWindow));
  if (!upstream) return;
  if (upstream.status >= 200 && upstream.status < 300) {
    let credits = 0;
    for (const call of inWindow.calls) credits += bill(cx.meter, ep, env.network, call.method, calls?.units(env, call) ?? 1);
    if (note) note.credits = credits;
  }
  if (ours.length > 0) return mergeBatch(res, upstream, ours);
  relay(res, upstream);
}

/** Answers a single call from calls.ts when it takes it (cache, null retry, getLogs); false: forward as usual. */
async function answerCall(cx: GatewayContext, res: ServerResponse, ep: EndpointState, handler: CallHandler, call: RpcCall, body: Buffer): Promise<boolean> {
  const env = ep.env!;
  let answer;
  try {
    answer = await handler.single(env, call, body, cx.tracing && traceOf(res));
  } catch (err) {
    if (!(err instanceof UpstreamError)) throw err;
    sendUpstreamError(res, err, asId(call.id));
    return true;
  }
  if (!answer) return false;
  // A cached answer is a call like any other: the merchant pays for it, we save the upstream.
  const credits = answer.metered ? bill(cx.meter, ep, env.network, call.method, answer.units) : 0;
  if (cx.tracing && answer.cached) traceCacheHit(traceOf(res));
  const note = noteOf(res);
  if (note) {
    note.credits = credits;
    note.cached = answer.cached;
    // Our own refusals (small, off the hot path) are read for their code; upstream answers carry it.
    noteCode(res, answer.rpcCode ?? (answer.metered ? undefined : codeIn(answer.body)));
  }
  sendAnswer(res, answer);
  return true;
}

/**
 * A batch (the elements admitted by the RPS window, with our own answers in `rejected`) that
 * the cache can answer in part (calls.ts); false: forward as usual.
 */
async function answerBatch(cx: GatewayContext, res: ServerResponse, ep: EndpointState, handler: CallHandler, parsed: Batch): Promise<boolean> {
  const env = ep.env!;
  let answer;
  try {
    answer = await handler.batch(env, parsed, cx.tracing && traceOf(res));
  } catch (err) {
    if (!(err instanceof UpstreamError)) throw err;
    batchFailed(res, err, parsed);
    return true;
  }
  if (!answer) return false;
  let credits = 0;
  for (const call of answer.meteredCalls) credits += bill(cx.meter, ep, env.network, call.method, handler.units(env, call));
  if (cx.tracing && answer.hits === parsed.calls.length) traceCacheHit(traceOf(res));
  const note = noteOf(res);
  if (note) {
    note.credits = credits;
    note.cached = answer.hits === parsed.calls.length;
  }
  sendAnswer(res, answer);
  return true;
}

/** Every upstream failed for a batch: each element answered with its id, our own answers after them. */
function batchFailed(res: ServerResponse, err: UpstreamError, parsed: Batch): void {
  sendBatchUpstreamError(res, err, parsed.calls.map((c) => asId(c.id)), parsed.rejected);
}

/** The upstream's answers to a cut batch, with ours (invalid, refused, over the window) appended. */
async function mergeBatch(res: ServerResponse, upstream: UpstreamResponse, rejected: unknown[]): Promise<void> {
  passedOn.add(res);
  const text = await upstream.body.text();
  let merged: unknown = undefined;
  try {
    const answer = parseJson(text);
    merged = Array.isArray(answer) ? [...answer, ...rejected] : undefined;
  } catch { /* not JSON: pass it on unchanged */ }
  if (merged === undefined) {
    res.writeHead(upstream.status, { 'content-type': upstream.contentType ?? 'application/json', 'access-control-allow-origin': '*' });
    res.end(text);
    return;
  }
  sendJson(res, upstream.status, merged);
}

/** The first JSON-RPC error code in a small answer of ours (a single call's or a batch's). */
function codeIn(body: Buffer): number | undefined {
  if (body.length > 4096) return undefined;
  try {
    const v = JSON.parse(body.toString('utf8')) as unknown;
    const err = (Array.isArray(v) ? v.find((e) => (e as { error?: unknown })?.error) : v) as { error?: { code?: unknown } } | undefined;
    return typeof err?.error?.code === 'number' ? err.error.code : undefined;
  } catch {
    return undefined;
  }
}
