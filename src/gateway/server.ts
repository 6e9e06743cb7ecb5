import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { pipeline } from 'node:stream';
import type { Config } from '../config/index.js';
import { clientIp, IpAllowlist } from '../util/ip.js';
import { BodyTooLargeError, readBody } from '../util/body.js';
import { ERROR_BODIES, rpcError, type RpcErrorKind } from './errors.js';
import { parseRpc, type ParsedRpc, type RpcCall } from './jsonrpc.js';
import { priceRest, priceRpc, usageMethodName } from './credits.js';
import type { EndpointRegistry, EndpointState } from './registry.js';
import type { UsageMeter } from './meter.js';
import { UpstreamError, type RouteHints, type UpstreamDirectory, type UpstreamRequest, type UpstreamResponse } from './upstreams.js';
import { routeHints, type CallHandler } from './calls.js';

export interface GatewayDeps {
  config: Config;
  registry: EndpointRegistry;
  meter: UsageMeter;
  upstreams: UpstreamDirectory;
  /** Finality cache, null retries and eth_getLogs guards (calls.ts); absent: plain forwarding. */
  calls?: CallHandler;
  log: (line: string) => void;
}

const UUID_LENGTH = 36;
const BATCH_HINTS: RouteHints = { needsHead: true };
const JSON_HEADERS = { 'content-type': 'application/json', 'access-control-allow-origin': '*' };
const CORS_PREFLIGHT = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'GET, POST, OPTIONS',
  'access-control-allow-headers': 'content-type, accept, authorization',
  'access-control-max-age': '86400',
};

function send(res: ServerResponse, status: number, kind: RpcErrorKind): void {
  const body = ERROR_BODIES[kind];
  res.writeHead(status, { ...JSON_HEADERS, 'content-length': body.length });
  res.end(body);
}

function sendUpstreamError(res: ServerResponse, err: UpstreamError): void {
  send(res, err.code === 'E_UPSTREAM_TIMEOUT' ? 504 : 502, err.code === 'E_UPSTREAM_TIMEOUT' ? 'upstreamTimeout' : 'upstreamFailed');
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const body = JSON.stringify(value);
  res.writeHead(status, { ...JSON_HEADERS, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/**
 * The JSON-RPC gateway: `POST /{endpoint_uuid}` for JSON-RPC networks, any method under
 * `/{endpoint_uuid}/...` for REST-style ones. Checks run cheapest first; nothing rejected here
 * is metered.
 */
export function createGatewayServer(deps: GatewayDeps): Server {
  const { config, registry, meter, upstreams, calls, log } = deps;
  const g = config.gateway;
  const trusted = new IpAllowlist(g.trusted_proxies);
  const prefix = `${g.host_prefix}-`;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = req.url ?? '/';
    const method = req.method ?? 'GET';
    if (method === 'OPTIONS') {
      res.writeHead(204, CORS_PREFLIGHT);
      res.end();
      return;
    }
    if (url === '/health') {
      sendJson(res, 200, { ok: true, endpoints: registry.size });
      return;
    }

    const afterUuid = url.length > UUID_LENGTH ? url.charCodeAt(UUID_LENGTH + 1) : NaN;
    const uuid = url.slice(1, UUID_LENGTH + 1);
    const ep = url.length === UUID_LENGTH + 1 || afterUuid === 47 /* / */ || afterUuid === 63 /* ? */ ? registry.get(uuid) : undefined;
    if (!ep || !ep.env || !hostMatches(req.headers.host, ep)) {
      req.resume();
      return send(res, 404, 'notFound');
    }
    if (ep.paused) {
      req.resume();
      return send(res, 403, 'paused');
    }
    if (ep.allowlist.size > 0 && !ep.allowlist.allows(clientIp(req, trusted))) {
      req.resume();
      return send(res, 403, 'ipNotAllowed');
    }
    if (ep.env.network.family === 'stellar') return handleRest(req, res, ep, url.slice(UUID_LENGTH + 1) || '/');

    const rest = url.slice(UUID_LENGTH + 1);
    if (method !== 'POST' || !(rest === '' || rest === '/' || rest.startsWith('?') || rest.startsWith('/?'))) {
      req.resume();
      return send(res, 405, 'methodNotAllowed');
    }
    let body: Buffer;
    try {
      body = await readBody(req, g.max_body_bytes);
    } catch (err) {
      if (err instanceof BodyTooLargeError) return send(res, 413, 'bodyTooLarge');
      throw err;
    }
    const parsed = parseRpc(body);
    if (parsed.kind === 'parse-error') return send(res, 400, 'parse');
    if (parsed.kind === 'invalid') {
      return parsed.id === null ? send(res, 400, 'invalidRequest') : sendJson(res, 400, rpcError(-32600, 'invalid request', parsed.id));
    }
    if (parsed.kind === 'batch') {
      if (calls && parsed.valid.length + parsed.rejected.length <= g.max_batch) calls.screenBatch(ep.env, parsed);
      if (parsed.valid.length + parsed.rejected.length > g.max_batch) return send(res, 400, 'batchTooLarge');
      if (parsed.valid.length === 0) return sendJson(res, 400, parsed.rejected);
    }
    const cost = parsed.kind === 'single' ? 1 : parsed.calls.length;
    if (!takeWindow(ep, cost)) return send(res, 429, 'rps');

    if (parsed.kind === 'single' && calls && await answerCall(res, ep, calls, parsed.call, body)) return;
    if (parsed.kind === 'batch' && calls && await answerBatch(res, ep, calls, parsed)) return;
    const forwardBody = parsed.kind === 'batch' && parsed.rejected.length > 0 ? Buffer.from(JSON.stringify(parsed.valid)) : body;
    const upstream = await forward(res, ep, { method: 'POST', path: '', body: forwardBody, contentType: 'application/json' },
      parsed.kind === 'single' ? routeHints(parsed.call) : BATCH_HINTS);
    if (!upstream) return;
    if (upstream.status >= 200 && upstream.status < 300) {
      const env = ep.env!;
      const network = env.network;
      if (parsed.kind === 'single') {
        meter.record(ep.id, ep.accountId, usageMethodName(network, parsed.call.method), priceRpc(network, parsed.call.method) * (calls?.units(env, parsed.call) ?? 1));
      } else {
        for (const call of parsed.calls) meter.record(ep.id, ep.accountId, usageMethodName(network, call.method), priceRpc(network, call.method) * (calls?.units(env, call) ?? 1));
      }
    }
    if (parsed.kind === 'batch' && parsed.rejected.length > 0) return mergeBatch(res, upstream, parsed.rejected);
    relay(res, upstream);
  }

  async function handleRest(req: IncomingMessage, res: ServerResponse, ep: EndpointState, pathAndQuery: string): Promise<void> {
    const method = req.method ?? 'GET';
    let body: Buffer | undefined;
    if (method !== 'GET' && method !== 'HEAD') {
      try {
        body = await readBody(req, g.max_body_bytes);
      } catch (err) {
        if (err instanceof BodyTooLargeError) return send(res, 413, 'bodyTooLarge');
        throw err;
      }
    } else {
      req.resume();
    }
    const q = pathAndQuery.indexOf('?');
    const path = q === -1 ? pathAndQuery : pathAndQuery.slice(0, q);
    // `..` would climb out of the upstream URL's own path (which may hold a provider key).
    if (hasDotSegment(path)) return sendJson(res, 400, rpcError(-32600, 'invalid path'));
    if (!takeWindow(ep, 1)) return send(res, 429, 'rps');
    const ct = req.headers['content-type'];
    const upstream = await forward(res, ep, { method, path: pathAndQuery.startsWith('/') ? pathAndQuery : `/${pathAndQuery}`, body, contentType: ct });
    if (!upstream) return;
    if (upstream.status >= 200 && upstream.status < 300) {
      const price = priceRest(ep.env!.network, method, path.startsWith('/') ? path : `/${path}`);
      meter.record(ep.id, ep.accountId, price.method, price.credits);
    }
    relay(res, upstream);
  }

  function hostMatches(host: string | undefined, ep: EndpointState): boolean {
    if (host === undefined) return true;
    const dot = host.indexOf('.');
    if (dot === -1) return true;
    // Host names are case-insensitive; so is the check.
    const label = host.slice(0, dot).toLowerCase();
    // Only a Host of the `{prefix}-{network}-{env}.` form is checked; IPs and other names route by UUID alone.
    return !label.startsWith(prefix) || label === ep.hostLabel;
  }

  /** Answers a single call from calls.ts when it takes it (cache, null retry, getLogs); false: forward as usual. */
  async function answerCall(res: ServerResponse, ep: EndpointState, handler: CallHandler, call: RpcCall, body: Buffer): Promise<boolean> {
    const env = ep.env!;
    let answer;
    try {
      answer = await handler.single(env, call, body);
    } catch (err) {
      if (!(err instanceof UpstreamError)) throw err;
      sendUpstreamError(res, err);
      return true;
    }
    if (!answer) return false;
    // A cached answer is a call like any other: the merchant pays for it, we save the upstream.
    if (answer.metered) meter.record(ep.id, ep.accountId, usageMethodName(env.network, call.method), priceRpc(env.network, call.method) * answer.units);
    res.writeHead(answer.status, { ...JSON_HEADERS, 'content-type': answer.contentType ?? 'application/json', 'content-length': answer.body.length });
    res.end(answer.body);
    return true;
  }

  /** A batch the cache can answer in part (calls.ts); false: forward as usual. */
  async function answerBatch(res: ServerResponse, ep: EndpointState, handler: CallHandler, parsed: Extract<ParsedRpc, { kind: 'batch' }>): Promise<boolean> {
    const env = ep.env!;
    let answer;
    try {
      answer = await handler.batch(env, parsed);
    } catch (err) {
      if (!(err instanceof UpstreamError)) throw err;
      sendUpstreamError(res, err);
      return true;
    }
    if (!answer) return false;
    for (const call of answer.meteredCalls) {
      meter.record(ep.id, ep.accountId, usageMethodName(env.network, call.method), priceRpc(env.network, call.method) * handler.units(env, call));
    }
    res.writeHead(answer.status, { ...JSON_HEADERS, 'content-type': answer.contentType ?? 'application/json', 'content-length': answer.body.length });
    res.end(answer.body);
    return true;
  }

  async function forward(res: ServerResponse, ep: EndpointState, req: UpstreamRequest, hints?: RouteHints): Promise<UpstreamResponse | undefined> {
    try {
      return await upstreams.for(ep.env!.id, ep.env!.upstreams).send(req, hints);
    } catch (err) {
      if (err instanceof UpstreamError) {
        sendUpstreamError(res, err);
        return undefined;
      }
      throw err;
    }
  }

  function relay(res: ServerResponse, upstream: UpstreamResponse): void {
    res.writeHead(upstream.status, upstream.contentType
      ? { 'content-type': upstream.contentType, 'access-control-allow-origin': '*' }
      : { 'access-control-allow-origin': '*' });
    pipeline(upstream.body, res, (err) => {
      if (err && !res.destroyed) res.destroy(err);
    });
  }

  async function mergeBatch(res: ServerResponse, upstream: UpstreamResponse, rejected: unknown[]): Promise<void> {
    const text = await upstream.body.text();
    let merged: unknown = undefined;
    try {
      const answer = JSON.parse(text) as unknown;
      merged = Array.isArray(answer) ? [...answer, ...rejected] : undefined;
    } catch { /* not JSON: pass it on unchanged */ }
    if (merged === undefined) {
      res.writeHead(upstream.status, { 'content-type': upstream.contentType ?? 'application/json', 'access-control-allow-origin': '*' });
      res.end(text);
      return;
    }
    sendJson(res, upstream.status, merged);
  }

  const server = createServer({ keepAliveTimeout: 30_000, requestTimeout: 60_000 }, (req, res) => {
    handle(req, res).catch((err: unknown) => {
      // A client that hung up mid-request is not a gateway failure.
      if (req.destroyed || (err as NodeJS.ErrnoException)?.code === 'ECONNRESET') {
        res.destroy();
        return;
      }
      log(`gateway: ${req.method} request failed: ${(err as Error)?.stack ?? String(err)}`);
      if (!res.headersSent) sendJson(res, 500, rpcError(-32603, 'internal error'));
      else res.destroy();
    });
  });
  server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    if (!socket.writable || err.code === 'ECONNRESET') return socket.destroy();
    const body = ERROR_BODIES.invalidRequest;
    socket.end(`HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body.toString()}`);
  });
  return server;
}

/** The fixed window of the endpoint's current Unix second; a batch takes all its elements or nothing. */
function takeWindow(ep: EndpointState, cost: number): boolean {
  const second = Math.floor(Date.now() / 1000);
  if (ep.windowSecond !== second) {
    ep.windowSecond = second;
    ep.windowCount = 0;
  }
  if (ep.windowCount + cost > ep.rpsLimit) return false;
  ep.windowCount += cost;
  return true;
}


function hasDotSegment(path: string): boolean {
  for (const raw of path.split('/')) {
    let segment = raw;
    if (segment.includes('%')) {
      try {
        segment = decodeURIComponent(segment);
      } catch {
        return true;
      }
    }
    if (segment === '.' || segment === '..') return true;
  }
  return false;
}
