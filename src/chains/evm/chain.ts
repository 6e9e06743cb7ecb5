import { matchEvmBlock, TRANSFER_TOPIC, valueHitTxs, withReverted, type EvmLog, type EvmTx } from './match.js';
import { hex } from '@scure/base';
import { keccak_256 } from '@noble/hashes/sha3';
import { JsonRpcAnswerError, RpcClient, ScanUpstreamError } from '../rpc.js';
import { PayoutTxError } from '../payout-tx.js';
import type { ChainAdapter, FetchedBlock, WatchLookup } from '../family.js';

interface RpcBlock {
  number: string;
  hash: string;
  parentHash: string;
  transactions: EvmTx[];
}

interface RpcReceipt {
  transactionHash: string;
  blockHash: string;
  /** `0x1` success, `0x0` reverted; absent before Byzantium (no revert then). */
  status?: string;
}

/** Up to this many receipts are fetched one by one; more take the whole block's receipts. */
const SINGLE_RECEIPTS_MAX = 8;

/**
 * EVM JSON-RPC: the block with full transactions, its Transfer logs by block hash, and the
 * receipts of the transactions with a native value hit (a reverted one moved no value).
 */
export class EvmChain implements ChainAdapter {
  readonly #rpc: RpcClient;

  constructor(upstreams: string[], timeoutMs?: number) {
    this.#rpc = new RpcClient(upstreams, timeoutMs);
  }

  async head(): Promise<number> {
    return Number(BigInt(await this.#rpc.call<string>('eth_blockNumber')));
  }

  #chainId: Promise<number> | undefined;

  /** Asked once: a node's chain id does not change. */
  chainId(): Promise<number> {
    this.#chainId ??= this.#rpc.call<string>('eth_chainId').then((v) => Number(BigInt(v)));
    // A failed ask is asked again next time.
    this.#chainId.catch(() => { this.#chainId = undefined; });
    return this.#chainId;
  }

  /** The `finalized` block (post-merge nodes, anvil); undefined where the node has no such tag. */
  async finalized(): Promise<number | undefined> {
    try {
      const b = await this.#rpc.call<{ number: string } | null>('eth_getBlockByNumber', ['finalized', false]);
      return b ? Number(BigInt(b.number)) : undefined;
    } catch {
      // Pre-merge nodes refuse the tag: the environment's finality_depth decides.
      return undefined;
    }
  }

  /**
   * `eth_sendRawTransaction`. A JSON-RPC error is the node's verdict (nonce, balance, gas price):
   * `E_TX_REJECTED` with its words, unless the node has the transaction already (pending or
   * mined: nodes answer "already known" or "nonce too low"), which counts as sent.
   */
  async broadcast(raw: string): Promise<string> {
    try {
      return await this.#rpc.call<string>('eth_sendRawTransaction', [raw]);
    } catch (err) {
      if (!(err instanceof JsonRpcAnswerError)) throw new PayoutTxError('E_TX_UPSTREAM', `no upstream took the transaction: ${(err as Error).message}`, { cause: err });
      const hash = `0x${hex.encode(keccak_256(hex.decode(raw.replace(/^0x/, '').toLowerCase())))}`;
      const known = await this.#rpc.call<object | null>('eth_getTransactionByHash', [hash]).catch(() => null);
      if (known) return hash;
      throw new PayoutTxError('E_TX_REJECTED', `the node refused the transaction: ${err.message}`, { cause: err });
    }
  }

  async blockHash(height: number): Promise<string | undefined> {
    const block = await this.#rpc.call<{ hash: string } | null>('eth_getBlockByNumber', [`0x${height.toString(16)}`, false]);
    return block?.hash;
  }

  async block(height: number, registry: WatchLookup, envId: number): Promise<FetchedBlock | undefined> {
    const block = await this.#rpc.call<RpcBlock | null>('eth_getBlockByNumber', [`0x${height.toString(16)}`, true]);
    if (!block) return undefined;
    // By hash, so the logs belong to exactly the block whose transactions we read.
    const logs = registry.size(envId) === 0 ? [] : await this.#rpc.call<EvmLog[]>('eth_getLogs', [{ blockHash: block.hash, topics: [TRANSFER_TOPIC] }]);
    const hits = matchEvmBlock(registry, envId, block.transactions, logs);
    const valueTxs = valueHitTxs(hits);
    const reverted = valueTxs.length === 0 ? new Set<string>() : await this.#reverted(block.hash, valueTxs);
    return {
      hash: block.hash, parentHash: block.parentHash, txHashes: block.transactions.map((t) => t.hash),
      hits: withReverted(hits, reverted),
    };
  }

  /** Which of the block's transactions `txHashes` reverted. */
  async #reverted(blockHash: string, txHashes: string[]): Promise<Set<string>> {
    const wanted = new Set(txHashes.map((h) => h.toLowerCase()));
    let receipts: Array<RpcReceipt | null> | undefined;
    if (txHashes.length > SINGLE_RECEIPTS_MAX) {
      // One call instead of many; a node without eth_getBlockReceipts is asked one by one.
      receipts = (await this.#rpc.call<RpcReceipt[] | null>('eth_getBlockReceipts', [blockHash]).catch(() => null)) ?? undefined;
    }
    receipts ??= await Promise.all(txHashes.map((h) => this.#rpc.call<RpcReceipt | null>('eth_getTransactionReceipt', [h])));
    const reverted = new Set<string>();
    const seen = new Set<string>();
    for (const r of receipts) {
      const hash = r?.transactionHash.toLowerCase();
      if (!r || !hash || !wanted.has(hash)) continue;
      // From another block (a reorg between the two calls): scan the block again.
      if (r.blockHash.toLowerCase() !== blockHash.toLowerCase()) throw new ScanUpstreamError(`receipt of ${hash} is from block ${r.blockHash}, not ${blockHash}`);
      seen.add(hash);
      if (r.status === '0x0') reverted.add(hash);
    }
    // A node behind the one that served the block: try the block again rather than guess.
    if (seen.size !== wanted.size) throw new ScanUpstreamError(`receipts missing for block ${blockHash}`);
    return reverted;
  }

  close(): Promise<void> {
    return this.#rpc.close();
  }
}
