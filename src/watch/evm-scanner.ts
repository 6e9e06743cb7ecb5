import type { Environment, Store } from '../store/index.js';
import { matchEvmBlock, TRANSFER_TOPIC, type EvmLog, type EvmTx } from './match.js';
import { getCursor, recordBlock, rewindTo, setCursor, storedBlockHash } from './record.js';
import type { WatchRegistry } from './registry.js';
import { RpcClient } from './rpc.js';

interface RpcBlock {
  number: string;
  hash: string;
  parentHash: string;
  transactions: EvmTx[];
}

export interface ScannerOptions {
  store: Store;
  registry: WatchRegistry;
  env: Environment;
  log: (line: string) => void;
  pollMs: number;
  /** Told after a block's events are committed, so the delivery worker need not wait for its poll. */
  onRecorded?: (deliveries: number) => void;
  upstreamTimeoutMs?: number;
}

/**
 * Follows one EVM environment's chain, block by block, `confirmations` behind the head.
 * Each block is checked against the parent hash of the block before it; on a mismatch the
 * scanner rewinds one block at a time until it is back on the chain.
 */
export class EvmScanner {
  readonly env: Environment;
  readonly #o: ScannerOptions;
  readonly #rpc: RpcClient;
  #running = false;
  #loop: Promise<void> | undefined;
  #timer: NodeJS.Timeout | undefined;
  #wake: (() => void) | undefined;
  #lastError = '';
  #stopping: Promise<void> | undefined;

  constructor(o: ScannerOptions) {
    this.#o = o;
    this.env = o.env;
    this.#rpc = new RpcClient(o.env.upstreams, o.upstreamTimeoutMs);
  }

  /** Resolves once the scanner knows where it starts (or its upstream failed to say). */
  start(): Promise<void> {
    if (this.#running) return Promise.resolve();
    this.#running = true;
    let ready!: () => void;
    const started = new Promise<void>((resolve) => { ready = resolve; });
    this.#loop = this.#run(ready);
    return started;
  }

  /** Stops after the block in hand is recorded (a block is all or nothing). */
  stop(): Promise<void> {
    this.#stopping ??= (async () => {
      this.#running = false;
      if (this.#timer) clearTimeout(this.#timer);
      this.#wake?.();
      await this.#loop;
      await this.#rpc.close();
    })();
    return this.#stopping;
  }

  async #run(ready: () => void): Promise<void> {
    try {
      await this.#startingCursor();
    } catch {
      // step() tries again and logs.
    }
    ready();
    while (this.#running) {
      let caughtUp = true;
      try {
        caughtUp = await this.step();
        this.#lastError = '';
      } catch (err) {
        const msg = (err as Error).message;
        // One line per distinct failure: an unreachable upstream must not flood the log.
        if (msg !== this.#lastError) this.#o.log(`watch: ${this.#name()}: ${msg}`);
        this.#lastError = msg;
      }
      if (caughtUp && this.#running) await this.#sleep(this.#o.pollMs);
    }
  }

  /** Processes at most one block; true when there was nothing to do. */
  async step(): Promise<boolean> {
    const { store, env } = this.#o;
    const head = Number(BigInt(await this.#rpc.call<string>('eth_blockNumber')));
    const safe = head - Math.max(1, env.confirmations) + 1;
    const next = await this.#startingCursor(head);
    if (next > safe || !this.#running) return true;

    const block = await this.#rpc.call<RpcBlock | null>('eth_getBlockByNumber', [`0x${next.toString(16)}`, true]);
    if (!block) return true;
    if (next > 0) {
      const parent = await storedBlockHash(store, env.id, next - 1);
      if (parent !== undefined && parent !== block.parentHash) {
        const r = await rewindTo(store, env.id, next - 1);
        this.#o.log(`watch: ${this.#name()}: reorg at block ${next - 1}; rewound (${r.removedEvents} events removed, ${r.cancelled} deliveries cancelled)`);
        return false;
      }
    }
    // Logs by block hash, so they belong to exactly the block whose transactions we read.
    const logs = this.#o.registry.size(env.id) === 0 ? [] : await this.#rpc.call<EvmLog[]>('eth_getLogs', [{ blockHash: block.hash, topics: [TRANSFER_TOPIC] }]);
    const hits = matchEvmBlock(this.#o.registry, env.id, block.transactions, logs);
    const r = await recordBlock(store, this.#o.registry, env, { height: next, hash: block.hash, txHashes: block.transactions.map((t) => t.hash) }, hits);
    if (r.deliveries > 0) this.#o.onRecorded?.(r.deliveries);
    return next >= safe;
  }

  /**
   * The persisted cursor; a new scanner starts at the chain's first unconfirmed block as of
   * now: watching is not a backfill, but a payment sent right after the watch was added is
   * still ahead of the cursor.
   */
  async #startingCursor(knownHead?: number): Promise<number> {
    const { store, env } = this.#o;
    const stored = await getCursor(store, env.id);
    if (stored !== undefined) return stored;
    const head = knownHead ?? Number(BigInt(await this.#rpc.call<string>('eth_blockNumber')));
    const next = Math.max(0, head - Math.max(1, env.confirmations) + 2);
    await setCursor(store.db, env.id, next);
    return next;
  }

  #name(): string {
    return `${this.env.network.slug}-${this.env.slug}`;
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      this.#wake = resolve;
      this.#timer = setTimeout(resolve, ms);
    });
  }
}
