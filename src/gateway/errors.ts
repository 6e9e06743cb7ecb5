/**
 * Gateway answers that are not the upstream's. Bodies with `id: null` are built once: the hot
 * path writes a ready Buffer.
 */
export const RPC_ERRORS = {
  parse: { code: -32700, message: 'parse error' },
  invalidRequest: { code: -32600, message: 'invalid request' },
  notFound: { code: -32001, message: 'endpoint not found' },
  paused: { code: -32002, message: 'endpoint paused' },
  ipNotAllowed: { code: -32003, message: 'ip address not allowed' },
  rps: { code: -32005, message: 'rps limit exceeded' },
  upstreamFailed: { code: -32010, message: 'upstream failed' },
  upstreamTimeout: { code: -32011, message: 'upstream timed out' },
  bodyTooLarge: { code: -32600, message: 'request body too large' },
  batchTooLarge: { code: -32600, message: 'batch too large' },
  methodNotAllowed: { code: -32600, message: 'use POST with a JSON-RPC body' },
} as const;

export type RpcErrorKind = keyof typeof RPC_ERRORS;

export function rpcError(code: number, message: string, id: unknown = null): { jsonrpc: '2.0'; error: { code: number; message: string }; id: unknown } {
  return { jsonrpc: '2.0', error: { code, message }, id };
}

export const ERROR_BODIES = Object.fromEntries(
  Object.entries(RPC_ERRORS).map(([k, e]) => [k, Buffer.from(JSON.stringify(rpcError(e.code, e.message)))]),
) as Record<RpcErrorKind, Buffer>;
