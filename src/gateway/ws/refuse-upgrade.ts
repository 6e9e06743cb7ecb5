import type { Duplex } from 'node:stream';
import { ERROR_BODIES, RPC_ERRORS, rpcError, type RpcErrorKind } from '../errors.js';

const STATUS_TEXT: Record<number, string> = { 400: 'Bad Request', 403: 'Forbidden', 404: 'Not Found', 429: 'Too Many Requests', 503: 'Service Unavailable' };

/** An upgrade refused with the status an HTTP request would get, and a JSON-RPC error body. */
export function refuseUpgrade(socket: Duplex, status: number, kind: RpcErrorKind, message?: string): void {
  const body = message ? Buffer.from(JSON.stringify(rpcError(RPC_ERRORS[kind].code, message))) : ERROR_BODIES[kind];
  if (!socket.writable) return void socket.destroy();
  socket.end(`HTTP/1.1 ${status} ${STATUS_TEXT[status] ?? ''}\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body.toString()}`, () => socket.destroy());
}
