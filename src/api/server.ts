import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { z } from 'zod';
import type { Config } from '../config/index.js';
import type { Store } from '../store/index.js';
import { clientIp, IpAllowlist, rateLimitKey } from '../util/ip.js';
import { formatIssues } from '../util/zod.js';
import { Authenticator } from './auth.js';
import { HttpError, sendError, sendJson } from './http.js';
import { BodyTooLargeError, readBody } from '../util/body.js';
import { FixedWindowLimiter } from './rate-limit.js';
import { Router, type AppContext, type RouteDef } from './router.js';
import { accountRoutes } from './routes/account.js';
import { endpointRoutes } from './routes/endpoints.js';
import { buildOpenApi } from './openapi.js';

export interface ApiServerOptions {
  store: Store;
  config: Config;
  /** Extra routes from other parts of the service (Address Watch, webhooks). */
  routes?: RouteDef[];
  onEndpointChanged?: (endpointId: number) => Promise<void>;
  log?: (line: string) => void;
}

export interface ApiServer {
  server: Server;
  router: Router;
  authenticator: Authenticator;
}

export const RATE_LIMITED = 'Rate limit exceeded';

export function createApiServer(opts: ApiServerOptions): ApiServer {
  const { store, config } = opts;
  const log = opts.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const router = new Router([...accountRoutes, ...endpointRoutes, ...(opts.routes ?? [])]);
  const authenticator = new Authenticator(store);
  const perIp = new FixedWindowLimiter(1000);
  const perAccount = new FixedWindowLimiter(60_000);
  const trusted = new IpAllowlist(config.api.trusted_proxies);
  const app: AppContext = { store, config, onEndpointChanged: opts.onEndpointChanged ?? (async () => {}) };
  let openapi: string | undefined;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    const ip = clientIp(req, trusted);
    const method = req.method ?? 'GET';

    const ipWait = perIp.take(rateLimitKey(ip), config.limits.api_rps_per_ip);
    if (ipWait > 0) {
      req.resume();
      return sendError(res, 429, RATE_LIMITED, { 'retry-after': String(ipWait) });
    }

    if (path === '/v1/openapi.json' && method === 'GET') {
      openapi ??= JSON.stringify(buildOpenApi(router.routes, config));
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(openapi) });
      res.end(openapi);
      return;
    }

    const match = router.match(method, path);
    if (match.kind === 'not-found') {
      req.resume();
      return sendError(res, 404, 'Not found');
    }
    if (match.kind === 'method-not-allowed') {
      req.resume();
      return sendError(res, 405, `Method ${method} not allowed on ${path}`, { allow: match.allow.join(', ') });
    }

    const body = await readBody(req, config.api.max_body_bytes);
    const key = await authenticator.authenticate({ method, path, headers: req.headers, body, clientIp: ip });
    const account = key.account;

    const accountWait = perAccount.take(String(account.id), config.limits.api_rpm_per_account);
    if (accountWait > 0) return sendError(res, 429, RATE_LIMITED, { 'retry-after': String(accountWait) });

    const def = match.def;
    const params = validate(def.params, match.params);
    const query = validate(def.query, q === -1 ? {} : Object.fromEntries(new URLSearchParams(url.slice(q + 1))));
    let input: unknown = undefined;
    if (def.body) {
      if (body.length === 0) throw new HttpError(400, 'Request body is required (JSON)');
      try {
        input = JSON.parse(body.toString('utf8'));
      } catch {
        throw new HttpError(400, 'Malformed JSON body');
      }
      if (input === null || typeof input !== 'object' || Array.isArray(input)) throw new HttpError(400, 'Request body must be a JSON object');
      input = validate(def.body, input);
    }
    const result = await def.handler({ params, query, body: input, key, account, req, app });
    sendJson(res, 200, result);
  }

  const server = createServer({ keepAliveTimeout: 5000, requestTimeout: 30_000 }, (req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      if (err instanceof HttpError) return sendError(res, err.status, err.message, err.headers);
      if (err instanceof BodyTooLargeError) return sendError(res, 413, `Request body too large (limit ${err.limit} bytes)`);
      // A client that hung up mid-request is not a server failure.
      // (A request whose body was read in full is destroyed too, by autoDestroy: that one gets its 500.)
      if ((req.destroyed && !req.complete) || (err as NodeJS.ErrnoException)?.code === 'ECONNRESET') return;
      log(`api: ${req.method} ${(req.url ?? '').split('?')[0]} failed: ${(err as Error)?.stack ?? String(err)}`);
      sendError(res, 500, 'Internal server error');
    });
  });
  // A malformed request line or header never reaches the handler; answer in the envelope anyway.
  server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    if (!socket.writable || err.code === 'ECONNRESET') return socket.destroy();
    const text = JSON.stringify({ ok: false, error: 'Bad request' });
    socket.end(`HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: ${text.length}\r\nconnection: close\r\n\r\n${text}`);
  });
  return { server, router, authenticator };
}

function validate(schema: z.ZodType | undefined, value: unknown): unknown {
  if (!schema) return value;
  const result = schema.safeParse(value);
  if (!result.success) throw new HttpError(400, formatIssues(result.error.issues));
  return result.data;
}
