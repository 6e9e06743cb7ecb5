import type { Config } from '../config/index.js';
import type { Network } from '../store/index.js';
import type { ChainView, RangeQuery } from '../chains/gateway.js';

/**
 * The guards of a family's range query (`gateway.methods.rangeQuery`; EVM's log query): a range wider than the network's `max_logs_block_range` is refused (a
 * JSON-RPC error naming the limit) or split into chunks sent upstream and merged in order; an
 * answer with more than `max_logs_results` logs or `gateway.max_logs_response_bytes` bytes is
 * refused; a range is priced by the blocks it covers.
 */
export interface LogsPolicy {
  maxRange: number;
  overRange: 'refuse' | 'split';
  maxResults: number;
  maxBytes: number;
  /** Blocks per priced unit: a range costs the query's price × ceil(blocks / unit). */
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

/** How many times the query's price this call costs: one per started `blockUnit` blocks (1 when unknown). */
export function logsUnits(query: RangeQuery, policy: LogsPolicy, params: unknown, view: ChainView | undefined): number {
  const r = query.range(params, view);
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

export function resultTooLarge(query: RangeQuery, policy: LogsPolicy, id: unknown): { jsonrpc: '2.0'; error: { code: number; message: string; data: unknown }; id: unknown } {
  return {
    jsonrpc: '2.0',
    error: {
      code: -32012,
      message: `${query.label} result too large: more than ${policy.maxResults} logs or ${policy.maxBytes} bytes; narrow the range or the filter`,
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
