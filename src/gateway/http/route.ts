import type { IncomingMessage, ServerResponse } from 'node:http';
import { clientIp } from '../../util/ip.js';
import { refusalBody } from '../refusals.js';
import type { EndpointState } from '../registry.js';
import type { GatewayContext } from './context.js';
import { readCapped } from './read-body.js';
import { send, sendText } from './respond.js';
import { RPC_ERRORS, type RpcErrorKind } from '../errors.js';
import { noteCode } from '../request-log.js';

export const UUID_LENGTH = 36;
/** Refused requests' bodies are read only up to this size, to echo their ids. */
const REFUSAL_READ_BYTES = 64 * 1024;

/**
 * The endpoint a request is for: `/{uuid}` alone or followed by `/` or `?`, with a Host that
 * does not name another endpoint. Undefined: not found (404), whatever the reason.
 */
export function endpointOf(cx: GatewayContext, req: IncomingMessage, url: string): EndpointState | undefined {
  const afterUuid = url.length > UUID_LENGTH ? url.charCodeAt(UUID_LENGTH + 1) : NaN;
  const uuid = url.slice(1, UUID_LENGTH + 1);
  const ep = url.length === UUID_LENGTH + 1 || afterUuid === 47 /* / */ || afterUuid === 63 /* ? */ ? cx.registry.get(uuid) : undefined;
  if (!ep || !ep.env || !hostMatches(cx.hostPrefix, req.headers.host, ep)) return undefined;
  return ep;
}

/** Whether a Host of the `{prefix}-…` form names this endpoint (WebSocket upgrades check the same). */
export function hostMatches(prefix: string, host: string | undefined, ep: EndpointState): boolean {
  if (host === undefined) return true;
  const dot = host.indexOf('.');
  if (dot === -1) return true;
  // Host names are case-insensitive; so is the check.
  const label = host.slice(0, dot).toLowerCase();
  // Only a Host of the `{prefix}-{network}-{env}.` form is checked; IPs and other names route by UUID alone.
  return !label.startsWith(prefix) || label === ep.hostLabel;
}

/**
 * A refusal that echoes the request's id(s) when they can be read: a body of a declared,
 * call-sized length is read (within the same caps) for them; a larger or chunked one is not.
 */
export async function refuse(cx: GatewayContext, req: IncomingMessage, res: ServerResponse, status: number, kind: RpcErrorKind, ip = clientIp(req, cx.trusted)): Promise<void> {
  noteCode(res, RPC_ERRORS[kind].code);
  if (!(Number(req.headers['content-length'] ?? 0) <= REFUSAL_READ_BYTES) || req.headers['transfer-encoding'] !== undefined) {
    req.resume();
    return send(res, status, kind);
  }
  const body = await readCapped(cx, req, res, ip);
  if (!body) return;
  sendText(res, status, refusalBody(kind, body));
}
