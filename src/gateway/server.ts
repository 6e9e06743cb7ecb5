import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Config } from '../config/index.js';
import { clientIp, IpAllowlist } from '../util/ip.js';
import { jsonDeeperThan } from '../util/json-depth.js';
import { BodyBudget, BodyBudgetError, BodyTimeoutError, BodyTooLargeError, readBody } from '../util/body.js';
import { answerClientError, hasDuplicateHost } from '../util/http-guard.js';
import { ERROR_BODIES, RPC_ERRORS, rpcError, type RpcErrorKind } from './errors.js';
import { InvalidPathError, normaliseRestPath, type RestTarget } from './rest-path.js';
import { asId, refusalBody } from './refusals.js';
import { parseJson, parseRpc, type ParsedRpc, type RpcCall } from './jsonrpc.js';
import { priceRest, priceRpc, usageMethodName } from '../pricing/credits.js';
import type { EndpointLookup, EndpointState } from './registry.js';
import type { UsageMeter } from './meter.js';
import { passedOn } from './observe.js';
import { relay as relayBody } from './relay.js';
import type { Metrics } from '../metrics/index.js';
import type { WindowLimiter } from '../limits/index.js';
import { UpstreamError, type RouteHints, type UpstreamDirectory, type UpstreamRequest, type UpstreamResponse } from './upstreams/index.js';
import { routeHints, type CallHandler } from './calls.js';

export interface GatewayDeps {
  config: Config;
  registry: EndpointLookup;
  meter: Pick<UsageMeter, 'record'>;
  upstreams: UpstreamDirectory;
  /** Finality cache, null retries and eth_getLogs guards (calls.ts); absent: plain forwarding. */
  calls?: CallHandler;
  log: (line: string) => void;
  metrics?: Metrics;
  /** RPS windows shared by every instance (Redis); without it each endpoint's window is in memory. */
  sharedRps?: WindowLimiter;
  /** The RPS windows of this machine's gateway workers (rps-shared.ts), used without `sharedRps`. */
  localRps: (ep: EndpointState, cost: number) => number;
  /** Whether the store answers, for `/health`. */
  storeHealth?: () => Promise<boolean>;
  /** This worker's row in the body budget all workers charge (util/body.ts). */
  bodyBudget?: { memory: SharedArrayBuffer; index: number };
}

const UUID_LENGTH = 36;
const BATCH_HINTS: RouteHints = { needsHead: true };
/** Larger request heads get 431. */
const MAX_HEADER_BYTES = 16 * 1024;
/** Refused requests' bodies are read only up to this size, to echo their ids. */
const REFUSAL_READ_BYTES = 64 * 1024;
const HEADERS_TOO_LARGE = JSON.stringify(rpcError(-32600, 'request headers too large'));
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
  const { config, registry, meter, upstreams, calls, log, sharedRps } = deps;
  const takeRps = rpsWindow(sharedRps, deps.localRps);
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
      // Nothing about the fleet (how many endpoints) to whoever asks; 503 while the store is away
      // (serving goes on meanwhile: endpoints are in memory).
      const storeOk = deps.storeHealth ? await deps.storeHealth() : true;
      sendJson(res, storeOk ? 200 : 503, storeOk ? { ok: true } : { ok: false, error: 'Service unavailable' });
      return;
    }
    if (url === '/ready') {
      // The gateway pool's check: this listener takes calls. The store is left out on purpose:
      // endpoints are in memory, so a store outage must not empty the gateway pool.
      sendJson(res, 200, { ok: true });
      return;
    }
    if (hasDuplicateHost(req)) {
      req.resume();
      return send(res, 400, 'badHost');
    }

    const afterUuid = url.length > UUID_LENGTH ? url.charCodeAt(UUID_LENGTH + 1) : NaN;
    const uuid = url.slice(1, UUID_LENGTH + 1);
    const ep = url.length === UUID_LENGTH + 1 || afterUuid === 47 /* / */ || afterUuid === 63 /* ? */ ? registry.get(uuid) : undefined;
    if (!ep || !ep.env || !hostMatches(req.headers.host, ep)) return refuse(req, res, 404, 'notFound');
    if (ep.paused) return refuse(req, res, 403, 'paused');
    const ip = clientIp(req, trusted);
    if (ep.allowlist.size > 0 && !ep.allowlist.allows(ip)) return refuse(req, res, 403, 'ipNotAllowed', ip);
    if (ep.env.network.family === 'stellar' || ep.env.network.family === 'tron') return handleRest(req, res, ep, url.slice(UUID_LENGTH + 1), ip);

    const rest = url.slice(UUID_LENGTH + 1);
    if (method !== 'POST' || !(rest === '' || rest === '/' || rest.startsWith('?') || rest.startsWith('/?'))) {
      req.resume();
      return send(res, 405, 'methodNotAllowed');
    }
    const body = await readCapped(req, res, ip);
    if (!body) return;
    // Before anything parses it: re-serialising a batch or keying the cache recurses.
    if (jsonDeeperThan(body)) return send(res, 400, 'tooDeep');
    const parsed = parseRpc(body);
    if (parsed.kind === 'parse-error') return send(res, 400, 'parse');
    if (parsed.kind === 'invalid') {
      return parsed.id === null ? send(res, 400, 'invalidRequest') : sendJson(res, 400, rpcError(-32600, 'invalid request', parsed.id));
    }
    const env = ep.env;
    const network = env.network;
    if (parsed.kind === 'single') {
      // The spec's exact body, `id` null, for a single call over the window. A call the cache
      // answers takes its place in the window like any other.
      let one = takeRps(ep, 1);
      if (typeof one !== 'number') one = await one;
      if (one === 0) return send(res, 429, 'rps');
      if (calls && await answerCall(res, ep, calls, parsed.call, body)) return;
      const upstream = await forward(res, ep, { method: 'POST', path: '', body, contentType: 'application/json', rpcErrorsAre500: ep.env.network.family === 'utxo' }, routeHints(parsed.call));
      if (!upstream) return;
      if (upstream.status >= 200 && upstream.status < 300) {
        meter.record(ep.id, ep.accountId, usageMethodName(network, parsed.call.method), priceRpc(network, parsed.call.method) * (calls?.units(env, parsed.call) ?? 1));
      }
      return relay(res, upstream);
    }

    if (parsed.valid.length + parsed.rejected.length > g.max_batch) return send(res, 400, 'batchTooLarge');
    // Elements we refuse ourselves (an eth_getLogs range over the limit) join the invalid ones.
    const malformed = parsed.rejected.length;
    calls?.screenBatch(env, parsed);
    // Nothing left to send: 400 when an element was malformed, else (our own refusals, as a
    // single call gets them) 200 with the errors, which clients read as JSON-RPC errors.
    if (parsed.valid.length === 0) return sendJson(res, malformed > 0 ? 400 : 200, parsed.rejected);
    // A batch takes what is left of the window (cached elements included: they are calls like
    // any other); the elements over it are answered in place, each with its own id.
    let admitted = takeRps(ep, parsed.calls.length);
    if (typeof admitted !== 'number') admitted = await admitted;
    const overWindow = parsed.calls.slice(admitted).map((c) => rpcError(RPC_ERRORS.rps.code, RPC_ERRORS.rps.message, asId(c.id)));
    const ours = overWindow.length === 0 ? parsed.rejected : [...parsed.rejected, ...overWindow];
    if (admitted === 0) return sendJson(res, 429, ours);
    const inWindow: Extract<ParsedRpc, { kind: 'batch' }> = admitted === parsed.calls.length && ours === parsed.rejected ? parsed
      : { kind: 'batch', valid: parsed.valid.slice(0, admitted), calls: parsed.calls.slice(0, admitted), rejected: ours };
    if (calls && await answerBatch(res, ep, calls, inWindow)) return;
    const forwardBody = ours.length > 0 ? Buffer.from(JSON.stringify(inWindow.valid)) : body;
    const upstream = await forward(res, ep, { method: 'POST', path: '', body: forwardBody, contentType: 'application/json', rpcErrorsAre500: ep.env.network.family === 'utxo' }, BATCH_HINTS);
    if (!upstream) return;
    if (upstream.status >= 200 && upstream.status < 300) {
      for (const call of inWindow.calls) {
        meter.record(ep.id, ep.accountId, usageMethodName(network, call.method), priceRpc(network, call.method) * (calls?.units(env, call) ?? 1));
      }
    }
    if (ours.length > 0) return mergeBatch(res, upstream, ours);
    relay(res, upstream);
  }

  async function handleRest(req: IncomingMessage, res: ServerResponse, ep: EndpointState, pathAndQuery: string, ip: string): Promise<void> {
    const method = req.method ?? 'GET';
    let target: RestTarget;
    try {
      // One form of the path, decided before anything else looks at it: checked, priced and forwarded.
      target = normaliseRestPath(pathAndQuery);
    } catch (err) {
      if (!(err instanceof InvalidPathError)) throw err;
      req.resume();
      return send(res, 400, 'invalidPath');
    }
    let body: Buffer | undefined;
    if (method !== 'GET' && method !== 'HEAD') {
      body = await readCapped(req, res, ip);
      if (!body) return;
    } else {
      req.resume();
    }
    let admittedOne = takeRps(ep, 1);
    if (typeof admittedOne !== 'number') admittedOne = await admittedOne;
    if (admittedOne === 0) return send(res, 429, 'rps');
    const ct = req.headers['content-type'];
    const upstream = await forward(res, ep, { method, path: target.path + target.query, body, contentType: ct });
    if (!upstream) return;
    if (upstream.status >= 200 && upstream.status < 300) {
      const price = priceRest(ep.env!.network, method, target.path);
      meter.record(ep.id, ep.accountId, price.method, price.credits);
    }
    relay(res, upstream);
  }

  /** The body within the size, time and in-flight caps; undefined when it was refused (and answered). */
  async function readCapped(req: IncomingMessage, res: ServerResponse, ip: string): Promise<Buffer | undefined> {
    try {
      return await readBody(req, g.max_body_bytes, { timeoutMs: g.body_timeout_ms, lease: budget.lease(ip, res) });
    } catch (err) {
      if (err instanceof BodyTooLargeError) send(res, 413, 'bodyTooLarge');
      else if (err instanceof BodyBudgetError) send(res, 429, 'bodyBudget');
      else if (err instanceof BodyTimeoutError) {
        // The rest of a slow body is not worth waiting for: close once answered.
        res.once('finish', () => req.destroy());
        send(res, 408, 'bodyTimeout');
      } else throw err;
      return undefined;
    }
  }

  /**
   * A refusal that echoes the request's id(s) when they can be read: a body of a declared,
   * call-sized length is read (within the same caps) for them; a larger or chunked one is not.
   */
  async function refuse(req: IncomingMessage, res: ServerResponse, status: number, kind: RpcErrorKind, ip = clientIp(req, trusted)): Promise<void> {
    if (!(Number(req.headers['content-length'] ?? 0) <= REFUSAL_READ_BYTES) || req.headers['transfer-encoding'] !== undefined) {
      req.resume();
      return send(res, status, kind);
    }
    const body = await readCapped(req, res, ip);
    if (!body) return;
    const text = refusalBody(kind, body);
    res.writeHead(status, { ...JSON_HEADERS, 'content-length': Buffer.byteLength(text) });
    res.end(text);
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
    passedOn.add(res);
    res.writeHead(answer.status, { ...JSON_HEADERS, 'content-type': answer.contentType ?? 'application/json', 'content-length': answer.body.length });
    res.end(answer.body);
    return true;
  }

  /**
   * A batch (the elements admitted by the RPS window, with our own answers in `rejected`) that
   * the cache can answer in part (calls.ts); false: forward as usual.
   */
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
    passedOn.add(res);
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
    passedOn.add(res);
    relayBody(res, upstream);
  }

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

  const budget = new BodyBudget(g.max_inflight_bytes_per_ip, g.max_inflight_bytes, deps.bodyBudget);
  const server = createServer({ keepAliveTimeout: 30_000, requestTimeout: 60_000, maxHeaderSize: MAX_HEADER_BYTES }, (req, res) => {
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
    answerClientError(err, socket, (status) => (status === 431 ? HEADERS_TOO_LARGE : ERROR_BODIES.invalidRequest.toString()));
  });
  return server;
}

/**
 * Where the endpoints' RPS windows count: this machine's shared windows (synchronous), or
 * shared by every instance through `shared` (Redis), which answers later. Either way the answer
 * is how many of `cost` requests were admitted.
 */
export function rpsWindow(shared: WindowLimiter | undefined, local: (ep: EndpointState, cost: number) => number): (ep: EndpointState, cost: number) => number | Promise<number> {
  if (!shared) return local;
  // Keyed by the endpoint's id, not its UUID: the UUID is the endpoint's URL, a credential.
  return (ep, cost) => shared.admit(String(ep.id), ep.rpsLimit, cost);
}
