import { SKIPPED, type AdapterOptions, type ChainAdapter, type FetchedBlock, type ReferencedTx, type Skipped, type WatchLookup, type WatchRef } from '../family.js';
import { ScanUpstreamError, UpstreamPool } from '../rpc.js';
import { matchSolanaBlock, type SolanaBlockTx } from './match.js';
import { solanaReference } from './reference.js';

interface SolanaBlock {
  blockhash: string;
  previousBlockhash: string;
  parentSlot: number;
  /** `transactionDetails: 'full'`. */
  transactions?: SolanaBlockTx[];
  /** `transactionDetails: 'signatures'`: each transaction's first signature, its id. */
  signatures?: string[];
}

type Answer<T> = { result: T } | { error: { code: number; message: string } };

/** The node has no block at the slot and never will: skipped, or not kept (a snapshot jump, long-term storage). */
const SKIPPED_CODES = new Set([-32007, -32009]);
/** Not yet: the slot is past what the node has at this commitment. */
const NOT_YET_CODES = new Set([-32004, -32014]);

/** What the scanner sees: `confirmed` (a supermajority voted on the slot), so a transfer is `seen` about a second after it lands. */
const SEEN = { commitment: 'confirmed' } as const;

/**
 * Signatures asked per reference: a reference is one order's, named by its payment (and maybe
 * a second for the rest), so more than this is someone writing to it on purpose.
 */
const REFERENCE_SIGNATURES = 50;

/**
 * Solana's JSON-RPC, block-centric: `getSlot` (confirmed) for the head, `getBlocks` for which
 * slots of a range were produced (one call for up to the whole range; the rest are skipped),
 * `getBlock` per produced slot with every transaction's balances when something is watched,
 * only the signatures when not, and `getSlot` (finalized) for finality. The RPC calls per slot
 * do not grow with the number of watched addresses (matching is one hash lookup per account
 * key and token balance), where an address-centric scan (`getSignaturesForAddress` per wallet
 * and token account, then `getTransaction`) would cost 10,000 calls per round for 10,000 wallets.
 */
export class SolanaChain implements ChainAdapter {
  readonly #pool: UpstreamPool;
  readonly #mints: ReadonlySet<string>;
  #id = 0;

  constructor(upstreams: string[], timeoutMs?: number, options?: AdapterOptions) {
    this.#pool = new UpstreamPool(upstreams, timeoutMs);
    this.#mints = new Set(options?.tokens ?? []);
  }

  head(): Promise<number> {
    return this.#slot('confirmed');
  }

  finalized(): Promise<number> {
    return this.#slot('finalized');
  }

  async produced(from: number, to: number): Promise<number[]> {
    if (to < from) return [];
    const answer = await this.#call<number[]>('getBlocks', [from, to, SEEN]);
    if (!('result' in answer) || !Array.isArray(answer.result)) throw new ScanUpstreamError(`getBlocks: ${errorText(answer)}`);
    return answer.result;
  }

  async blockHash(height: number): Promise<string | Skipped | undefined> {
    const block = await this.#block(height, 'none');
    return block === SKIPPED || block === undefined ? block : block.blockhash;
  }

  async block(height: number, registry: WatchLookup, envId: number): Promise<FetchedBlock | Skipped | undefined> {
    const watching = registry.size(envId) > 0;
    const block = await this.#block(height, watching ? 'full' : 'signatures');
    if (block === SKIPPED || block === undefined) return block;
    const txs = block.transactions ?? [];
    return {
      hash: block.blockhash,
      parentHash: block.previousBlockhash,
      parentHeight: block.parentSlot,
      txHashes: watching ? txs.map((t) => t.transaction.signatures[0]!) : block.signatures ?? [],
      hits: watching ? matchSolanaBlock(registry, envId, txs, this.#mints) : [],
    };
  }

  /**
   * Only `finalized` transactions: below the scanner's cursor no reorg rule can take an event
   * off any more (the scanner rewinds only above finalized), so a final one is the one kind
   * safe to record there. The block's hash is asked for with `transactionDetails: 'none'`; a
   * node that lost the block (-32009, a gap in long-term storage, the case this lookup is for)
   * still serves the transaction.
   */
  async referenced(reference: string, watch: WatchRef, before: number, known: ReadonlySet<string>): Promise<ReferencedTx[]> {
    const answer = await this.#call<Array<{ signature: string; slot: number; err: unknown }>>('getSignaturesForAddress', [
      reference, { commitment: 'finalized', limit: REFERENCE_SIGNATURES },
    ]);
    if (!('result' in answer) || !Array.isArray(answer.result)) throw new ScanUpstreamError(`getSignaturesForAddress: ${errorText(answer)}`);
    const key = solanaReference.watchKey(reference);
    const only: WatchLookup = { lookup: (_env, k) => (k === key ? [watch] : undefined), size: () => 1 };
    const found: ReferencedTx[] = [];
    // Oldest first, as the scanner would have recorded them.
    for (const sig of answer.result.toReversed()) {
      if ((sig.err !== null && sig.err !== undefined) || sig.slot >= before || known.has(sig.signature)) continue;
      const tx = await this.#call<(SolanaBlockTx & { slot: number }) | null>('getTransaction', [sig.signature, {
        commitment: 'finalized', encoding: 'json', maxSupportedTransactionVersion: 0,
      }]);
      if (!('result' in tx)) throw new ScanUpstreamError(`getTransaction: ${errorText(tx)}`);
      if (!tx.result) continue;
      const hits = matchSolanaBlock(only, 0, [tx.result], this.#mints);
      if (hits.length === 0) continue;
      const block = await this.#block(tx.result.slot, 'none', 'finalized');
      found.push({ height: tx.result.slot, hash: block === SKIPPED || block === undefined ? undefined : block.blockhash, txHash: sig.signature, hits });
    }
    return found;
  }

  async #block(slot: number, details: 'full' | 'signatures' | 'none', commitment: 'confirmed' | 'finalized' = 'confirmed'): Promise<SolanaBlock | Skipped | undefined> {
    const answer = await this.#call<SolanaBlock | null>('getBlock', [slot, {
      commitment, encoding: 'json', transactionDetails: details, rewards: false, maxSupportedTransactionVersion: 0,
    }]);
    if ('error' in answer) {
      if (SKIPPED_CODES.has(answer.error.code)) return SKIPPED;
      if (NOT_YET_CODES.has(answer.error.code)) return undefined;
      throw new ScanUpstreamError(`getBlock ${slot}: ${errorText(answer)}`);
    }
    return answer.result ?? undefined;
  }

  async #slot(commitment: 'confirmed' | 'finalized'): Promise<number> {
    const answer = await this.#call<number>('getSlot', [{ commitment }]);
    if (!('result' in answer) || typeof answer.result !== 'number') throw new ScanUpstreamError(`getSlot: ${errorText(answer)}`);
    return answer.result;
  }

  /**
   * One call; a node's JSON-RPC error is its answer (a skipped slot is one), handed back, not a
   * reason to try the next upstream. HTTP failures and garbage move to the next.
   */
  #call<T>(method: string, params: unknown[]): Promise<Answer<T>> {
    return this.#pool.use(method, async (url) => {
      const res = await this.#pool.fetch(url, { method: 'POST', body: JSON.stringify({ jsonrpc: '2.0', id: ++this.#id, method, params }) });
      if (res.status !== 200) throw new ScanUpstreamError(`${method}: upstream answered HTTP ${res.status}`);
      let body: { result?: T; error?: { code: number; message: string } };
      try {
        body = parseSolanaJson(res.text) as typeof body;
      } catch {
        throw new ScanUpstreamError(`${method}: upstream answered without JSON`);
      }
      if (body.error) {
        // Behind its cluster: another upstream may be current.
        if (body.error.code === -32005) throw new ScanUpstreamError(`${method}: ${body.error.message} (${body.error.code})`);
        return { error: body.error };
      }
      return { result: body.result as T };
    });
  }

  close(): Promise<void> {
    return this.#pool.close();
  }
}

function errorText(answer: Answer<unknown>): string {
  return 'error' in answer ? `${answer.error.message} (${answer.error.code})` : 'unexpected answer';
}

/**
 * JSON with lamport balances kept exact: an account may hold more than 2^53 lamports (9 million
 * SOL), past what a JSON number keeps, so `preBalances`/`postBalances` are read as decimal
 * strings (Node 20's JSON.parse has no source text to revive them from).
 */
export function parseSolanaJson(text: string): unknown {
  return JSON.parse(text.replace(/"(pre|post)Balances":\[([\d,\s]*)\]/g, (_m, side: string, list: string) =>
    `"${side}Balances":[${list.split(',').map((n) => n.trim()).filter((n) => n !== '').map((n) => `"${n}"`).join(',')}]`));
}
