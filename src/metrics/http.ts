import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Metrics } from './index.js';
import { clientIp } from '../util/ip.js';

/** Where `/metrics` listens unless `metrics.listen` says otherwise (the port OpenTelemetry's Prometheus exporters use). */
export const DEFAULT_METRICS_LISTEN = '127.0.0.1:9464';

/** `metrics.token` and the request's `Authorization` header; `required`: no token configured means no /metrics here. */
export interface MetricsAuth {
  token: string | undefined;
  authorization: string | undefined;
  required?: boolean;
}

/**
 * Answers `GET /metrics` with the Prometheus text exposition; 404 when metrics are off, the
 * client's address is not in `metrics.allowed_ips` (when that list is set), or the listener
 * serves them only with a token and none is configured; 401 without the configured token.
 */
export function serveMetrics(res: ServerResponse, metrics: Metrics | undefined, clientIp: string, auth: MetricsAuth): void {
  if (!metrics?.enabled || !metrics.allows(clientIp) || (auth.required && auth.token === undefined)) {
    sendJson(res, 404, { ok: false, error: 'Not found' });
    return;
  }
  if (auth.token !== undefined && !bearerMatches(auth.authorization, auth.token)) {
    sendJson(res, 401, { ok: false, error: 'metrics need Authorization: Bearer <metrics.token>' }, { 'www-authenticate': 'Bearer' });
    return;
  }
  metrics.text().then((text) => {
    res.writeHead(200, { 'content-type': metrics.contentType, 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store' });
    res.end(text);
  }, (err: unknown) => {
    const body = `# metrics collection failed: ${(err as Error).message}\n`;
    res.writeHead(500, { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
}

/** Compared as digests of equal length, in constant time: neither the token nor its length leaks. */
function bearerMatches(header: string | undefined, token: string): boolean {
  const m = /^Bearer +(\S+) *$/i.exec(header ?? '');
  const digest = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(digest(m?.[1] ?? ''), digest(token)) && m !== null;
}

/** `host:port` as `metrics.listen` gives it (`[::1]:9464` for IPv6). */
export function parseListen(value: string): { host: string; port: number } {
  const i = value.lastIndexOf(':');
  const host = value.slice(0, i).replace(/^\[(.*)\]$/, '$1');
  return { host, port: Number(value.slice(i + 1)) };
}

/**
 * The metrics listener: `GET /metrics` and nothing else, apart from the public listeners, so
 * scrapers reach it on a private address and the gateway's clients never do.
 */
/** What `/ready` reports: 200 only when every part named is true. */
export type Readiness = () => Promise<Record<string, boolean>>;

export function createMetricsServer(metrics: Metrics, token: string | undefined, readiness?: Readiness): Server {
  return createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/metrics' && (req.method === 'GET' || req.method === 'HEAD')) {
      return serveMetrics(res, metrics, clientIp(req, undefined), { token, authorization: req.headers.authorization });
    }
    if (path === '/live' && req.method === 'GET') return sendJson(res, 200, { ok: true });
    // Load balancers that probe on the operators' network ask here rather than on the public API listener.
    if (path === '/ready' && req.method === 'GET' && readiness) {
      void readiness().then((parts) => {
        const ok = Object.values(parts).every(Boolean);
        sendJson(res, ok ? 200 : 503, ok ? { ok: true } : { ok: false, error: 'Service unavailable', ...parts });
      }, () => sendJson(res, 503, { ok: false, error: 'Service unavailable' }));
      return;
    }
    sendJson(res, 404, { ok: false, error: `Not found: this listener serves GET /metrics, GET /live${readiness ? ' and GET /ready' : ''} only` });
  });
}

function sendJson(res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void {
  const body = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', ...headers, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}
