import { matchEvmBlock, TRANSFER_TOPIC, type EvmLog, type EvmTx } from './match.js';
import type { WatchRegistry } from './registry.js';
import { RpcClient } from './rpc.js';
import type { ChainAdapter, FetchedBlock } from './scanner.js';

interface RpcBlock {
  number: string;
  hash: string;
  parentHash: string;
  transactions: EvmTx[];
}

/** EVM JSON-RPC: the block with full transactions, and its Transfer logs by block hash. */
export class EvmChain implements ChainAdapter {
  readonly #rpc: RpcClient;

  constructor(upstreams: string[], timeoutMs?: number) {
    this.#rpc = new RpcClient(upstreams, timeoutMs);
  }

  async head(): Promise<number> {
    return Number(BigInt(await this.#rpc.call<string>('eth_blockNumber')));
  }

  async block(height: number, registry: WatchRegistry, envId: number): Promise<FetchedBlock | undefined> {
    const block = await this.#rpc.call<RpcBlock | null>('eth_getBlockByNumber', [`0x${height.toString(16)}`, true]);
    if (!block) return undefined;
    // By hash, so the logs belong to exactly the block whose transactions we read.
    const logs = registry.size(envId) === 0 ? [] : await this.#rpc.call<EvmLog[]>('eth_getLogs', [{ blockHash: block.hash, topics: [TRANSFER_TOPIC] }]);
    return {
      hash: block.hash, parentHash: block.parentHash, txHashes: block.transactions.map((t) => t.hash),
      hits: matchEvmBlock(registry, envId, block.transactions, logs),
    };
  }

  close(): Promise<void> {
    return this.#rpc.close();
  }
}
