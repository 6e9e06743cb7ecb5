import type { ServerResponse } from 'node:http';
import { ERROR_BODIES, RPC_ERRORS, rpcError, upstreamFailure, type RpcErrorKind } from '../errors.js';
import { passedOn } from '../observe.js';
import { relay as relayBody } from '../relay.js';
import type { UpstreamError, UpstreamResponse } from '../upstreams/index.js';
import { noteCode } from '../request-log.js';

export const JSON_HEADERS = { 'content-type': 'application/json', 'access-control-allow-origin': '*' };

/** One of the fixed error bodies (errors.ts). */
export function send(res: ServerResponse, status: number, kind: RpcErrorKind): void {
  const body = ERROR_BODIES[kind];
  noteCode(res, RPC_ERRORS[kind].code);
  res.writeHead(status, { ...JSON_HEADERS, 'content-length': body.length });
  res.end(body);
}

/**
 * Every upstream failed (or none serves the method). A single call's -32601 carries its id, as
 * the node's would; -32010 and -32011 keep `id: null` (docs/gateway.md).
 */
export function sendUpstreamError(res: ServerResponse, err: UpstreamError, id: unknown = null): void {
  const { status, kind } = upstreamFailure(err);
  noteCode(res, RPC_ERRORS[kind].code);
  if (kind === 'methodNotFound' && id !== null) return sendJson(res, status, rpcError(RPC_ERRORS[kind].code, RPC_ERRORS[kind].message, id));
  send(res, status, kind);
}

/** Every upstream failed for a batch: one error per element, with its id, then our own answers (as other whole-batch refusals). */
export function sendBatchUpstreamError(res: ServerResponse, err: UpstreamError, ids: readonly unknown[], ours: readonly unknown[]): void {
  const { status, kind } = upstreamFailure(err);
  const { code, message } = RPC_ERRORS[kind];
  noteCode(res, code);
  sendJson(res, status, [...ids.map((id) => rpcError(code, message, id)), ...ours]);
}

export function sendJson(res: ServerResponse, status: number, value: unknown): void {
  sendText(res, status, JSON.stringify(value));
}

export function sendText(res: ServerResponse, status: number, text: string | Buffer): void {
  res.writeHead(status, { ...JSON_HEADERS, 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** An answer from calls.ts (cache, null retry, getLogs): passed on as the upstream's would be. */
export function sendAnswer(res: ServerResponse, answer: { status: number; contentType?: string | undefined; body: Buffer }): void {
  passedOn.add(res);
  res.writeHead(answer.status, { ...JSON_HEADERS, 'content-type': answer.contentType ?? 'application/json', 'content-length': answer.body.length });
  res.end(answer.body);
}

export function relay(res: ServerResponse, upstream: UpstreamResponse): void {
  passedOn.add(res);
  noteCode(res, upstream.rpcCode);
  relayBody(res, upstream);
}
