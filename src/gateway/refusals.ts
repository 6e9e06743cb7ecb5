import { isRawId, parseJson } from './jsonrpc.js';
import { RPC_ERRORS, ERROR_BODIES, rpcError, type RpcErrorKind } from './errors.js';

/** A JSON-RPC id as the request gave it; null when it has none or one JSON-RPC does not allow. */
export function idOf(value: unknown): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  return asId((value as { id?: unknown }).id);
}

/**
 * An id JSON-RPC allows (string or number, or a number kept as its text by parseJson), else
 * null: for answers we write ourselves.
 */
export function asId(id: unknown): unknown {
  return typeof id === 'string' || typeof id === 'number' || isRawId(id) ? id : null;
}

/**
 * The gateway's refusal of a whole request, answered the way JSON-RPC clients match answers:
 * a single call gets its own id back, a batch gets one error per element with that element's
 * id (clients such as ethers wait for every id of a batch), anything unreadable gets `id: null`.
 */
export function refusalBody(kind: RpcErrorKind, body: Buffer | undefined): Buffer | string {
  if (!body || body.length === 0) return ERROR_BODIES[kind];
  let value: unknown;
  try {
    value = parseJson(body.toString('utf8'));
  } catch {
    return ERROR_BODIES[kind];
  }
  const { code, message } = RPC_ERRORS[kind];
  if (Array.isArray(value) && value.length > 0) return JSON.stringify(value.map((el) => rpcError(code, message, idOf(el))));
  const id = idOf(value);
  return id === null ? ERROR_BODIES[kind] : JSON.stringify(rpcError(code, message, id));
}
