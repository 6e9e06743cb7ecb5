import type { IncomingMessage, ServerResponse } from 'node:http';
import { BodyBudgetError, BodyTimeoutError, BodyTooLargeError, readBody } from '../../util/body.js';
import type { GatewayContext } from './context.js';
import { send } from './respond.js';

/** The body within the size, time and in-flight caps; undefined when it was refused (and answered). */
export async function readCapped(cx: GatewayContext, req: IncomingMessage, res: ServerResponse, ip: string): Promise<Buffer | undefined> {
  try {
    return await readBody(req, cx.g.max_body_bytes, { timeoutMs: cx.g.body_timeout_ms, lease: cx.budget.lease(ip, res) });
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
