import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Config } from '../config/index.js';
import { isStoreUnavailable, storeHealth, type Store } from '../store/index.js';
import { clientIp, IpAllowlist, rateLimitKey } from '../util/ip.js';
import { Authenticator, type AuthenticatedKey } from './auth.js';
import { clientError, HttpError, sendError, sendJson } from './http.js';
import { BodyBudget, BodyBudgetError, BodyTimeoutError, BodyTooLargeError, readBody } from '../util/body.js';
import { answerClientError, hasDuplicateHost } from '../util/http-guard.js';
import { parseJsonBody } from './json-body.js';
import { memoryLimits, type Limits, type WindowLimiter } from '../limits/index.js';
import { checkRole, Router, type AppContext, type RouteDef } from './router.js';
import { accountRoutes } from './routes/account.js';
import { endpointRoutes } from './routes/endpoints.js';
import { buildOpenApi } from './openapi.js';
import { KeyUseRecorder } from './key-use.js';
import { validate } from './invoke.js';
import { auditWriter, keyActor, runRoute } from './audit.js';
import type { Metrics } from '../metrics/index.js';
import { serveMetrics } from '../metrics/http.js';
import { requestId, type Logger } from '../log/index.js';
import type { Supervisor } from '../runtime/supervisor.js';
import type { Tracing } from '../telemetry/index.js';

export interface ApiServerOptions {
  store: Store;
  config: Config;
  /** Extra routes from other parts of the service (Address Watch, webhooks). */
  routes?: RouteDef[];
  onEndpointChanged?: (endpointId: number) => Promise<void>;
  /** The gateway's request logs; omitted (the API alone): every log is empty. */
  requestLog?: AppContext['requestLog'];
  log?: (line: string) => void;
  /** Serves every path outside /v1, /metrics, /health and /ready (the web cabinet). */
  pages?: (req: IncomingMessage, res: ServerResponse) => Promise<void>;
  /** How often key last-use times are written (default 15 s). */
  keyUseFlushMs?: number;
  /** Runs the key last-use flush (one of its own when none is given). */
  supervisor?: Supervisor;
  metrics?: Metrics;
  /** Access log: one line per request (method, route template, status, duration, account). */
  logger?: Logger;
  /** Where the per-IP and per-account windows count: memory (default) or Redis, shared by instances. */
  limits?: Limits;
  /**
   * Whether the rest of the instance takes traffic (the gateway listens, the service is not
   * stopping), for `/ready`; the store is checked here. Omitted: the API alone is the instance.
   */
  ready?: () => boolean;
  /** Each request a span named by its route (tracing on only; probes and scrapes are left out). */
  tracing?: Tracing | undefined;
}

/** What the access log needs of a request, filled in as it is handled. */
/** What the access line tells of a request; `keyPrefix` is the API key's listed prefix, never more of it. */
interface RequestLog { id: string; route: string; accountId: number | undefined; keyPrefix?: string; started: number }

export interface ApiServer {
  server: Server;
  router: Router;
  authenticator: Authenticator;
  /** The services route handlers get; the cabinet calls the same handlers with them. */
  app: AppContext;
  keyUse: KeyUseRecorder;
}

export const RATE_LIMITED = 'Rate limit exceeded';
/** Larger request heads get 431. */
const MAX_HEADER_BYTES = 16 * 1024;
export const SERVICE_UNAVAILABLE = 'Service unavailable';

/** What the request steps share: built once per server. */
interface ApiParts {
  opts: ApiServerOptions;
  router: Router;
  authenticator: Authenticator;
  perIp: WindowLimiter;
  perAccount: WindowLimiter;
  trusted: IpAllowlist;
  app: AppContext;
  keyUse: KeyUseRecorder;
  health: () => Promise<boolean>;
  budget: BodyBudget;
  /** The OpenAPI document, serialised on first request. */
  openapi: string | undefined;
  log: (line: string) => void;
}

export function createApiServer(opts: ApiServerOptions): ApiServer {
  const parts = apiParts(opts);
  const { trusted } = parts;
  const accessLog = opts.logger?.child({ component: 'api' });
  const server = createServer({ keepAliveTimeout: 5000, requestTimeout: 30_000, maxHeaderSize: MAX_HEADER_BYTES }, (req, res) => {
    const rl: RequestLog = { id: requestId(req), route: '(unmatched)', accountId: undefined, started: performance.now() };
    res.setHeader('x-request-id', rl.id);
    if (accessLog) {
      res.once('close', () => accessLog.info({
        req_id: rl.id, method: req.method, route: rl.route, status: res.writableFinished ? res.statusCode : 499,
        duration_ms: Math.round((performance.now() - rl.started) * 10) / 10, account_id: rl.accountId, key_prefix: rl.keyPrefix, ip: clientIp(req, trusted),
      }, 'request'));
    }
    if (opts.tracing) traceRequest(opts.tracing, req, res, rl);
    handle(parts, req, res, rl).catch((err: unknown) => answerFailure(parts, err, req, res, rl));
  });
  // A malformed request line or header never reaches the handler; answer in the envelope anyway.
  server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    answerClientError(err, socket, (status) => JSON.stringify({ ok: false, error: status === 431 ? 'Request headers too large' : status === 408 ? 'Request timeout' : 'Bad request' }));
  });
  parts.app.publicUrl = () => publicUrlOf(opts.config, server);
  return { server, router: parts.router, authenticator: parts.authenticator, app: parts.app, keyUse: parts.keyUse };
}

/** Paths asked every few seconds by load balancers and Prometheus: no span each. */
const UNTRACED = new Set(['/health', '/ready', '/metrics']);

/** A span for one request, a child of the caller's `traceparent`; named by its route template once it ends. */
function traceRequest(tracing: Tracing, req: IncomingMessage, res: ServerResponse, rl: RequestLog): void {
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  if (UNTRACED.has(q === -1 ? url : url.slice(0, q))) return;
  const method = req.method ?? 'GET';
  const span = tracing.start(method, 'server', req.headers, { 'http.request.method': method });
  res.once('close', () => {
    if (span.isRecording()) {
      const status = res.writableFinished ? res.statusCode : 499;
      span.updateName(`${method} ${rl.route}`);
      span.setAttributes({ 'http.route': rl.route, 'http.response.status_code': status, 'rpcctl.request_id': rl.id });
      if (rl.accountId !== undefined) span.setAttribute('rpcctl.account.id', rl.accountId);
      if (status >= 500) tracing.fail(span, `HTTP ${status}`);
    }
    span.end();
  });
}

/** `api.public_url` without its trailing slash, else the address the listener is on (port 0 resolved). */
function publicUrlOf(config: Config, server: Server): string {
  if (config.api.public_url) return config.api.public_url.replace(/\/$/, '');
  const bound = server.address();
  const port = bound && typeof bound === 'object' ? bound.port : config.api.port;
  const host = config.api.host;
  return `http://${host.includes(':') ? `[${host === '::' ? '::1' : host}]` : host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`;
}

function apiParts(opts: ApiServerOptions): ApiParts {
  const { store, config } = opts;
  const log = opts.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const limits = opts.limits ?? memoryLimits();
  return {
    opts,
    log,
    router: new Router([...accountRoutes, ...endpointRoutes, ...(opts.routes ?? [])]),
    // Replays are refused across instances too: the seen signatures live where the limits do.
    authenticator: new Authenticator(store, { replay: limits.replayCache() }),
    perIp: limits.window('api-ip', 1000),
    perAccount: limits.window('api-account', 60_000),
    trusted: new IpAllowlist(config.api.trusted_proxies),
    // publicUrl is set once the server exists (its port may be chosen by the system).
    app: {
      store, config, onEndpointChanged: opts.onEndpointChanged ?? (async () => {}), publicUrl: () => '',
      audit: auditWriter(store, log, opts.metrics?.counter('audit_write_failures_total', 'Audit log entries that could not be written (the change itself stood)')),
      requestLog: opts.requestLog ?? (async () => ({ calls: [], next_before: null, cursor: '' })),
    },
    keyUse: new KeyUseRecorder(store, { flushMs: opts.keyUseFlushMs, log, supervisor: opts.supervisor }),
    health: storeHealth(() => store.ping()),
    budget: new BodyBudget(config.api.max_inflight_bytes_per_ip, config.api.max_inflight_bytes),
    openapi: undefined,
  };
}

/** One request: the listener's guards, the fixed paths, then a signed API route. */
async function handle(parts: ApiParts, req: IncomingMessage, res: ServerResponse, rl: RequestLog): Promise<void> {
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  const ip = clientIp(req, parts.trusted);
  const method = req.method ?? 'GET';
  // HEAD is GET without the body (Node leaves the body out of the answer).
  const routeMethod = method === 'HEAD' ? 'GET' : method;

  // The listener's guards come first, for the cabinet's pages as for the API.
  if (await refusedByListener(parts, req, res, ip)) return;
  if (await servedOutsideRoutes(parts, req, res, rl, { path, routeMethod, ip })) return;

  const match = parts.router.match(routeMethod, path);
  if (match.kind === 'not-found') {
    req.resume();
    return sendError(res, 404, 'Not found');
  }
  if (match.kind === 'method-not-allowed') {
    req.resume();
    const allow = match.allow.includes('GET') ? [...match.allow, 'HEAD'] : match.allow;
    return sendError(res, 405, `Method ${method} not allowed on ${path}`, { allow: allow.join(', ') });
  }
  rl.route = match.def.path;
  const { key, body } = await authenticate(parts, req, res, { method, path, ip });
  rl.accountId = key.account.id;
  rl.keyPrefix = key.id.slice(0, 8);
  parts.keyUse.touch(key.id);

  const accountWait = await parts.perAccount.take(String(key.account.id), parts.opts.config.limits.api_rpm_per_account);
  if (accountWait > 0) return sendError(res, 429, RATE_LIMITED, { 'retry-after': String(accountWait) });
  const query = q === -1 ? {} : Object.fromEntries(new URLSearchParams(url.slice(q + 1)));
  sendJson(res, 200, await dispatch(parts, req, { def: match.def, params: match.params, query, body, key, ip }));
}

/** The per-IP window and the one-Host rule: answered here (true) before anything else is looked at. */
async function refusedByListener(parts: ApiParts, req: IncomingMessage, res: ServerResponse, ip: string): Promise<boolean> {
  const ipWait = await parts.perIp.take(rateLimitKey(ip), parts.opts.config.limits.api_rps_per_ip);
  if (ipWait > 0) {
    req.resume();
    sendError(res, 429, RATE_LIMITED, { 'retry-after': String(ipWait) });
    return true;
  }
  if (hasDuplicateHost(req)) {
    req.resume();
    sendError(res, 400, 'More than one Host header');
    return true;
  }
  return false;
}

/** The cabinet's pages, /metrics, /health, /ready and the OpenAPI document: answered here (true), unsigned. */
async function servedOutsideRoutes(
  parts: ApiParts, req: IncomingMessage, res: ServerResponse, rl: RequestLog, at: { path: string; routeMethod: string; ip: string },
): Promise<boolean> {
  const { opts, opts: { store, config } } = parts;
  const { path, routeMethod } = at;
  if (opts.pages && !(path === '/v1' || path.startsWith('/v1/') || path === '/metrics' || path === '/health' || path === '/ready' || path === '/live')) {
    rl.route = '(cabinet)';
    await opts.pages(req, res);
    return true;
  }
  if (routeMethod !== 'GET') return false;
  if (path === '/metrics') {
    rl.route = '/metrics';
    await serveMetrics(res, opts.metrics, at.ip, { token: config.metrics.token, authorization: req.headers.authorization, required: true });
    return true;
  }
  if (path === '/live') {
    // Liveness: the process and its event loop answer. Nothing else is asked, so a store or
    // Redis outage never gets the process restarted.
    rl.route = '/live';
    sendJson(res, 200, { ok: true });
    return true;
  }
  if (path === '/health') {
    rl.route = '/health';
    const ok = await parts.health();
    sendJson(res, ok ? 200 : 503, ok ? { ok: true, store: store.kind } : { ok: false, error: SERVICE_UNAVAILABLE });
    return true;
  }
  if (path === '/ready') {
    rl.route = '/ready';
    // One answer for a load balancer: this listener answers, so the question is the gateway's and the store's.
    const [storeOk, gateway] = [await parts.health(), opts.ready ? opts.ready() : true];
    const ok = storeOk && gateway;
    sendJson(res, ok ? 200 : 503, ok ? { ok: true } : { ok: false, error: SERVICE_UNAVAILABLE, store: storeOk, gateway });
    return true;
  }
  if (path === '/v1/openapi.json') {
    rl.route = path;
    parts.openapi ??= JSON.stringify(buildOpenApi(parts.router.routes, config));
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(parts.openapi) });
    res.end(parts.openapi);
    return true;
  }
  return false;
}

/** The signed request: declared size, key and timestamp before a byte of the body is read, then the body and its signature. */
async function authenticate(
  parts: ApiParts, req: IncomingMessage, res: ServerResponse, at: { method: string; path: string; ip: string },
): Promise<{ key: AuthenticatedKey; body: Buffer }> {
  const { api } = parts.opts.config;
  if (Number(req.headers['content-length'] ?? 0) > api.max_body_bytes) {
    req.resume();
    throw new BodyTooLargeError(api.max_body_bytes);
  }
  const pending = await parts.authenticator.precheck(req.headers).catch((err: unknown) => {
    req.resume();
    throw err;
  });
  const body = await readBody(req, api.max_body_bytes, { timeoutMs: api.body_timeout_ms, lease: parts.budget.lease(at.ip, res) });
  const key = await parts.authenticator.verify(pending, { method: at.method, path: at.path, body, clientIp: at.ip });
  return { key, body };
}

/** The route's input checked against its schemas, then its handler. */
async function dispatch(
  parts: ApiParts, req: IncomingMessage,
  call: { def: RouteDef; params: Record<string, string>; query: Record<string, string>; body: Buffer; key: AuthenticatedKey; ip: string },
): Promise<object> {
  const { def, key } = call;
  checkRole(def, key.role, 'key');
  const params = validate(def.params, call.params);
  const query = validate(def.query, call.query);
  let input: unknown = undefined;
  if (def.body) {
    if (call.body.length === 0) throw new HttpError(400, 'Request body is required (JSON)');
    input = validate(def.body, parseJsonBody(call.body));
  }
  return runRoute(def, { params, query, body: input, key, account: key.account, req, app: parts.app }, { actor: keyActor(key.id.slice(0, 8)), ip: call.ip });
}

/** Error → response: a client mistake in the envelope with its status, a failure of the service as a logged 500. */
function answerFailure(parts: ApiParts, err: unknown, req: IncomingMessage, res: ServerResponse, rl: RequestLog): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const known = clientError(err);
  if (known) return sendError(res, known.status, known.message, known.headers);
  if (err instanceof BodyTooLargeError) return sendError(res, 413, `Request body too large (limit ${err.limit} bytes)`);
  if (err instanceof BodyBudgetError) return sendError(res, 429, RATE_LIMITED, { 'retry-after': '1' });
  if (err instanceof BodyTimeoutError) {
    // The rest of a slow body is not worth waiting for: close once answered.
    res.once('finish', () => req.destroy());
    return sendError(res, 408, 'Request body not received in time', { connection: 'close' });
  }
  // The store is away (multi-instance PostgreSQL down): the client did nothing wrong; retry later.
  if (isStoreUnavailable(err)) return sendError(res, 503, SERVICE_UNAVAILABLE, { 'retry-after': '1' });
  // A client that hung up mid-request is not a server failure.
  // (A request whose body was read in full is destroyed too, by autoDestroy: that one gets its 500.)
  if ((req.destroyed && !req.complete) || (err as NodeJS.ErrnoException)?.code === 'ECONNRESET') return;
  parts.log(`api: ${req.method} ${rl.route} failed (request ${rl.id}): ${(err as Error)?.stack ?? String(err)}`);
  sendError(res, 500, 'Internal server error');
}
