import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

type Call = { id?: unknown; method?: string; params?: unknown };

export type Behaviour = 'ok' | 'fail500' | 'bad400' | 'hang' | 'reset';

/**
 * A JSON-RPC 2.0 node as far as the gateway can tell: answers single calls and batches,
 * `eth_blockNumber`, `web3_clientVersion` and echoes anything else. Its behaviour can be
 * switched to fail, hang or drop connections.
 */
export class FakeUpstream {
  readonly seen: SeenRequest[] = [];
  behaviour: Behaviour = 'ok';
  blockNumber = 0x1234;
  /** Overrides the answer to the whole HTTP request. */
  respond: ((req: SeenRequest, res: ServerResponse) => boolean) | undefined;
  #server: Server;
  url = '';

  constructor() {
    this.#server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const seen = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString() };
        this.seen.push(seen);
        if (this.behaviour === 'hang') return;
        if (this.behaviour === 'reset') { req.socket.destroy(); return; }
        if (this.behaviour === 'fail500') { res.writeHead(500, { 'content-type': 'text/plain' }); res.end('boom'); return; }
        if (this.behaviour === 'bad400') { res.writeHead(400, { 'content-type': 'application/json' }); res.end('{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"invalid params"}}'); return; }
        if (this.respond?.(seen, res)) return;
        let payload: unknown;
        try { payload = JSON.parse(seen.body); } catch { res.writeHead(400); res.end('not json'); return; }
        const answer = Array.isArray(payload) ? payload.map((p) => this.#answer(p as Call)) : this.#answer(payload as Call);
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(answer));
      });
    });
  }

  #answer(call: Call) {
    const id = call.id ?? null;
    switch (call.method) {
      case 'eth_blockNumber': return { jsonrpc: '2.0', id, result: `0x${this.blockNumber.toString(16)}` };
      case 'web3_clientVersion': return { jsonrpc: '2.0', id, result: 'FakeNode/v1.0.0' };
      default: return { jsonrpc: '2.0', id, result: { echo: call.method, params: call.params ?? null } };
    }
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
}
