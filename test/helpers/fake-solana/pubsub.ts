import type { WebSocket } from 'ws';
import type { ChainListener, Commitment, ExecutedTx, FakeBlock } from './chain.js';
import { parsedAccountData } from './parse.js';
import { type SolanaRpc, commitmentOf } from './rpc.js';
import { RpcError, fromBase58, invalidParams, stringify, uiAccount } from './wire.js';

type Sub =
  | { kind: 'account'; ws: WebSocket; address: string; commitment: Commitment; encoding: unknown }
  | { kind: 'program'; ws: WebSocket; program: string; commitment: Commitment; encoding: unknown; filters: Array<Record<string, unknown>> }
  | { kind: 'signature'; ws: WebSocket; signature: string; commitment: Commitment; received: boolean }
  | { kind: 'logs'; ws: WebSocket; mentions: string | null; votes: boolean; commitment: Commitment }
  | { kind: 'slot'; ws: WebSocket }
  | { kind: 'root'; ws: WebSocket };

const NOTIFICATION: Record<Sub['kind'], string> = {
  account: 'accountNotification', program: 'programNotification', signature: 'signatureNotification',
  logs: 'logsNotification', slot: 'slotNotification', root: 'rootNotification',
};

const cfgOf = (p: unknown): Record<string, unknown> => (p && typeof p === 'object' && !Array.isArray(p) ? (p as Record<string, unknown>) : {});

/**
 * Solana's PubSub (agave's rpc_subscriptions): `*Subscribe` answers a numeric id, notifications
 * carry `{ result, subscription }`, the default commitment is finalized, a signature subscription
 * ends with its one notification.
 */
export class PubSub implements ChainListener {
  readonly #rpc: SolanaRpc;
  readonly #subs = new Map<number, Sub>();
  #nextId = 0;
  #lastRoot = 0;

  constructor(rpc: SolanaRpc) { this.#rpc = rpc; }

  get subscriptionCount(): number { return this.#subs.size; }

  closed(ws: WebSocket): void {
    for (const [id, s] of this.#subs) if (s.ws === ws) this.#subs.delete(id);
  }

  /** Answers one request (or null for a message without id, as JSON-RPC notifications get none). */
  request(ws: WebSocket, msg: { id?: unknown; method?: unknown; params?: unknown }): unknown {
    if (msg.id === undefined) return null;
    try {
      return { jsonrpc: '2.0', result: this.#handle(ws, String(msg.method), Array.isArray(msg.params) ? msg.params : []), id: msg.id };
    } catch (e) {
      const err = e instanceof RpcError ? e : new RpcError(-32603, 'Internal error');
      return { jsonrpc: '2.0', error: { code: err.code, message: err.message, ...(err.data === undefined ? {} : { data: err.data }) }, id: msg.id };
    }
  }

  #add(sub: Sub): number {
    const id = this.#nextId++;
    this.#subs.set(id, sub);
    return id;
  }

  #handle(ws: WebSocket, method: string, p: unknown[]): unknown {
    const cfg = cfgOf(p[1]);
    const address = (v: unknown) => {
      if (typeof v === 'string') { try { if (fromBase58(v).length === 32) return v; } catch { /* below */ } }
      throw invalidParams('Invalid Request: Invalid pubkey provided');
    };
    switch (method) {
      case 'accountSubscribe': return this.#add({ kind: 'account', ws, address: address(p[0]), commitment: commitmentOf(cfg), encoding: cfg.encoding ?? 'binary' });
      case 'programSubscribe': return this.#add({
        kind: 'program', ws, program: address(p[0]), commitment: commitmentOf(cfg), encoding: cfg.encoding ?? 'binary',
        filters: Array.isArray(cfg.filters) ? cfg.filters as Array<Record<string, unknown>> : [],
      });
      case 'signatureSubscribe': {
        if (typeof p[0] !== 'string') throw invalidParams('Invalid Request: Invalid signature provided');
        return this.#add({ kind: 'signature', ws, signature: p[0], commitment: commitmentOf(cfg), received: cfg.enableReceivedNotification === true });
      }
      case 'logsSubscribe': {
        const f = p[0];
        let mentions: string | null = null;
        if (f && typeof f === 'object') {
          const m = (f as { mentions?: unknown }).mentions;
          if (!Array.isArray(m) || m.length !== 1) throw invalidParams('Invalid Request: Only 1 address supported');
          mentions = address(m[0]);
        } else if (f !== 'all' && f !== 'allWithVotes') throw invalidParams('Invalid params: unknown variant');
        return this.#add({ kind: 'logs', ws, mentions, votes: f === 'allWithVotes', commitment: commitmentOf(cfg) });
      }
      case 'slotSubscribe': return this.#add({ kind: 'slot', ws });
      case 'rootSubscribe': return this.#add({ kind: 'root', ws });
      case 'accountUnsubscribe': case 'programUnsubscribe': case 'signatureUnsubscribe':
      case 'logsUnsubscribe': case 'slotUnsubscribe': case 'rootUnsubscribe': {
        const id = p[0];
        const s = typeof id === 'number' ? this.#subs.get(id) : undefined;
        if (!s || s.ws !== ws || `${s.kind}Unsubscribe` !== method) throw invalidParams('Invalid subscription id.');
        this.#subs.delete(id as number);
        return true;
      }
      default: throw new RpcError(-32601, 'Method not found');
    }
  }

  #send(id: number, sub: Sub, result: unknown): void {
    if (sub.ws.readyState !== sub.ws.OPEN) return;
    sub.ws.send(stringify({ jsonrpc: '2.0', method: NOTIFICATION[sub.kind], params: { result, subscription: id } }));
  }

  #accountValue(address: string, slot: number, encoding: unknown): unknown {
    const chain = this.#rpc.chain;
    return uiAccount(chain.account(address, slot), encoding as string, (a) => parsedAccountData(a, (m) => chain.decimalsOf(m, slot)));
  }

  /** Notifications for transactions that reached `commitment` in the block of `slot`. */
  #transactions(commitment: Commitment, slot: number, txs: readonly ExecutedTx[]): void {
    const chain = this.#rpc.chain;
    const written = new Set(txs.flatMap((t) => t.keys.filter((k) => k.writable).map((k) => k.pubkey)));
    for (const [id, s] of this.#subs) {
      if (!('commitment' in s) || s.commitment !== commitment) continue;
      const context = { slot };
      if (s.kind === 'account' && written.has(s.address)) {
        this.#send(id, s, { context, value: this.#accountValue(s.address, slot, s.encoding) });
      } else if (s.kind === 'program') {
        for (const addr of written) {
          const acc = chain.account(addr, slot);
          if (!acc || acc.programAddress !== s.program || !matches(Uint8Array.from(acc.data), s.filters)) continue;
          this.#send(id, s, { context, value: { account: this.#accountValue(addr, slot, s.encoding), pubkey: addr } });
        }
      } else if (s.kind === 'signature') {
        const t = txs.find((x) => x.decoded.signature === s.signature);
        if (!t) continue;
        this.#send(id, s, { context, value: { err: t.meta.err } });
        this.#subs.delete(id);
      } else if (s.kind === 'logs') {
        for (const t of txs) {
          if (s.mentions && !t.keys.some((k) => k.pubkey === s.mentions)) continue;
          this.#send(id, s, { context, value: { err: t.meta.err, logs: t.meta.logMessages, signature: t.decoded.signature } });
        }
      }
    }
  }

  executed(tx: ExecutedTx): void {
    for (const [id, s] of this.#subs) {
      if (s.kind === 'signature' && s.received && s.signature === tx.decoded.signature) {
        this.#send(id, s, { context: { slot: tx.slot }, value: 'receivedSignature' });
        s.received = false;
      }
    }
    this.#transactions('processed', tx.slot, [tx]);
  }

  reached(commitment: 'confirmed' | 'finalized', blocks: FakeBlock[]): void {
    for (const b of blocks) this.#transactions(commitment, b.slot, b.txs);
  }

  slotOpened(slot: number, parent: number, root: number): void {
    for (const [id, s] of this.#subs) if (s.kind === 'slot') this.#send(id, s, { parent, root, slot });
    if (root !== this.#lastRoot) {
      this.#lastRoot = root;
      for (const [id, s] of this.#subs) if (s.kind === 'root') this.#send(id, s, root);
    }
  }

  dropped(_blocks: FakeBlock[], touched: string[]): void {
    const slot = this.#rpc.chain.processedSlot;
    for (const [id, s] of this.#subs) {
      if (s.kind === 'account' && s.commitment === 'processed' && touched.includes(s.address)) {
        this.#send(id, s, { context: { slot }, value: this.#accountValue(s.address, slot, s.encoding) });
      }
    }
  }
}

function matches(data: Uint8Array, filters: Array<Record<string, unknown>>): boolean {
  return filters.every((f) => {
    if (typeof f.dataSize === 'number') return data.length === f.dataSize;
    const m = cfgOf(f.memcmp);
    if (typeof m.offset !== 'number' || typeof m.bytes !== 'string') return true;
    const want = fromBase58(m.bytes);
    return want.every((byte, i) => data[(m.offset as number) + i] === byte);
  });
}
