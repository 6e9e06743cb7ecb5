import type { ChainAdapter, FetchedBlock, WatchLookup } from '../family.js';
import { ScanUpstreamError, UpstreamPool } from '../rpc.js';
import { hasContractCalls, matchTronBlock, type TronTx, type TronTxInfo } from './match.js';

interface TronBlock {
  blockID?: string;
  block_header?: { raw_data: { number?: number; parentHash: string } };
  transactions?: TronTx[];
}

/** int64 fields that can exceed 2^53: kept as their source text. */
const BIG_FIELDS = new Set(['amount', 'call_value']);

/**
 * The Tron HTTP API of java-tron full nodes and TronGrid: `/wallet/getnowblock` for the head,
 * `/wallet/getblockbynum` for a block, and `/wallet/gettransactioninfobyblocknum` for the
 * TRC-20 Transfer logs (only when the block has a successful contract call and something is
 * watched).
 */
export class TronChain implements ChainAdapter {
  readonly #pool: UpstreamPool;

  constructor(upstreams: string[], timeoutMs?: number) {
    this.#pool = new UpstreamPool(upstreams, timeoutMs);
  }

  async head(): Promise<number> {
    const block = await this.#post<TronBlock>('/wallet/getnowblock', {});
    const n = block.block_header?.raw_data.number;
    if (typeof n !== 'number') throw new ScanUpstreamError('/wallet/getnowblock: no block number in the answer');
    return n;
  }

  /** The full block: the HTTP API has no lighter call for a block's id by number. */
  async blockHash(height: number): Promise<string | undefined> {
    const block = await this.#post<TronBlock>('/wallet/getblockbynum', { num: height });
    return block.blockID || undefined;
  }

  async block(height: number, registry: WatchLookup, envId: number): Promise<FetchedBlock | undefined> {
    const block = await this.#post<TronBlock>('/wallet/getblockbynum', { num: height });
    // The API answers `{}` for a block it does not have.
    if (!block.blockID || !block.block_header) return undefined;
    if (block.block_header.raw_data.number !== undefined && block.block_header.raw_data.number !== height) {
      throw new ScanUpstreamError(`/wallet/getblockbynum ${height} answered block ${block.block_header.raw_data.number}`);
    }
    const txs = block.transactions ?? [];
    const watching = registry.size(envId) > 0;
    const infos = watching && hasContractCalls(txs) ? await this.#infos(height, txs) : [];
    return {
      hash: block.blockID,
      parentHash: block.block_header.raw_data.parentHash,
      txHashes: txs.map((t) => t.txID),
      hits: watching ? matchTronBlock(registry, envId, txs, infos) : [],
    };
  }

  /** The block's transaction infos; they must cover its transactions (else a node behind: retry). */
  async #infos(height: number, txs: readonly TronTx[]): Promise<TronTxInfo[]> {
    const infos = await this.#post<TronTxInfo[] | Record<string, never>>('/wallet/gettransactioninfobyblocknum', { num: height });
    const list = Array.isArray(infos) ? infos : [];
    const have = new Set(list.map((i) => i.id));
    const missing = txs.find((t) => t.raw_data.contract[0]?.type === 'TriggerSmartContract' && !have.has(t.txID));
    if (missing) throw new ScanUpstreamError(`/wallet/gettransactioninfobyblocknum ${height}: no info for ${missing.txID}`);
    return list;
  }

  #post<T>(path: string, body: object): Promise<T> {
    return this.#pool.use(`POST ${path}`, async (base) => {
      const res = await this.#pool.fetch(base.replace(/\/+$/, '') + path, { method: 'POST', body: JSON.stringify(body) });
      if (res.status !== 200) throw new ScanUpstreamError(`POST ${path}: node answered HTTP ${res.status}`);
      let parsed: unknown;
      try {
        parsed = parseTronJson(res.text);
      } catch {
        throw new ScanUpstreamError(`POST ${path}: node answered without JSON`);
      }
      const err = (parsed as { Error?: string } | null)?.Error;
      if (typeof err === 'string') throw new ScanUpstreamError(`POST ${path}: ${err}`);
      return parsed as T;
    });
  }

  close(): Promise<void> {
    return this.#pool.close();
  }
}

type Reviver = (this: unknown, key: string, value: unknown, context?: { source?: string }) => unknown;

/** JSON with int64 amounts kept exact, as decimal strings. */
export function parseTronJson(text: string): unknown {
  const reviver: Reviver = (key, value, context) =>
    BIG_FIELDS.has(key) && typeof value === 'number' ? context?.source ?? BigInt(value).toString() : value;
  return JSON.parse(text, reviver as Parameters<typeof JSON.parse>[1]);
}
