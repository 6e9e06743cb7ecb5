import { JsonRpcCodedError } from './rpc-coded-error.js';
export type FeedType = 'newHeads' | 'logs' | 'newPendingTransactions';
export const FEED_TYPES: readonly FeedType[] = ['newHeads', 'logs', 'newPendingTransactions'];

/** One client's subscription: the id it was given (stable across upstream changes) and where its notifications go. */
export interface Subscriber {
  readonly id: string;
  /** `result` already serialised: the notification is built around it without re-encoding. */
  deliver(resultJson: string): void;
  /** The feed can no longer be served (no upstream left). */
  lost(reason: string): void;
}

const RECENT = 256;

/**
 * One upstream-level subscription shared by every client with the same parameters: a thousand
 * clients on `newHeads` cost one upstream subscription. It drops what it already sent, so a
 * resubscription or a backfill after an upstream change never repeats a block or a log.
 */
export class Feed {
  readonly key: string;
  readonly type: FeedType;
  /** The `eth_subscribe` params as sent upstream. */
  readonly params: unknown[];
  readonly subscribers = new Set<Subscriber>();
  /** Highest block number seen (heads) or seen a log in (logs): where a backfill starts. */
  lastBlock: number | undefined;
  readonly #seen = new Set<string>();
  readonly #order: string[] = [];
  #held: unknown[] | undefined;

  constructor(type: FeedType, params: unknown[]) {
    this.type = type;
    this.params = params;
    this.key = JSON.stringify(params);
  }

  /**
   * Keeps live notifications back while a backfill sends what was missed, so clients get
   * blocks in order; `release()` sends them after it.
   */
  hold(): void {
    this.#held ??= [];
  }

  release(): void {
    const held = this.#held;
    this.#held = undefined;
    for (const r of held ?? []) this.emit(r);
  }

  /** Sends `result` to every subscriber unless it was sent before; `force` passes a hold (backfills). */
  emit(result: unknown, force = false): void {
    if (this.#held && !force) {
      this.#held.push(result);
      return;
    }
    const r = result as { hash?: string; number?: string; blockHash?: string; blockNumber?: string; logIndex?: string; removed?: boolean };
    let id: string | undefined;
    let block: string | undefined;
    if (this.type === 'newHeads') {
      id = r?.hash;
      block = r?.number;
    } else if (this.type === 'logs') {
      id = r?.blockHash !== undefined ? `${r.blockHash}:${r.logIndex}:${r.removed ? 1 : 0}` : undefined;
      block = r?.blockNumber;
    } else {
      id = typeof result === 'string' ? result : undefined;
    }
    if (id !== undefined) {
      if (this.#seen.has(id)) return;
      this.#seen.add(id);
      this.#order.push(id);
      if (this.#order.length > RECENT) this.#seen.delete(this.#order.shift()!);
    }
    if (block !== undefined) {
      const n = Number.parseInt(block, 16);
      if (Number.isSafeInteger(n) && (this.lastBlock === undefined || n > this.lastBlock)) this.lastBlock = n;
    }
    const json = JSON.stringify(result);
    for (const s of this.subscribers) s.deliver(json);
  }
}

/** Where feeds get their data: an upstream's WebSocket, or polling its HTTP side. */
export interface FeedSource {
  /** Starts the feed upstream; rejects (with a client-facing message) when it cannot be served. */
  add(feed: Feed): Promise<void>;
  remove(feed: Feed): void;
  close(): void;
}

export class FeedError extends JsonRpcCodedError {
  readonly code = 'E_FEED';
  constructor(rpcCode: number, message: string) {
    super(rpcCode, message);
    this.name = 'FeedError';
  }
}

/**
 * Checks and normalises `eth_subscribe` params into a feed key: the same filter written two
 * ways (address case, one address vs a one-element list) shares one upstream subscription.
 */
export function normaliseSubscribe(params: unknown): { type: FeedType; params: unknown[] } {
  if (!Array.isArray(params) || typeof params[0] !== 'string') throw new FeedError(-32602, 'eth_subscribe needs a subscription type as its first parameter');
  const type = params[0];
  if (!(FEED_TYPES as readonly string[]).includes(type)) {
    throw new FeedError(-32602, `unsupported subscription type "${type.slice(0, 40)}" (supported: ${FEED_TYPES.join(', ')})`);
  }
  if (type !== 'logs') {
    if (params.length > 1 && !(type === 'newPendingTransactions' && params.length === 2 && typeof params[1] === 'boolean')) {
      throw new FeedError(-32602, `${type} takes no filter`);
    }
    return { type: type as FeedType, params: params.slice(0, 2) };
  }
  const filter = (params[1] ?? {}) as Record<string, unknown>;
  if (typeof filter !== 'object' || filter === null || Array.isArray(filter)) throw new FeedError(-32602, 'logs filter must be an object');
  const out: { address?: string | string[]; topics?: unknown[] } = {};
  for (const k of Object.keys(filter)) {
    if (k !== 'address' && k !== 'topics') throw new FeedError(-32602, `logs filter: unsupported key "${k.slice(0, 40)}" (address, topics)`);
  }
  if (filter.address !== undefined && filter.address !== null) {
    const list = Array.isArray(filter.address) ? filter.address : [filter.address];
    if (!list.every((a) => typeof a === 'string' && /^0x[0-9a-fA-F]{40}$/.test(a))) throw new FeedError(-32602, 'logs filter: address must be a 20-byte hex address or a list of them');
    const lower = [...new Set((list as string[]).map((a) => a.toLowerCase()))].sort();
    out.address = lower.length === 1 ? lower[0]! : lower;
  }
  if (filter.topics !== undefined && filter.topics !== null) {
    if (!Array.isArray(filter.topics) || filter.topics.length > 4) throw new FeedError(-32602, 'logs filter: topics must be a list of at most 4 entries');
    const topic = (t: unknown) => typeof t === 'string' && /^0x[0-9a-fA-F]{64}$/.test(t);
    out.topics = filter.topics.map((t) => {
      if (t === null) return null;
      if (topic(t)) return (t as string).toLowerCase();
      if (Array.isArray(t) && t.every(topic)) return (t as string[]).map((x) => x.toLowerCase());
      throw new FeedError(-32602, 'logs filter: each topic must be null, a 32-byte hex value or a list of them');
    });
    while (out.topics.length > 0 && out.topics[out.topics.length - 1] === null) out.topics.pop();
    if (out.topics.length === 0) delete out.topics;
  }
  return { type: 'logs', params: ['logs', out] };
}
