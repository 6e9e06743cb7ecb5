import type { Config } from '../config/index.js';
import type { Network } from '../store/index.js';
import type { ChainView } from './cache.js';

/**
 * `eth_getLogs` guards: a range wider than the network's `max_logs_block_range` is refused (a
 * JSON-RPC error naming the limit) or split into chunks sent upstream and merged in order; an
 * answer with more than `max_logs_results` logs or `gateway.max_logs_response_bytes` bytes is
 * refused; a range is priced by the blocks it covers.
 */
export interface LogsPolicy {
  maxRange: number;
  overRange: 'refuse' | 'split';
  maxResults: number;
  maxBytes: number;
  /** Blocks per priced unit: a range costs `eth_getLogs` × ceil(blocks / unit). */
  blockUnit: number;
}

export const DEFAULT_LOGS_BLOCK_UNIT = 1000;

export function logsPolicies(config: Config): (network: Network) => LogsPolicy {
  const byId = new Map<number, LogsPolicy>();
  return (network) => {
    let p = byId.get(network.id);
    if (!p) {
      const n = config.networks.find((c) => c.slug === network.slug);
      p = {
        maxRange: n?.max_logs_block_range ?? 10_000,
        overRange: n?.logs_over_range ?? 'refuse',
        maxResults: n?.max_logs_results ?? 10_000,
        maxBytes: config.gateway.max_logs_response_bytes,
        blockUnit: network.credits.logs_block_unit ?? DEFAULT_LOGS_BLOCK_UNIT,
      };
      byId.set(network.id, p);
    }
    return p;
  };
}

export interface LogsFilter { fromBlock?: unknown; toBlock?: unknown; blockHash?: unknown; [k: string]: unknown }

/** The filter's range as numbers, or undefined when it cannot be known (a tag before the first probe, a malformed bound). */
export function logsRange(params: unknown, view: ChainView | undefined): { from: number; to: number } | undefined {
  const f = Array.isArray(params) ? params[0] as LogsFilter | undefined : undefined;
  if (!f || typeof f !== 'object') return undefined;
  if (f.blockHash !== undefined) return undefined;
  const from = bound(f.fromBlock, view);
  const to = bound(f.toBlock, view);
  return from === undefined || to === undefined ? undefined : { from, to };
}

function bound(v: unknown, view: ChainView | undefined): number | undefined {
  if (v === undefined || v === null || v === 'latest' || v === 'pending' || v === 'safe') return view?.head;
  if (v === 'finalized') return view?.finalized;
  if (v === 'earliest') return 0;
  return typeof v === 'string' && /^0x[0-9a-f]{1,14}$/i.test(v) ? Number.parseInt(v, 16) : undefined;
}

/** How many times `eth_getLogs`' price this call costs: one per started `blockUnit` blocks (1 when unknown). */
export function logsUnits(policy: LogsPolicy, params: unknown, view: ChainView | undefined): number {
  const r = logsRange(params, view);
  if (!r || r.to < r.from) return 1;
  return Math.max(1, Math.ceil((r.to - r.from + 1) / policy.blockUnit));
}

export function rangeTooLarge(policy: LogsPolicy, blocks: number, id: unknown): { jsonrpc: '2.0'; error: { code: number; message: string; data: unknown }; id: unknown } {
  return {
    jsonrpc: '2.0',
    error: {
      code: -32602,
      message: `block range too large: ${blocks} blocks, the limit is ${policy.maxRange} (max_logs_block_range); query smaller ranges`,
      data: { max_logs_block_range: policy.maxRange, requested_blocks: blocks },
    },
    id,
  };
}

export function resultTooLarge(policy: LogsPolicy, id: unknown): { jsonrpc: '2.0'; error: { code: number; message: string; data: unknown }; id: unknown } {
  return {
    jsonrpc: '2.0',
    error: {
      code: -32012,
      message: `eth_getLogs result too large: more than ${policy.maxResults} logs or ${policy.maxBytes} bytes; narrow the range or the filter`,
      data: { max_logs_results: policy.maxResults, max_logs_response_bytes: policy.maxBytes },
    },
    id,
  };
}

/** Chunks of at most `size` blocks covering [from, to], in order. */
export function chunks(from: number, to: number, size: number): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (let a = from; a <= to; a += size) out.push([a, Math.min(to, a + size - 1)]);
  return out;
}
