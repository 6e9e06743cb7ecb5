import { hex } from '@scure/base';
import { Transaction } from '@scure/btc-signer';
import type { ChainAdapter, FetchedBlock, WatchLookup } from '../family.js';
import { PayoutTxError } from '../payout-tx.js';
import { ScanUpstreamError, UpstreamPool } from '../rpc.js';
import { matchUtxoBlock, satoshis, type UtxoTx } from './match.js';

interface RpcBlock {
  hash: string;
  height: number;
  previousblockhash?: string;
  tx: UtxoTx[];
}

interface RpcAnswer<T> {
  result?: T;
  error?: { code: number; message: string } | null;
  id?: unknown;
}

/** Bitcoin Core's "Block height out of range" (also "Invalid or non-wallet transaction id" etc.). */
const RPC_INVALID_PARAMETER = -8;
/** Bitcoin Core's "Transaction already in block chain" (sendrawtransaction). */
const RPC_VERIFY_ALREADY_IN_CHAIN = -27;
/** Blocks within which a payout should confirm: what `estimatesmartfee` is asked. */
const FEE_TARGET_BLOCKS = 6;
/** getrawtransaction calls per batch when inputs must be resolved one transaction at a time. */
const PREVOUT_BATCH = 50;

export class RpcAnswerError extends ScanUpstreamError {
  readonly method: string;
  readonly rpcCode: number;
  constructor(method: string, rpcCode: number, message: string) {
    super(`${method}: ${message} (${rpcCode})`);
    this.method = method;
    this.rpcCode = rpcCode;
  }
}

/**
 * Bitcoin Core JSON-RPC (and Litecoin/Dogecoin nodes, which share it): `getblockchaininfo`
 * for the head, `getblockhash` + `getblock` at verbosity 3 for a block with the outputs its
 * inputs spend (`prevout`, Bitcoin Core >= 25). A node that answers without `prevout` (older
 * versions treat verbosity 3 as 2) has the spent outputs looked up with `getrawtransaction`,
 * which needs `-txindex` there. `user:password@` in an upstream URL is sent as Basic auth.
 */
export class UtxoChain implements ChainAdapter {
  readonly #pool: UpstreamPool;
  readonly #auth = new Map<string, { url: string; headers: Record<string, string> }>();
  #id = 0;

  constructor(upstreams: string[], timeoutMs?: number) {
    this.#pool = new UpstreamPool(upstreams, timeoutMs);
  }

  async head(): Promise<number> {
    return (await this.call<{ blocks: number }>('getblockchaininfo')).blocks;
  }

  async blockHash(height: number): Promise<string | undefined> {
    try {
      return await this.call<string>('getblockhash', [height]);
    } catch (err) {
      if (err instanceof RpcAnswerError && err.rpcCode === RPC_INVALID_PARAMETER) return undefined;
      throw err;
    }
  }

  async block(height: number, registry: WatchLookup, envId: number): Promise<FetchedBlock | undefined> {
    const hash = await this.blockHash(height);
    if (hash === undefined) return undefined;
    const block = await this.call<RpcBlock>('getblock', [hash, 3]);
    if (block.hash !== hash) throw new ScanUpstreamError(`getblock ${hash} answered block ${block.hash}`);
    const watching = registry.size(envId) > 0;
    if (watching) await this.#resolvePrevouts(block);
    return {
      hash: block.hash,
      parentHash: block.previousblockhash ?? '',
      txHashes: block.tx.map((t) => t.txid),
      hits: watching ? matchUtxoBlock(registry, envId, block.tx) : [],
    };
  }

  /** Fills `prevout` where the node left it out: from the block itself, else getrawtransaction. */
  async #resolvePrevouts(block: RpcBlock): Promise<void> {
    const missing = block.tx.flatMap((tx) => tx.vin.filter((v) => !v.coinbase && !v.prevout && v.txid !== undefined));
    if (missing.length === 0) return;
    const known = new Map<string, UtxoTx>(block.tx.map((t) => [t.txid, t]));
    const wanted = [...new Set(missing.map((v) => v.txid!).filter((id) => !known.has(id)))];
    for (let i = 0; i < wanted.length; i += PREVOUT_BATCH) {
      const chunk = wanted.slice(i, i + PREVOUT_BATCH);
      const txs = await this.batch<UtxoTx>(chunk.map((txid) => ['getrawtransaction', [txid, true]]));
      for (const tx of txs) known.set(tx.txid, tx);
    }
    for (const vin of missing) {
      const out = known.get(vin.txid!)?.vout.find((o) => o.n === vin.vout);
      if (!out) throw new ScanUpstreamError(`output ${vin.txid}:${vin.vout} spent in block ${block.hash} not found`);
      vin.prevout = { value: out.value, scriptPubKey: out.scriptPubKey };
    }
  }

  /**
   * `sendrawtransaction`: the node's verdict on a signed transaction. A refusal (spent inputs, a
   * fee below the relay minimum) is the sender's to fix (`E_TX_REJECTED`, the node's words); one
   * already in the chain counts as sent (Bitcoin Core answers -27 rather than its txid).
   */
  async broadcast(raw: string): Promise<string> {
    try {
      return await this.call<string>('sendrawtransaction', [raw]);
    } catch (err) {
      if (err instanceof RpcAnswerError && err.rpcCode === RPC_VERIFY_ALREADY_IN_CHAIN) return Transaction.fromRaw(hex.decode(raw), { allowUnknownOutputs: true, disableScriptCheck: true }).id;
      if (err instanceof RpcAnswerError) throw new PayoutTxError('E_TX_REJECTED', `the node refused the transaction: ${err.message}`, { cause: err });
      throw new PayoutTxError('E_TX_UPSTREAM', `no upstream took the transaction: ${(err as Error).message}`, { cause: err });
    }
  }

  /**
   * sat/vB for confirmation within `FEE_TARGET_BLOCKS` (`estimatesmartfee`, conservative). A node
   * without the data (regtest, a fresh node) answers no `feerate`: then the least its mempool
   * takes (`mempoolminfee`, at least the relay fee), so the transaction is relayed at all.
   */
  async feeRate(): Promise<number> {
    const estimate = await this.call<{ feerate?: number }>('estimatesmartfee', [FEE_TARGET_BLOCKS, 'CONSERVATIVE']);
    let perKvB = estimate.feerate;
    if (perKvB === undefined || perKvB <= 0) {
      const pool = await this.call<{ mempoolminfee?: number; minrelaytxfee?: number }>('getmempoolinfo');
      perKvB = Math.max(pool.mempoolminfee ?? 0, pool.minrelaytxfee ?? 0);
    }
    // Coin units per 1000 vbytes -> satoshis per vbyte, rounded up.
    return Math.max(1, Math.ceil(Number(satoshis(perKvB.toFixed(8))) / 1000));
  }

  async call<T>(method: string, params: unknown[] = []): Promise<T> {
    const body = JSON.stringify({ jsonrpc: '1.0', id: ++this.#id, method, params });
    const answer = await this.#post<RpcAnswer<T>>(method, body);
    if (Array.isArray(answer)) throw new ScanUpstreamError(`${method}: the node answered an array`);
    if (answer.error) throw new RpcAnswerError(method, answer.error.code, answer.error.message);
    return answer.result as T;
  }

  /** One HTTP request for many calls; any error fails the whole step (the block is scanned again). */
  async batch<T>(calls: Array<[method: string, params: unknown[]]>): Promise<T[]> {
    const first = ++this.#id;
    this.#id += calls.length;
    const body = JSON.stringify(calls.map(([method, params], i) => ({ jsonrpc: '1.0', id: first + i, method, params })));
    const answers = await this.#post<Array<RpcAnswer<T>>>(calls[0]![0], body);
    if (!Array.isArray(answers)) throw new ScanUpstreamError(`${calls[0]![0]}: the node did not answer the batch with an array`);
    const byId = new Map(answers.map((a) => [a.id, a]));
    return calls.map(([method], i) => {
      const a = byId.get(first + i);
      if (!a) throw new ScanUpstreamError(`${method}: no answer in the batch`);
      if (a.error) throw new RpcAnswerError(method, a.error.code, a.error.message);
      return a.result as T;
    });
  }

  #post<T>(method: string, body: string): Promise<T> {
    return this.#pool.use(method, async (base) => {
      const { url, headers } = this.#target(base);
      const res = await this.#pool.fetch(url, { method: 'POST', body, headers });
      if (res.status === 401 || res.status === 403) throw new ScanUpstreamError(`${method}: the node refused the credentials (HTTP ${res.status})`);
      // Bitcoin Core answers JSON-RPC 1.0 errors with HTTP 500 (404 for an unknown method) and a JSON body.
      if (res.status !== 200 && !(res.status === 500 || res.status === 404)) throw new ScanUpstreamError(`${method}: node answered HTTP ${res.status}`);
      let parsed: T;
      try {
        parsed = parseAmounts(res.text) as T;
      } catch {
        throw new ScanUpstreamError(`${method}: node answered HTTP ${res.status} without JSON`);
      }
      return parsed;
    });
  }

  /** The URL without its user info, which goes into an Authorization header instead. */
  #target(base: string): { url: string; headers: Record<string, string> } {
    let t = this.#auth.get(base);
    if (!t) {
      const u = new URL(base);
      const headers: Record<string, string> = {};
      if (u.username || u.password) {
        headers.authorization = `Basic ${Buffer.from(`${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`).toString('base64')}`;
        u.username = '';
        u.password = '';
      }
      this.#auth.set(base, (t = { url: u.toString(), headers }));
    }
    return t;
  }

  close(): Promise<void> {
    return this.#pool.close();
  }
}

type Reviver = (this: unknown, key: string, value: unknown, context?: { source?: string }) => unknown;

/**
 * JSON with every `value` (a coin amount in the node's 8-decimal form) turned into an integer
 * string of satoshis, read from the number's source text (JSON.parse source access).
 */
export function parseAmounts(text: string): unknown {
  const reviver: Reviver = (key, value, context) => {
    if (key === 'value' && typeof value === 'number') return satoshis(context?.source ?? value.toFixed(8));
    return value;
  };
  return JSON.parse(text, reviver as Parameters<typeof JSON.parse>[1]);
}
