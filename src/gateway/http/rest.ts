import type { IncomingMessage, ServerResponse } from 'node:http';
import { InvalidPathError, normaliseRestPath, type RestTarget } from '../rest-path.js';
import { priceRest } from '../../pricing/credits.js';
import type { EndpointState } from '../registry.js';
import type { GatewayContext } from './context.js';
import { readCapped } from './read-body.js';
import { forward } from './forward.js';
import { relay, send } from './respond.js';
import { loggedMethod, noteOf } from '../request-log.js';
import { traceMethod, traceOf } from '../trace.js';

/** A call to a REST-style network (any method under `/{uuid}/...`): priced by method and path. */
export async function restCall(cx: GatewayContext, req: IncomingMessage, res: ServerResponse, ep: EndpointState, pathAndQuery: string, ip: string): Promise<void> {
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
  const note = noteOf(res);
  if (note) note.method = loggedMethod(`${method} ${target.path}`);
  if (cx.tracing) traceMethod(traceOf(res), `${method} ${target.path}`, undefined, true);
  let body: Buffer | undefined;
  if (method !== 'GET' && method !== 'HEAD') {
    body = await readCapped(cx, req, res, ip);
    if (!body) return;
  } else {
    req.resume();
  }
  let admittedOne = cx.takeRps(ep, 1);
  if (typeof admittedOne !== 'number') admittedOne = await admittedOne;
  if (admittedOne === 0) return send(res, 429, 'rps');
  const ct = req.headers['content-type'];
  const upstream = await forward(cx, res, ep, { method, path: target.path + target.query, body, contentType: ct });
  if (!upstream) return;
  if (upstream.status >= 200 && upstream.status < 300) {
    const price = priceRest(ep.env!.network, method, target.path);
    cx.meter.record(ep.id, ep.accountId, price.method, price.credits);
    if (note) note.credits = price.credits;
  }
  relay(res, upstream);
}
