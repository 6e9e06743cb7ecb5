import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { requestId, type Logger } from '../log/index.js';
import { clientIp, type IpAllowlist } from '../util/ip.js';
import { networkLabels, UNKNOWN_NETWORK, type NetworkLabels, type GatewayMetrics } from './metrics.js';
import type { EndpointLookup } from './registry.js';

/** The gateway's own refusals by HTTP status (403 is told apart by the endpoint's state). */
const REASONS: Record<number, string> = {
  400: 'invalid_request', 404: 'not_found', 405: 'method_not_allowed', 408: 'body_timeout', 413: 'body_too_large', 429: 'rps', 431: 'headers_too_large',
};

/**
 * Answers the gateway passed on from an upstream (or its cache of them): whatever their status
 * (Horizon's 404 for an unknown account, a node's 400), they are not the gateway's refusals.
 */
export const passedOn = new WeakSet<ServerResponse>();

interface Child { inc(): void }

/**
 * Counts every answered HTTP request by network and status, and the gateway's refusals by
 * reason, from the 'finish' of the response: the request path itself is untouched. Label
 * children are made once per (environment, status) and kept, so a request costs two map
 * lookups and a listener.
 */
export function observeRequests(server: Server, registry: EndpointLookup, m: GatewayMetrics): void {
  const children = new Map<number, { request: Child; rejection: Child | undefined }>();

  function childFor(envId: number, labels: NetworkLabels, status: number, paused: boolean): { request: Child; rejection: Child | undefined } {
    // 403 splits by reason, the rest by status alone.
    const key = envId * 2000 + status * 2 + (paused ? 1 : 0);
    let c = children.get(key);
    if (!c) {
      const reason = status === 403 ? (paused ? 'paused' : 'ip_not_allowed') : REASONS[status];
      c = {
        request: m.requests.labels({ ...labels, status: String(status) }),
        rejection: reason ? m.rejections.labels({ ...labels, reason, transport: 'http' }) : undefined,
      };
      children.set(key, c);
    }
    return c;
  }

  function onFinish(this: ServerResponse): void {
    const req = (this as ServerResponse & { req: IncomingMessage }).req;
    const url = req.url ?? '/';
    if (url === '/health') return;
    const ep = registry.get(url.slice(1, 37));
    const env = ep?.env;
    const status = this.statusCode;
    const c = env ? childFor(env.id, networkLabels(env), status, ep.paused) : childFor(0, UNKNOWN_NETWORK, status, false);
    c.request.inc();
    if (!passedOn.has(this)) c.rejection?.inc();
  }

  server.on('request', (_req: IncomingMessage, res: ServerResponse) => {
    res.on('finish', onFinish);
  });
}

/**
 * Opt-in gateway access log (`gateway.access_log_sample`): a share of requests, each one line
 * with a request id, network, status, duration and the endpoint's ids. Never the body, the
 * client's headers or anything of the upstream.
 */
export function sampleAccessLog(server: Server, registry: EndpointLookup, logger: Logger, rate: number, trusted: IpAllowlist): void {
  if (rate <= 0) return;
  const log = logger.child({ component: 'gateway' });
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (rate < 1 && Math.random() >= rate) return;
    const started = performance.now();
    const id = requestId(req);
    res.once('close', () => {
      const url = req.url ?? '/';
      const ep = registry.get(url.slice(1, 37));
      log.info({
        req_id: id, method: req.method, route: ep ? '/{endpoint_uuid}' : url === '/health' ? url : '(unmatched)',
        network: ep?.env ? `${ep.env.network.slug}-${ep.env.slug}` : undefined, status: res.writableFinished ? res.statusCode : 499,
        duration_ms: Math.round((performance.now() - started) * 10) / 10, endpoint_id: ep?.id, account_id: ep?.accountId, ip: clientIp(req, trusted),
      }, 'request');
    });
  });
}
