import type { SubscriptionKind } from '../../chains/gateway.js';
import { JsonRpcCodedError } from './rpc-coded-error.js';

/** What a family's protocol calls the feed (its `normalise`): EVM's `newHeads`, Solana's `slot`. */
export type FeedType = string;

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
  /** Its subscribe, unsubscribe and notification methods (the family's WebSocket protocol). */
  readonly kind: SubscriptionKind;
  /** The subscribe params as sent upstream. */
  readonly params: unknown[];
  readonly subscribers = new Set<Subscriber>();
  /** Highest block number seen (heads) or seen a log in (logs): where a backfill starts. */
  lastBlock: number | undefined;
  readonly #seen = new Set<string>();
  readonly #order: string[] = [];
  #held: unknown[] | undefined;

  constructor(kind: SubscriptionKind, type: FeedType, params: unknown[]) {
    this.kind = kind;
    this.type = type;
    this.params = params;
    this.key = feedKey(kind, params);
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

/** Clients with the same subscribe call and params share one feed. */
export function feedKey(kind: SubscriptionKind, params: unknown[]): string {
  return `${kind.subscribe}\u0000${JSON.stringify(params)}`;
}
