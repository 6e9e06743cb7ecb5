import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import type { FakeSolanaChain } from './chain.js';
import { PubSub } from './pubsub.js';
import { type NodeView, SolanaRpc } from './rpc.js';
import { RpcError, nodeUnhealthy, stringify, toBase58 } from './wire.js';

export const GENESIS_HASHES = {
  'mainnet-beta': '5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d',
  devnet: 'EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG',
  testnet: '4uhcVJyU9pJkvQyS88uRDiswHXSCkY3zQawwpjk2NsNY',
} as const;

export interface FakeSolanaNodeOptions {
  /** getGenesisHash's answer (default mainnet-beta's). */
  genesisHash?: string;
  /** Start this many slots behind the cluster (default 0). */
  lagSlots?: number;
  /** The node's ledger starts here (default 0): older blocks are cleaned up (-32001) unless `longTermStorage`. */
  firstAvailableSlot?: number;
  /** Older blocks come from long-term storage (BigTable): skipped ones answer -32009. */
  longTermStorage?: boolean;
  /** Lag beyond which getHealth says "behind" (default 128, agave's default). */
  healthCheckSlotDistance?: number;
}

export interface SeenCall { method: string; params: unknown; transport: 'http' | 'ws' }

/**
 * One RPC node over a chain: JSON-RPC over HTTP POST and PubSub over WebSocket on the same
 * port (`url`, `wsUrl`), and `GET /health` as agave answers it. Faults for failover tests:
 * `lagSlots`, `unhealthy` (getHealth and preflight answer -32005; `'all'`: every method does, as
 * some providers' balancers), `behaviour` (hang, 503, reset), `delayMs`, `down()`/`up()`
 * (connections refused, then back on the same port).
 */
export class FakeSolanaNode {
  readonly chain: FakeSolanaChain;
  readonly view: NodeView;
  readonly rpc: SolanaRpc;
  readonly pubsub: PubSub;
  /** Every call that reached this node, in order. */
  readonly seen: SeenCall[] = [];
  /** Extra milliseconds before each HTTP answer (a node across a network). */
  delayMs = 0;
  /** How HTTP requests fare: answered, never answered, 503 with a text body, or the connection reset. */
  behaviour: 'ok' | 'hang' | 'fail503' | 'reset' = 'ok';
  unhealthy: boolean | 'all' = false;
  url = '';
  wsUrl = '';
  #port = 0;
  #server: Server;
  #wss: WebSocketServer;
  #sockets = new Set<Socket>();
  #unlisten: () => void;

  constructor(chain: FakeSolanaChain, opts: FakeSolanaNodeOptions = {}) {
    this.chain = chain;
    this.view = {
      chain, lagSlots: opts.lagSlots ?? 0, firstAvailableSlot: opts.firstAvailableSlot ?? 0, longTermStorage: opts.longTermStorage ?? false,
      missingBlocks: new Set(), unhealthy: false, healthCheckSlotDistance: opts.healthCheckSlotDistance ?? 128,
      genesisHash: opts.genesisHash ?? GENESIS_HASHES['mainnet-beta'], identity: toBase58(randomBytes(32)),
    };
    this.rpc = new SolanaRpc(this.view);
    this.pubsub = new PubSub(this.rpc);
    this.#unlisten = chain.listen(this.pubsub);
    this.#server = createServer((req, res) => this.#http(req, res));
    this.#server.on('connection', (s: Socket) => { this.#sockets.add(s); s.on('close', () => this.#sockets.delete(s)); });
    this.#wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });
    this.#server.on('upgrade', (req, socket, head) => this.#wss.handleUpgrade(req, socket, head, (ws) => this.#ws(ws)));
  }

  get lagSlots(): number { return this.view.lagSlots; }
  set lagSlots(n: number) { this.view.lagSlots = n; }

  async start(): Promise<this> {
    await new Promise<void>((resolve, reject) => {
      this.#server.once('error', reject);
      this.#server.listen(this.#port, '127.0.0.1', () => { this.#server.off('error', reject); resolve(); });
    });
    this.#port = (this.#server.address() as AddressInfo).port;
    this.url = `http://127.0.0.1:${this.#port}`;
    this.wsUrl = `ws://127.0.0.1:${this.#port}`;
    return this;
  }

  /** The node goes away: its port refuses connections and open ones (HTTP and WebSocket) are cut. */
  async down(): Promise<void> {
    for (const ws of this.#wss.clients) ws.terminate();
    for (const s of this.#sockets) s.destroy();
    await new Promise<void>((r) => this.#server.close(() => r()));
  }

  /** Back on the same port. */
  async up(): Promise<void> {
    await this.start();
  }

  async stop(): Promise<void> {
    this.#unlisten();
    if (this.#server.listening) await this.down();
  }

  close(): Promise<void> { return this.stop(); }

  #http(req: IncomingMessage, res: ServerResponse): void {
    if (req.method === 'GET' && req.url === '/health') {
      let text = 'ok';
      try { this.rpc.health(); } catch (e) { text = (e as RpcError).data && (e as { data: { numSlotsBehind: number | null } }).data.numSlotsBehind !== null ? 'behind' : 'unknown'; }
      res.writeHead(200, { 'content-type': 'text/plain' }).end(text);
      return;
    }
    if (this.behaviour === 'hang') return;
    if (this.behaviour === 'reset') { req.socket.destroy(); return; }
    if (this.behaviour === 'fail503') { res.writeHead(503, { 'content-type': 'text/plain' }).end('Service Unavailable'); return; }
    if (req.method !== 'POST') { res.writeHead(405).end('Used HTTP Method is not allowed. POST or OPTIONS is required'); return; }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void this.#body(Buffer.concat(chunks).toString()).then((answer) => {
        const write = () => { if (!res.destroyed) res.writeHead(200, { 'content-type': 'application/json' }).end(answer); };
        if (this.delayMs > 0) setTimeout(write, this.delayMs);
        else write();
      });
    });
  }

  async #body(body: string): Promise<string> {
    let payload: unknown;
    try { payload = JSON.parse(body); } catch {
      return stringify({ jsonrpc: '2.0', error: { code: -32700, message: 'Parse error' }, id: null });
    }
    if (Array.isArray(payload)) {
      if (payload.length === 0) return stringify({ jsonrpc: '2.0', error: { code: -32600, message: 'Invalid request' }, id: null });
      const answers = [];
      for (const call of payload) answers.push(await this.#call(call, 'http'));
      return stringify(answers);
    }
    return stringify(await this.#call(payload, 'http'));
  }

  async #call(call: unknown, transport: 'http' | 'ws'): Promise<unknown> {
    const c = (call && typeof call === 'object' ? call : {}) as { id?: unknown; method?: unknown; params?: unknown; jsonrpc?: unknown };
    const id = c.id ?? null;
    if (c.jsonrpc !== '2.0' || typeof c.method !== 'string') return { jsonrpc: '2.0', error: { code: -32600, message: 'Invalid request' }, id };
    this.seen.push({ method: c.method, params: c.params ?? null, transport });
    if (c.params !== undefined && !Array.isArray(c.params)) return { jsonrpc: '2.0', error: { code: -32602, message: 'Invalid params: invalid type: map, expected a sequence.' }, id };
    try {
      if (this.unhealthy === 'all') throw nodeUnhealthy(null);
      this.view.unhealthy = this.unhealthy === true;
      const result = await this.rpc.call(c.method, (c.params as unknown[] | undefined) ?? []);
      return { jsonrpc: '2.0', result, id };
    } catch (e) {
      const err = e instanceof RpcError ? e : new RpcError(-32603, `Internal error: ${(e as Error).message}`);
      return { jsonrpc: '2.0', error: { code: err.code, message: err.message, ...(err.data === undefined ? {} : { data: err.data }) }, id };
    }
  }

  #ws(ws: WebSocket): void {
    ws.on('message', (raw) => {
      let msg: { id?: unknown; method?: unknown; params?: unknown };
      try { msg = JSON.parse(String(raw)) as typeof msg; } catch {
        ws.send(stringify({ jsonrpc: '2.0', error: { code: -32700, message: 'Parse error' }, id: null }));
        return;
      }
      if (typeof msg.method === 'string' && msg.id !== undefined) this.seen.push({ method: msg.method, params: msg.params ?? null, transport: 'ws' });
      const answer = this.pubsub.request(ws, msg);
      if (answer !== null) ws.send(stringify(answer));
    });
    ws.on('close', () => this.pubsub.closed(ws));
  }
}
