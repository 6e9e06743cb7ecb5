import type { IncomingMessage } from 'node:http';
import { readBody } from '../util/body.js';
import { tokensEqual, type Session } from './sessions.js';

const MAX_FORM_BYTES = 64 * 1024;

/** A form body, cut off like an API body when it arrives too slowly. */
export async function readForm(req: IncomingMessage, timeoutMs: number): Promise<URLSearchParams> {
  const body = await readBody(req, MAX_FORM_BYTES, { timeoutMs });
  const type = String(req.headers['content-type'] ?? '');
  if (body.length === 0 || !type.startsWith('application/x-www-form-urlencoded')) return new URLSearchParams();
  return new URLSearchParams(body.toString('utf8'));
}

export function csrfOk(req: IncomingMessage, form: URLSearchParams, session: Session): boolean {
  const header = req.headers['x-csrf-token'];
  const given = form.get('_csrf') ?? (typeof header === 'string' ? header : undefined);
  return given !== undefined && tokensEqual(given, session.csrfToken);
}

/**
 * A request another site made the browser send: Fetch Metadata where the browser sends it,
 * else an Origin that is not ours. Refused for every state change, even with a valid token.
 */
export function crossSite(req: IncomingMessage): boolean {
  const site = req.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none') return true;
  const origin = req.headers.origin;
  if (origin === undefined) return false;
  if (origin === 'null') return true;
  try {
    return new URL(origin).host !== req.headers.host;
  } catch {
    return true;
  }
}
