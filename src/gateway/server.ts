import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { answerClientError } from '../util/http-guard.js';
import { ERROR_BODIES, rpcError } from './errors.js';
import { gatewayContext, type GatewayDeps } from './http/context.js';
import { handle } from './http/handle.js';
import { sendJson } from './http/respond.js';
import { noteCode } from './request-log.js';
import { traced } from './trace.js';

export type { GatewayDeps } from './http/context.js';

/** Larger request heads get 431. */
const MAX_HEADER_BYTES = 16 * 1024;
const HEADERS_TOO_LARGE = JSON.stringify(rpcError(-32600, 'request headers too large'));

/**
 * The JSON-RPC gateway: `POST /{endpoint_uuid}` for JSON-RPC networks, any method under
 * `/{endpoint_uuid}/...` for REST-style ones. The request path is the steps in http/, over one
 * context built here.
 */
export function createGatewayServer(deps: GatewayDeps): Server {
  const listener = gatewayListener(deps);
  const server = createServer({ keepAliveTimeout: 30_000, requestTimeout: 60_000, maxHeaderSize: MAX_HEADER_BYTES }, listener);
  LISTENERS.set(server, listener);
  server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    answerClientError(err, socket, (status) => (status === 431 ? HEADERS_TOO_LARGE : ERROR_BODIES.invalidRequest.toString()));
  });
  return server;
}

/**
 * The request listener over one context. A config reload puts a new one in its place on the
 * same server (`replaceListener`): requests already in it finish on the context they began with.
 */
export function gatewayListener(deps: GatewayDeps): Listener {
  const cx = gatewayContext(deps);
  const log = deps.log;
  return (req, res) => {
    const failed = (err: unknown): void => {
      // A client that hung up mid-request is not a gateway failure.
      if (req.destroyed || (err as NodeJS.ErrnoException)?.code === 'ECONNRESET') {
        res.destroy();
        return;
      }
      log(`gateway: ${req.method} request failed: ${(err as Error)?.stack ?? String(err)}`);
      noteCode(res, -32603);
      if (!res.headersSent) sendJson(res, 500, rpcError(-32603, 'internal error'));
      else res.destroy();
    };
    try {
      (cx.tracing ? traced(cx.tracing, req, res, () => handle(cx, req, res)) : handle(cx, req, res))?.catch(failed);
    } catch (err) {
      failed(err);
    }
  };
}

type Listener = (req: IncomingMessage, res: ServerResponse) => void;
const LISTENERS = new WeakMap<Server, Listener>();

/** Puts a listener over new deps (a config reload) in the place of the server's gateway listener, before the observers' listeners. */
export function replaceListener(server: Server, deps: GatewayDeps): void {
  const next = gatewayListener(deps);
  const old = LISTENERS.get(server);
  if (old) server.removeListener('request', old);
  server.prependListener('request', next);
  LISTENERS.set(server, next);
}
