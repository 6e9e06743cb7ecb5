/** One valid element of a request: what metering needs. */
export interface RpcCall {
  method: string;
  params?: unknown;
  /** Undefined for a notification. */
  id?: unknown;
}

export type ParsedRpc =
  | { kind: 'parse-error' }
  | { kind: 'invalid'; id: unknown }
  | { kind: 'single'; call: RpcCall }
  | {
    kind: 'batch';
    /** The elements to forward, as they came. */
    valid: unknown[];
    calls: RpcCall[];
    /** Error answers for elements we refuse ourselves; merged into the upstream's array. */
    rejected: Array<{ jsonrpc: '2.0'; error: { code: number; message: string }; id: unknown }>;
  };

function isCall(v: unknown): v is { method: string; params?: unknown; id?: unknown } {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && typeof (v as { method?: unknown }).method === 'string'
    && (v as { method: string }).method.length > 0;
}

/** Validates a JSON-RPC 2.0 body just enough to meter it; the upstream judges the rest. */
export function parseRpc(body: Buffer): ParsedRpc {
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    return { kind: 'parse-error' };
  }
  if (!Array.isArray(value)) {
    if (isCall(value)) return { kind: 'single', call: { method: value.method, params: value.params, id: value.id } };
    const id = typeof value === 'object' && value !== null ? (value as { id?: unknown }).id ?? null : null;
    return { kind: 'invalid', id };
  }
  if (value.length === 0) return { kind: 'invalid', id: null };
  const valid: unknown[] = [];
  const calls: RpcCall[] = [];
  const rejected: Array<{ jsonrpc: '2.0'; error: { code: number; message: string }; id: unknown }> = [];
  for (const el of value) {
    if (isCall(el)) {
      valid.push(el);
      calls.push({ method: el.method, params: el.params, id: el.id });
    } else {
      const id = typeof el === 'object' && el !== null ? (el as { id?: unknown }).id ?? null : null;
      rejected.push({ jsonrpc: '2.0', error: { code: -32600, message: 'invalid request' }, id });
    }
  }
  return { kind: 'batch', valid, calls, rejected };
}
