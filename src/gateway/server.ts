import { createServer, type Server } from 'node:http';
import { answerClientError } from '../util/http-guard.js';
import { ERROR_BODIES, rpcError } from './errors.js';
import { gatewayContext, type GatewayDeps } from './http/context.js';
import { handle } from './http/handle.js';
import { sendJson } from './http/respond.js';
import { noteCode } from './request-log.js';

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
  const cx = gatewayContext(deps);
  const log = deps.log;
  const server = createServer({ keepAliveTimeout: 30_000, requestTimeout: 60_000, maxHeaderSize: MAX_HEADER_BYTES }, (req, res) => {
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
      handle(cx, req, res)?.catch(failed);
    } catch (err) {
      failed(err);
    }
  });
  server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    answerClientError(err, socket, (status) => (status === 431 ? HEADERS_TOO_LARGE : ERROR_BODIES.invalidRequest.toString()));
  });
  return server;
}
