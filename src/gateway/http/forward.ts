import type { ServerResponse } from 'node:http';
import type { EndpointState } from '../registry.js';
import { UpstreamError, type RouteHints, type UpstreamRequest, type UpstreamResponse } from '../upstreams/index.js';
import type { GatewayContext } from './context.js';
import { sendUpstreamError } from './respond.js';
import { traceOf } from '../trace.js';

/**
 * The upstream's answer; undefined when every upstream failed (and the client was answered 502
 * or 504, or -32601 when none serves the method). `failed`: answers that case instead (a batch
 * answers per element); `id`: a single call's, for -32601.
 */
export async function forward(cx: GatewayContext, res: ServerResponse, ep: EndpointState, req: UpstreamRequest, hints?: RouteHints,
  failed?: (err: UpstreamError) => void, id?: unknown): Promise<UpstreamResponse | undefined> {
  if (cx.tracing) req.trace = traceOf(res);
  try {
    return await cx.upstreams.for(ep.env!.id, ep.env!.upstreams).send(req, hints);
  } catch (err) {
    if (err instanceof UpstreamError) {
      if (failed) failed(err);
      else sendUpstreamError(res, err, id);
      return undefined;
    }
    throw err;
  }
}
