import type { IncomingMessage, ServerResponse } from 'node:http';
import { clientIp } from '../../util/ip.js';
import { hasDuplicateHost } from '../../util/http-guard.js';
import type { GatewayContext } from './context.js';
import { endpointOf, refuse, UUID_LENGTH } from './route.js';
import { closedTo } from './admit.js';
import { rpc } from './rpc.js';
import { restCall } from './rest.js';
import { traitsOf } from '../../chains/traits.js';
import { send, sendJson } from './respond.js';
import { noteCall } from '../request-log.js';
import { traceEndpoint, traceOf } from '../trace.js';

const CORS_PREFLIGHT = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'GET, POST, OPTIONS',
  'access-control-allow-headers': 'content-type, accept, authorization',
  'access-control-max-age': '86400',
};

/**
 * One gateway request, checks cheapest first; nothing rejected here is metered. Not async
 * itself: the steps that wait return their promise, so a call costs no extra promise here.
 */
export function handle(cx: GatewayContext, req: IncomingMessage, res: ServerResponse): Promise<void> | undefined {
  const url = req.url ?? '/';
  if (req.method === 'OPTIONS') {
    res.writeHead(204, CORS_PREFLIGHT);
    res.end();
    return;
  }
  if (url === '/health') return health(cx, res);
  if (url === '/live') {
    // The process and this thread's event loop answer; nothing else is asked.
    sendJson(res, 200, { ok: true });
    return;
  }
  if (url === '/ready') {
    // The gateway pool's check: this listener takes calls. The store is left out on purpose:
    // endpoints are in memory, so a store outage must not empty the gateway pool. Draining
    // (SIGTERM): 503 while calls are still served, so the balancer stops sending first.
    if (cx.draining?.()) sendJson(res, 503, { ok: false, error: 'Service unavailable', draining: true });
    else sendJson(res, 200, { ok: true });
    return;
  }
  // Draining: clients keeping connections open are asked to reconnect (to another instance).
  if (cx.draining?.()) res.setHeader('connection', 'close');
  if (hasDuplicateHost(req)) {
    req.resume();
    send(res, 400, 'badHost');
    return;
  }
  const ep = endpointOf(cx, req, url);
  if (!ep) return refuse(cx, req, res, 404, 'notFound');
  const ip = clientIp(req, cx.trusted);
  if (cx.requestLog) noteCall(cx.requestLog, res, ep.id, ip);
  if (cx.tracing) traceEndpoint(traceOf(res), ep);
  const closed = closedTo(ep, ip);
  if (closed) return refuse(cx, req, res, 403, closed, ip);
  const rest = url.slice(UUID_LENGTH + 1);
  if (traitsOf(ep.env!.network.family).gateway.transport === 'rest') return restCall(cx, req, res, ep, rest, ip);
  return rpc(cx, req, res, ep, rest, ip);
}

/** Nothing about the fleet (how many endpoints) to whoever asks; 503 while the store is away (serving goes on meanwhile: endpoints are in memory). */
async function health(cx: GatewayContext, res: ServerResponse): Promise<void> {
  const storeOk = cx.storeHealth ? await cx.storeHealth() : true;
  sendJson(res, storeOk ? 200 : 503, storeOk ? { ok: true } : { ok: false, error: 'Service unavailable' });
}
