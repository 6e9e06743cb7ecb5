import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The one fake EVM node of the suites and the payments simulator (anvil stays where a test
 * needs a real EVM). It plays two parts:
 *
 * - **a chain** (`startFakeEvmChain()`, or a `view` of the simulator's model): eth_blockNumber,
 *   eth_getBlockByNumber (a number or `latest`) with full transactions, eth_getLogs (no token transfers),
 *   eth_getTransactionReceipt and eth_getBlockReceipts (all successful), eth_chainId (123456, a
 *   chain id no public chain has); anything else is -32601, as a node without the method;
 * - **an upstream as far as the gateway can tell** (`new FakeEvm()`): eth_blockNumber
 *   (`blockNumber`), web3_clientVersion, and any other method echoed back
 *   (`{ echo: method, params }`) so a test sees what reached the node.
 *
 * Either way it answers single calls and batches, keeps every request in `seen`, and can be
 * switched to fail (`behaviour`) or to answer a request its own way (`respond`).
 */

export interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

export type Behaviour = 'ok' | 'fail500' | 'bad400' | 'hang' | 'reset';

export interface FakeTx {
  hash: string;
  from: string;
  to: string | null;
  /** Wei, 0x hex. */
  value: string;
}

/** A block as the fake serves it (transactions in full). */
export interface FakeEvmBlock {
  height: number;
  hash: string;
  parentHash: string;
  txs: FakeTx[];
}

/** Where a chain-playing fake reads its chain: its own blocks, or the simulator's model. */
export interface EvmChainView {
  head(): number;
  block(height: number): FakeEvmBlock | undefined;
}

export interface FakeEvmOptions {
  /** Serve a chain: `true` for its own (10 empty blocks to start, `mine`/`orphan`), or a view of another. */
  chain?: true | EvmChainView;
  /** Chain methods this node lacks (-32601), as older nodes lack eth_getBlockReceipts. */
  without?: readonly string[];
}

type Call = { id?: unknown; method?: string; params?: unknown[] };

const hex32 = () => `0x${randomBytes(32).toString('hex')}`;
const hx = (n: number) => `0x${n.toString(16)}`;

export class FakeEvm {
  readonly seen: SeenRequest[] = [];
  behaviour: Behaviour = 'ok';
  /** The upstream part's answer to eth_blockNumber. */
  blockNumber = 0x1234;
  /** Its own answers come this much later (a node across a network); `respond` answers when it likes. */
  delayMs = 0;
  /** Overrides the answer to the whole HTTP request (return true when it answered). */
  respond: ((req: SeenRequest, res: ServerResponse) => boolean) | undefined;
  url = '';
  /** Its own chain's blocks (empty when it serves a view or plays an upstream). */
  readonly blocks: FakeEvmBlock[] = [];
  readonly #view: EvmChainView | undefined;
  readonly #without: ReadonlySet<string>;
  readonly #server: Server;

  constructor(opts: FakeEvmOptions = {}) {
    this.#view = opts.chain === true ? { head: () => this.blocks.length - 1, block: (h) => this.blocks[h] } : opts.chain;
    this.#without = new Set(opts.without ?? []);
    if (opts.chain === true) for (let i = 0; i < 10; i++) this.mine();
    this.#server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => this.#handle({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString() }, req, res));
    });
  }

  /** Mines a block on its own chain with these native transfers; a `hash` re-mines that transaction. */
  mine(txs: Array<{ from: string; to: string; wei: bigint; hash?: string }> = []): { height: number; hash: string; txs: FakeTx[] } {
    const height = this.blocks.length;
    const block: FakeEvmBlock = {
      height, hash: hex32(), parentHash: this.blocks[height - 1]?.hash ?? `0x${'00'.repeat(32)}`,
      txs: txs.map((t) => ({ hash: t.hash ?? hex32(), from: t.from, to: t.to, value: `0x${t.wei.toString(16)}` })),
    };
    this.blocks.push(block);
    return { height, hash: block.hash, txs: block.txs };
  }

  /** Drops block `height` and everything above it (a reorg); mine again to build the new branch. */
  orphan(height: number): void {
    this.blocks.length = height;
  }

  async start(): Promise<this> {
    await new Promise<void>((r) => this.#server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((r) => this.#server.close(() => r()));
  }

  close(): Promise<void> {
    return this.stop();
  }

  #handle(seen: SeenRequest, req: IncomingMessage, res: ServerResponse): void {
    this.seen.push(seen);
    if (this.behaviour === 'hang') return;
    if (this.behaviour === 'reset') { req.socket.destroy(); return; }
    if (this.behaviour === 'fail500') { res.writeHead(500, { 'content-type': 'text/plain' }); res.end('boom'); return; }
    if (this.behaviour === 'bad400') { res.writeHead(400, { 'content-type': 'application/json' }); res.end('{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"invalid params"}}'); return; }
    if (this.respond?.(seen, res)) return;
    let payload: unknown;
    try { payload = JSON.parse(seen.body); } catch { res.writeHead(400); res.end('not json'); return; }
    const answer = Array.isArray(payload) ? payload.map((p) => this.#answer(p as Call)) : this.#answer(payload as Call);
    const write = () => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
    if (this.delayMs > 0) setTimeout(write, this.delayMs);
    else write();
  }

  #answer(call: Call): unknown {
    const id = call.id ?? null;
    const result = this.#view ? this.#chainAnswer(call) : this.#upstreamAnswer(call);
    return result === undefined ? { jsonrpc: '2.0', id, error: { code: -32601, message: 'method not found' } } : { jsonrpc: '2.0', id, result };
  }

  #upstreamAnswer(call: Call): unknown {
    switch (call.method) {
      case 'eth_blockNumber': return hx(this.blockNumber);
      case 'web3_clientVersion': return 'FakeNode/v1.0.0';
      default: return { echo: call.method, params: call.params ?? null };
    }
  }

  #chainAnswer(call: Call): unknown {
    const view = this.#view!;
    const p = call.params ?? [];
    if (call.method !== undefined && this.#without.has(call.method)) return undefined;
    switch (call.method) {
      case 'eth_blockNumber': return hx(view.head());
      // Numbers and `latest` (a gateway's newHeads polls): another tag (`finalized`) is a block this node does not report.
      case 'eth_getBlockByNumber': return blockJson(view.block(p[0] === 'latest' ? view.head() : Number(p[0]))) ?? null;
      case 'eth_getLogs': return [];
      case 'eth_getTransactionReceipt': return this.#receipt(String(p[0]));
      case 'eth_getBlockReceipts': {
        const b = this.#canonical((x) => x.hash === p[0]);
        return b ? b.txs.map((t) => this.#receipt(t.hash)) : null;
      }
      case 'eth_chainId': return '0x1e240';
      case 'web3_clientVersion': return 'FakeNode/v1.0.0';
      default: return undefined;
    }
  }

  /**
   * The first block from the head down (a view may start above height 0) that `is`: walked, not
   * listed, as asked blocks sit near the head and the simulator's chain grows to many thousands.
   */
  #canonical(is: (b: FakeEvmBlock) => boolean): FakeEvmBlock | undefined {
    const view = this.#view!;
    for (let h = view.head(), b = view.block(h); b; b = view.block(--h)) if (is(b)) return b;
    return undefined;
  }

  /** Every transaction succeeded: the scanner asks about those with a native value hit. */
  #receipt(hash: string): unknown {
    const b = this.#canonical((x) => x.txs.some((t) => t.hash === hash));
    return b ? { transactionHash: hash, blockHash: b.hash, blockNumber: hx(b.height), status: '0x1', logs: [] } : null;
  }
}

function blockJson(b: FakeEvmBlock | undefined): unknown {
  if (!b) return undefined;
  return {
    number: hx(b.height), hash: b.hash, parentHash: b.parentHash, timestamp: '0x0',
    transactions: b.txs.map((t, i) => ({
      ...t, blockHash: b.hash, blockNumber: hx(b.height), transactionIndex: hx(i), input: '0x', nonce: '0x0', gas: '0x5208', type: '0x2',
    })),
  };
}

/**
 * A fake serving a chain of its own (10 empty blocks to start), started. It lacks
 * eth_getBlockReceipts, so the scanner's receipt-by-receipt path is the one these suites run
 * (the simulator's node has it).
 */
export function startFakeEvmChain(): Promise<FakeEvm> {
  return new FakeEvm({ chain: true, without: ['eth_getBlockReceipts'] }).start();
}
