import WebSocket from 'ws';
import { JsonRpcCodedError } from './rpc-coded-error.js';

export class UpstreamRpcError extends JsonRpcCodedError {
  readonly code = 'E_UPSTREAM_RPC';
  constructor(rpcCode: number, message: string) {
    super(rpcCode, message);
    this.name = 'UpstreamRpcError';
  }
}

interface Pending { resolve: (v: unknown) => void; reject: (e: Error) => void; timer: NodeJS.Timeout }

/**
 * One JSON-RPC connection to an upstream node's WebSocket. Requests are matched to answers by
 * our own ids; notifications go to `onNotification`. A missed pong or any socket error ends it
 * (`onClose` once), and the owner decides where to go next.
 */
export class UpstreamSocket {
  /** `subscription`: the upstream's id as a string (Solana's are numbers). */
  onNotification: (subscription: string, result: unknown) => void = () => {};
  onClose: () => void = () => {};
  readonly #ws: WebSocket;
  readonly #pending = new Map<number, Pending>();
  readonly #timeoutMs: number;
  /** The protocol's notification methods (`eth_subscription`, `slotNotification`, ...). */
  readonly #notifications: ReadonlySet<string>;
  #nextId = 1;
  #closed = false;
  #alive = true;
  #heartbeat: NodeJS.Timeout;

  private constructor(ws: WebSocket, timeoutMs: number, pingMs: number, notifications: ReadonlySet<string>) {
    this.#ws = ws;
    this.#timeoutMs = timeoutMs;
    this.#notifications = notifications;
    ws.on('message', (data) => this.#onMessage(data as Buffer));
    ws.on('pong', () => { this.#alive = true; });
    ws.on('close', () => this.#end());
    ws.on('error', () => this.#end());
    this.#heartbeat = setInterval(() => {
      if (!this.#alive) return this.close();
      this.#alive = false;
      ws.ping();
    }, pingMs);
    this.#heartbeat.unref();
  }

  static connect(url: string, timeoutMs: number, pingMs: number, notifications: ReadonlySet<string>): Promise<UpstreamSocket> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, { handshakeTimeout: timeoutMs, maxPayload: 64 * 1024 * 1024, perMessageDeflate: false });
      const fail = (err: Error) => {
        ws.removeAllListeners();
        ws.on('error', () => {});
        ws.terminate();
        reject(err);
      };
      ws.once('error', fail);
      ws.once('unexpected-response', (_req, res) => fail(new Error(`upstream refused the WebSocket with HTTP ${res.statusCode}`)));
      ws.once('open', () => {
        ws.removeAllListeners();
        resolve(new UpstreamSocket(ws, timeoutMs, pingMs, notifications));
      });
    });
  }

  get open(): boolean {
    return !this.#closed;
  }

  request(method: string, params: unknown[]): Promise<unknown> {
    if (this.#closed) return Promise.reject(new Error('upstream socket closed'));
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        reject(new Error(`upstream did not answer ${method} in time`));
      }, this.#timeoutMs);
      this.#pending.set(id, { resolve, reject, timer });
      this.#ws.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    });
  }

  close(): void {
    this.#ws.terminate();
    this.#end();
  }

  #onMessage(data: Buffer): void {
    let msg: { id?: unknown; result?: unknown; error?: { code?: number; message?: string }; method?: string; params?: { subscription?: unknown; result?: unknown } };
    try {
      msg = JSON.parse(data.toString('utf8')) as typeof msg;
    } catch {
      return;
    }
    if (typeof msg.id === 'number') {
      const p = this.#pending.get(msg.id);
      if (!p) return;
      this.#pending.delete(msg.id);
      clearTimeout(p.timer);
      if (msg.error) p.reject(new UpstreamRpcError(msg.error.code ?? -32603, msg.error.message ?? 'upstream error'));
      else p.resolve(msg.result);
      return;
    }
    const sub = msg.params?.subscription;
    if (msg.method !== undefined && this.#notifications.has(msg.method) && (typeof sub === 'string' || typeof sub === 'number')) {
      this.onNotification(String(sub), msg.params!.result);
    }
  }

  #end(): void {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#heartbeat);
    for (const p of this.#pending.values()) {
      clearTimeout(p.timer);
      p.reject(new Error('upstream socket closed'));
    }
    this.#pending.clear();
    this.onClose();
  }
}
