import { SubscribeParamsError, type SubscriptionKind, type WsProtocol } from '../../chains/gateway.js';
import { Feed, FeedError, feedKey, type FeedSource, type FeedType, type Subscriber } from './feed.js';

/**
 * The feeds of one network environment: clients' subscriptions with the same parameters share
 * one feed, and a feed lives upstream only while someone listens.
 */
export class SubscriptionHub {
  readonly #source: FeedSource;
  readonly #protocol: WsProtocol;
  readonly #feeds = new Map<string, { feed: Feed; ready: Promise<void> }>();
  readonly #onCount: (type: FeedType, delta: number) => void;

  constructor(source: FeedSource, protocol: WsProtocol, onCount: (type: FeedType, delta: number) => void = () => {}) {
    this.#source = source;
    this.#protocol = protocol;
    this.#onCount = onCount;
  }

  /** Adds `sub` to the feed its params name, starting that feed upstream if it is new. */
  async subscribe(sub: Subscriber, kind: SubscriptionKind, rawParams: unknown): Promise<Feed> {
    let type: FeedType;
    let params: unknown[];
    try {
      ({ type, params } = this.#protocol.normalise(kind, rawParams));
    } catch (err) {
      throw err instanceof SubscribeParamsError ? new FeedError(err.rpcCode, err.message) : err;
    }
    const key = feedKey(kind, params);
    let entry = this.#feeds.get(key);
    if (!entry) {
      const feed = new Feed(kind, type, params);
      const ready = this.#source.add(feed);
      entry = { feed, ready };
      this.#feeds.set(key, entry);
      ready.catch(() => { if (this.#feeds.get(key) === entry) this.#feeds.delete(key); });
    }
    await entry.ready;
    entry.feed.subscribers.add(sub);
    this.#onCount(type, 1);
    return entry.feed;
  }

  unsubscribe(sub: Subscriber, feed: Feed): void {
    if (!feed.subscribers.delete(sub)) return;
    this.#onCount(feed.type, -1);
    if (feed.subscribers.size > 0) return;
    if (this.#feeds.get(feed.key)?.feed === feed) this.#feeds.delete(feed.key);
    this.#source.remove(feed);
  }

  /** The source gave these feeds up: every subscriber hears of it. */
  lost(feeds: Feed[], reason: string): void {
    for (const feed of feeds) {
      if (this.#feeds.get(feed.key)?.feed === feed) this.#feeds.delete(feed.key);
      for (const s of [...feed.subscribers]) s.lost(reason);
    }
  }

  get feeds(): number {
    return this.#feeds.size;
  }

  close(): void {
    this.#feeds.clear();
    this.#source.close();
  }
}
