import { MAX_JSON_DEPTH } from '../util/json-depth.js';
import type { UpstreamError } from './upstreams/index.js';

/**
 * Gateway answers that are not the upstream's. Codes are the JSON-RPC 2.0 ones, EIP-1474's
 * where its meaning is ours (-32001 resource not found, -32002 resource unavailable, -32005
 * limit exceeded), and otherwise codes no EIP assigns (-32010..-32013), so client libraries
 * never map a refusal to an unrelated error class. Bodies with `id: null` are built once: the hot
 * path writes a ready Buffer.
 */
export const RPC_ERRORS = {
  parse: { code: -32700, message: 'parse error' },
  invalidRequest: { code: -32600, message: 'invalid request' },
  notFound: { code: -32001, message: 'endpoint not found' },
  paused: { code: -32002, message: 'endpoint paused' },
  // Not -32003: EIP-1474 gives it to "transaction rejected", and viem throws TransactionRejectedRpcError.
  ipNotAllowed: { code: -32012, message: 'ip address not allowed' },
  rps: { code: -32005, message: 'rps limit exceeded' },
  upstreamFailed: { code: -32010, message: 'upstream failed' },
  upstreamTimeout: { code: -32011, message: 'upstream timed out' },
  // As a node answers it: no upstream serves the method (configured, or learnt from their answers).
  methodNotFound: { code: -32601, message: 'method not found' },
  /** Under an integrity policy (integrity.ts). */
  disagreement: { code: -32013, message: 'upstream answers disagree' },
  bodyTooLarge: { code: -32600, message: 'request body too large' },
  batchTooLarge: { code: -32600, message: 'batch too large' },
  methodNotAllowed: { code: -32600, message: 'use POST with a JSON-RPC body' },
  invalidPath: { code: -32600, message: 'invalid path' },
  badHost: { code: -32600, message: 'more than one Host header' },
  bodyBudget: { code: -32005, message: 'too many request bytes in flight' },
  bodyTimeout: { code: -32600, message: 'request body timed out' },
  tooDeep: { code: -32600, message: `invalid request: JSON nested deeper than ${MAX_JSON_DEPTH} levels` },
} as const;

export type RpcErrorKind = keyof typeof RPC_ERRORS;

/** How an UpstreamError is answered: the error and the HTTP status (-32601 is 200, as a node answers it). */
export function upstreamFailure(err: UpstreamError): { status: number; kind: RpcErrorKind } {
  switch (err.code) {
    case 'E_UPSTREAM_TIMEOUT': return { status: 504, kind: 'upstreamTimeout' };
    case 'E_METHOD_UNSUPPORTED': return { status: 200, kind: 'methodNotFound' };
    default: return { status: 502, kind: 'upstreamFailed' };
  }
}

export function rpcError(code: number, message: string, id: unknown = null): { jsonrpc: '2.0'; error: { code: number; message: string }; id: unknown } {
  return { jsonrpc: '2.0', error: { code, message }, id };
}

export const ERROR_BODIES = Object.fromEntries(
  Object.entries(RPC_ERRORS).map(([k, e]) => [k, Buffer.from(JSON.stringify(rpcError(e.code, e.message)))]),
) as Record<RpcErrorKind, Buffer>;
