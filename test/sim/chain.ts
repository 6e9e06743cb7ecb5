import { createHash } from 'node:crypto';

/**
 * The canonical chain the simulator's fake nodes serve: blocks of family-neutral transfers.
 * Hashes are derived from a counter, so one scenario always builds the same chain; a
 * transaction keeps its hash when a fork re-mines it (as a node re-mines a mempool
 * transaction), while a double spend is a new hash paying somewhere else.
 */
export interface SimTx {
  /** 64 hex digits; each family's node prints it its own way. */
  hash: string;
  from: string;
  to: string;
  /** In the asset's base unit. */
  amount: bigint;
  /** A Solana Pay reference the transaction names (a read-only account key); families without one ignore it. */
  reference?: string;
}

export interface SimBlock {
  height: number;
  hash: string;
  parent: string;
  txs: SimTx[];
}

export class SimChain {
  readonly blocks: SimBlock[] = [];
  #n = 0;

  readonly tag: string;

  constructor(tag: string, genesisHeight = 0, initial = 5) {
    this.tag = tag;
    for (let i = 0; i < initial; i++) this.mine([], genesisHeight);
  }

  /** A fresh 32-byte hex id (deterministic per chain). */
  id(kind: string): string {
    return createHash('sha256').update(`${this.tag}:${kind}:${this.#n++}`).digest('hex');
  }

  get head(): number { return this.blocks.at(-1)!.height; }
  get first(): number { return this.blocks[0]!.height; }

  at(height: number): SimBlock | undefined {
    return this.blocks[height - this.first];
  }

  mine(txs: SimTx[], genesisHeight = 0): SimBlock {
    const prev = this.blocks.at(-1);
    const block: SimBlock = { height: prev ? prev.height + 1 : genesisHeight, hash: this.id('block'), parent: prev?.hash ?? '00'.repeat(32), txs };
    this.blocks.push(block);
    return block;
  }

  /** Drops the top `depth` blocks; their transactions are returned (a node puts them back in its mempool). */
  orphan(depth: number): SimTx[] {
    const gone = this.blocks.splice(this.blocks.length - depth, depth);
    return gone.flatMap((b) => b.txs);
  }

  /** Where `hash` is on the canonical chain, if it is. */
  find(hash: string): SimBlock | undefined {
    return this.blocks.find((b) => b.txs.some((t) => t.hash === hash));
  }
}
