import type { ServerResponse } from 'node:http';
import { ERROR_BODIES, type RpcErrorKind } from '../errors.js';
import { passedOn } from '../observe.js';
import { relay as relayBody } from '../relay.js';
import type { UpstreamError, UpstreamResponse } from '../upstreams/index.js';

export const JSON_HEADERS = { 'content-type': 'application/json', 'access-control-allow-origin': '*' };

/** One of the fixed error bodies (errors.ts). */
export function send(res: ServerResponse, status: number, kind: RpcErrorKind): void {
  const body = ERROR_BODIES[kind];
  res.writeHead(status, { ...JSON_HEADERS, 'content-length': body.length });
  res.end(body);
}

export function sendUpstreamError(res: ServerResponse, err: UpstreamError): void {
  send(res, err.code === 'E_UPSTREAM_TIMEOUT' ? 504 : 502, err.code === 'E_UPSTREAM_TIMEOUT' ? 'upstreamTimeout' : 'upstreamFailed');
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
  relayBody(res, upstream);
}
