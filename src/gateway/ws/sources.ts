import type { FeedPolling, WsProtocol } from '../../chains/gateway.js';
import type { UpstreamSet } from '../upstreams/index.js';
import { Feed, FeedError, type FeedSource } from './feed.js';
import { UpstreamRpcError, UpstreamSocket } from './upstream-socket.js';

/** At most this many blocks are fetched to fill a gap (after an upstream change, or per poll). */
const MAX_BACKFILL = 64;

/** Polling follows the chain head: upstreams lagging behind it come last (health.ts). */
const HEAD_READ = { needsHead: true, idempotent: true } as const;

/** One JSON-RPC call over the environment's HTTP upstreams (with their failover). */
export async function httpRpc(set: UpstreamSet, method: string, params: unknown[]): Promise<unknown> {
  const res = await set.send({
    method: 'POST', path: '', contentType: 'application/json', rpcMethod: method,
    body: Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 1, method, params })),
  }, HEAD_READ);
  const text = await res.body.text();
  let answer: { result?: unknown; error?: { code?: number; message?: string } };
  try {
    answer = JSON.parse(text) as typeof answer;
  } catch {
    throw new Error(`upstream answered ${method} with HTTP ${res.status} and no JSON`);
  }
  if (answer.error) throw new FeedError(answer.error.code ?? -32603, answer.error.message ?? 'upstream error');
  return answer.result;
}

const hex = (n: number) => `0x${n.toString(16)}`;

/** newHeads carries the header only. */
function headerOf(block: Record<string, unknown>): Record<string, unknown> {
  const { transactions: _t, uncles: _u, size: _s, totalDifficulty: _d, ...header } = block;
  return header;
}

/** Fetches what a feed missed in blocks `from..to` over HTTP and emits it (the feed drops repeats). */
async function backfill(set: UpstreamSet, calls: FeedPolling, feed: Feed, from: number, to: number): Promise<void> {
  if (to < from) return;
  from = Math.max(from, to - MAX_BACKFILL + 1);
  if (feed.type === 'newHeads') {
    for (let b = from; b <= to; b++) {
      const block = await httpRpc(set, calls.blockByNumber, [hex(b), false]) as Record<string, unknown> | null;
      if (block) feed.emit(headerOf(block), true);
    }
  } else if (feed.type === 'logs') {
    const filter = (feed.params[1] ?? {}) as Record<string, unknown>;
    const logs = await httpRpc(set, calls.logs, [{ ...filter, fromBlock: hex(from), toBlock: hex(to) }]) as unknown[];
    for (const log of logs ?? []) feed.emit(log, true);
  }
}

export interface SourceEvents {
  /** Feeds that can no longer be served: their subscribers are told. */
  lost(feeds: Feed[], reason: string): void;
  /** An upstream socket dropped or could not be opened (for metrics and logs). */
  upstreamFailed(url: string, err: string): void;
  resubscribed(url: string, feeds: number): void;
  /** No WebSocket upstream is left; this many feeds are served by polling HTTP meanwhile. */
  polling(feeds: number): void;
}

/**
 * Feeds over the environment's `ws_upstreams`, in config order. When the socket drops, the next
 * upstream takes over: every feed is subscribed again there, what was missed meanwhile is
 * fetched over HTTP, and clients keep their ids. When no WebSocket upstream has come back within
 * `retryMs`, the feeds the protocol can poll (EVM's newHeads and logs) are served by polling the
 * HTTP upstreams (`poll`) until one does; only feeds that cannot be polled (newPendingTransactions,
 * every Solana feed, or no HTTP upstream) are given up.
 */
export class WsSource implements FeedSource {
  readonly #urls: readonly string[];
  readonly #http: UpstreamSet;
  readonly #protocol: WsProtocol;
  readonly #notifications: ReadonlySet<string>;
  readonly #poll: PollSource | undefined;
  readonly #events: SourceEvents;
  readonly #o: { timeoutMs: number; pingMs: number; retryMs: number };
  readonly #feeds = new Set<Feed>();
  /** Feeds served by `#poll` while no WebSocket upstream is reachable. */
  readonly #polled = new Set<Feed>();
  /** The upstream's subscription id per feed (as it gave it: a string, or Solana's number). */
  readonly #upstreamIds = new Map<Feed, string | number>();
  readonly #byUpstreamId = new Map<string, Feed>();
  #socket: UpstreamSocket | undefined;
  #connecting: Promise<UpstreamSocket> | undefined;
  #probe: NodeJS.Timeout | undefined;
  #next = 0;
  #closed = false;

  constructor(
    urls: readonly string[], http: UpstreamSet, protocol: WsProtocol, poll: PollSource | undefined, events: SourceEvents,
    o: { timeoutMs: number; pingMs: number; retryMs: number },
  ) {
    this.#urls = urls;
    this.#http = http;
    this.#protocol = protocol;
    this.#notifications = new Set(protocol.kinds.map((k) => k.notification));
    this.#poll = poll;
    this.#events = events;
    this.#o = o;
  }

  async add(feed: Feed): Promise<void> {
    this.#feeds.add(feed);
    try {
      if (this.#polled.size > 0 && !this.#socket?.open) throw new Error('no WebSocket upstream available');
      const socket = await this.#connected();
      await this.#subscribe(socket, feed);
    } catch (err) {
      if (err instanceof FeedError || err instanceof UpstreamRpcError) {
        // The upstream judged the subscription itself: tell the client.
        this.#feeds.delete(feed);
        throw new FeedError(err.rpcCode, err.message);
      }
      if (!(await this.#pollInstead(feed))) {
        this.#feeds.delete(feed);
        throw new FeedError(-32010, 'upstream failed');
      }
      this.#scheduleProbe();
      return;
    }
    const polling = this.#protocol.polling;
    if (feed.lastBlock === undefined && polling?.types.includes(feed.type)) {
      // Where a backfill would start if the upstream drops before the first notification.
      httpRpc(this.#http, polling.head, []).then((h) => {
        if (feed.lastBlock === undefined && typeof h === 'string') feed.lastBlock = Number.parseInt(h, 16);
      }, () => {});
    }
  }

  remove(feed: Feed): void {
    this.#feeds.delete(feed);
    if (this.#polled.delete(feed)) this.#poll!.remove(feed);
    const id = this.#upstreamIds.get(feed);
    this.#upstreamIds.delete(feed);
    if (id !== undefined) {
      this.#byUpstreamId.delete(String(id));
      this.#socket?.request(feed.kind.unsubscribe, [id]).catch(() => {});
    }
    if (this.#feeds.size === 0) {
      // No one listens: let the upstream socket go rather than hold it open forever.
      this.#socket?.close();
      clearTimeout(this.#probe);
      this.#probe = undefined;
    }
  }

  close(): void {
    this.#closed = true;
    this.#feeds.clear();
    this.#polled.clear();
    clearTimeout(this.#probe);
    this.#poll?.close();
    this.#socket?.close();
  }

  async #subscribe(socket: UpstreamSocket, feed: Feed): Promise<void> {
    const id = await socket.request(feed.kind.subscribe, feed.params);
    if (typeof id !== 'string' && typeof id !== 'number') throw new FeedError(-32603, 'upstream gave no subscription id');
    if (!this.#feeds.has(feed) || socket !== this.#socket) {
      socket.request(feed.kind.unsubscribe, [id]).catch(() => {});
      return;
    }
    this.#upstreamIds.set(feed, id);
    this.#byUpstreamId.set(String(id), feed);
  }

  /** Serves `feed` by polling, caught up from where it was; false when it cannot be polled. */
  async #pollInstead(feed: Feed): Promise<boolean> {
    const polling = this.#protocol.polling;
    if (!this.#poll || !polling?.types.includes(feed.type)) return false;
    feed.hold();
    try {
      await this.#poll.add(feed);
      this.#polled.add(feed);
      if (feed.lastBlock !== undefined) {
        const head = Number.parseInt(await httpRpc(this.#http, polling.head, []) as string, 16);
        await backfill(this.#http, polling, feed, feed.type === 'newHeads' ? feed.lastBlock + 1 : feed.lastBlock, head);
      }
      return true;
    } catch {
      if (this.#polled.delete(feed)) this.#poll.remove(feed);
      return false;
    } finally {
      feed.release();
    }
  }

  /** While feeds are polled, keeps trying the WebSocket upstreams and moves the feeds back. */
  #scheduleProbe(): void {
    if (this.#probe || this.#closed) return;
    this.#probe = setTimeout(() => {
      this.#probe = undefined;
      if (this.#polled.size === 0 || this.#closed) return;
      this.#connected().then((socket) => {
        for (const f of this.#polled) this.#poll!.remove(f);
        this.#polled.clear();
        return this.#subscribeAll(socket);
      }, () => this.#scheduleProbe());
    }, Math.max(1000, this.#o.retryMs));
    this.#probe.unref();
  }

  #connected(): Promise<UpstreamSocket> {
    if (this.#socket?.open) return Promise.resolve(this.#socket);
    this.#connecting ??= this.#connect().finally(() => { this.#connecting = undefined; });
    return this.#connecting;
  }

  /** Tries each upstream in turn, starting with the one after the last that failed, until `retryMs` runs out. */
  async #connect(): Promise<UpstreamSocket> {
    const deadline = Date.now() + this.#o.retryMs;
    let delay = 100;
    for (;;) {
      for (let i = 0; i < this.#urls.length; i++) {
        if (this.#closed) throw new Error('closed');
        const url = this.#urls[this.#next % this.#urls.length]!;
        try {
          const socket = await UpstreamSocket.connect(url, this.#o.timeoutMs, this.#o.pingMs, this.#notifications);
          this.#socket = socket;
          socket.onNotification = (id, result) => this.#byUpstreamId.get(id)?.emit(result);
          socket.onClose = () => this.#dropped(socket, url);
          return socket;
        } catch (err) {
          this.#events.upstreamFailed(url, (err as Error).message);
          this.#next++;
        }
      }
      if (Date.now() + delay > deadline) throw new Error('no WebSocket upstream available');
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, 2000);
    }
  }

  #dropped(socket: UpstreamSocket, url: string): void {
    if (socket !== this.#socket) return;
    this.#socket = undefined;
    this.#upstreamIds.clear();
    this.#byUpstreamId.clear();
    if (this.#closed || this.#feeds.size === 0) return;
    this.#events.upstreamFailed(url, 'socket closed');
    this.#next++;
    void this.#resubscribeAll();
  }

  async #resubscribeAll(): Promise<void> {
    let socket: UpstreamSocket;
    try {
      socket = await this.#connected();
    } catch {
      const feeds = [...this.#feeds].filter((f) => !this.#polled.has(f));
      const lost: Feed[] = [];
      for (const f of feeds) if (!(await this.#pollInstead(f))) lost.push(f);
      for (const f of lost) this.#feeds.delete(f);
      if (lost.length > 0) this.#events.lost(lost, 'no upstream available');
      if (this.#polled.size > 0) {
        this.#events.polling(this.#polled.size);
        this.#scheduleProbe();
      }
      return;
    }
    await this.#subscribeAll(socket);
  }

  /** Subscribes every feed on `socket`, then sends what was missed, then the live notifications. */
  async #subscribeAll(socket: UpstreamSocket): Promise<void> {
    const feeds = [...this.#feeds];
    for (const f of feeds) f.hold();
    try {
      const results = await Promise.allSettled(feeds.map((f) => this.#subscribe(socket, f)));
      if (!socket.open) return; // dropped again meanwhile: its own close handler takes over
      const failed = feeds.filter((_, i) => results[i]!.status === 'rejected');
      if (failed.length > 0) {
        for (const f of failed) this.#feeds.delete(f);
        this.#events.lost(failed, 'upstream refused the subscription');
      }
      this.#events.resubscribed(this.#urls[this.#next % this.#urls.length]!, feeds.length - failed.length);
      // What happened while no upstream was listening; live notifications wait until it is sent.
      const polling = this.#protocol.polling;
      if (!polling) return;
      const head = Number.parseInt(await httpRpc(this.#http, polling.head, []) as string, 16);
      for (const f of feeds) {
        if (f.lastBlock === undefined || !this.#feeds.has(f)) continue;
        await backfill(this.#http, polling, f, f.type === 'newHeads' ? f.lastBlock + 1 : f.lastBlock, head).catch(() => {});
      }
    } catch {
      // No head over HTTP: nothing to backfill from; live notifications carry on.
    } finally {
      for (const f of feeds) f.release();
    }
  }
}

interface PolledBlock {
  number: number;
  hash: string;
  parentHash: string;
  header: Record<string, unknown>;
}

interface PolledLog {
  blockNumber?: string;
  blockHash?: string;
  removed?: boolean;
}

function polledBlock(raw: unknown): PolledBlock | undefined {
  const b = raw as Record<string, unknown> | null;
  if (!b || typeof b.hash !== 'string' || typeof b.parentHash !== 'string' || typeof b.number !== 'string') return undefined;
  const number = Number.parseInt(b.number, 16);
  return Number.isSafeInteger(number) ? { number, hash: b.hash, parentHash: b.parentHash, header: headerOf(b) } : undefined;
}

/**
 * newHeads and logs for environments without a WebSocket upstream (and for feeds whose
 * WebSocket upstreams are all gone), polled over HTTP once per interval for the whole
 * environment, and not at all while no one subscribes. As geth would over a socket: each
 * tick takes the head block and walks its parent hashes back to a block it knew, so the new
 * blocks come in order and a reorg shows as a known height whose hash changed. Logs sent from
 * the blocks a reorg replaced are sent again with `removed: true` before the new chain's logs.
 */
export class PollSource implements FeedSource {
  readonly #http: UpstreamSet;
  readonly #calls: FeedPolling & { types: readonly string[] };
  readonly #intervalMs: number;
  readonly #feeds = new Set<Feed>();
  /** Hashes of the recent canonical blocks this source has seen, by height. */
  readonly #known = new Map<number, string>();
  /** Per logs feed, the logs sent by height (recent blocks only): what a reorg takes back. */
  readonly #sent = new Map<Feed, Map<number, PolledLog[]>>();
  #timer: NodeJS.Timeout | undefined;
  #head: number | undefined;
  #running = false;

  constructor(http: UpstreamSet, calls: FeedPolling & { types: readonly string[] }, intervalMs: number) {
    this.#http = http;
    this.#calls = calls;
    this.#intervalMs = intervalMs;
  }

  async add(feed: Feed): Promise<void> {
    if (!this.#calls.types.includes(feed.type)) {
      throw new FeedError(-32601, `${feed.type.slice(0, 40)} needs a WebSocket upstream, and this network has none`);
    }
    if (this.#head === undefined) {
      let head: PolledBlock | undefined;
      try {
        head = polledBlock(await httpRpc(this.#http, this.#calls.blockByNumber, ['latest', false]));
      } catch (err) {
        throw err instanceof FeedError ? err : new FeedError(-32010, 'upstream failed');
      }
      if (!head) throw new FeedError(-32010, 'upstream failed');
      this.#known.set(head.number, head.hash);
      this.#head = head.number;
    }
    this.#feeds.add(feed);
    if (feed.type === 'logs') this.#sent.set(feed, new Map());
    this.#timer ??= setInterval(() => void this.#tick(), this.#intervalMs);
  }

  remove(feed: Feed): void {
    this.#feeds.delete(feed);
    this.#sent.delete(feed);
    if (this.#feeds.size === 0) {
      clearInterval(this.#timer);
      this.#timer = undefined;
      this.#head = undefined;
      this.#known.clear();
    }
  }

  close(): void {
    this.#feeds.clear();
    this.#sent.clear();
    this.#known.clear();
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  async #tick(): Promise<void> {
    if (this.#running) return;
    this.#running = true;
    try {
      await this.#step();
    } catch {
      // The next tick tries again from the same block.
    } finally {
      this.#running = false;
    }
  }

  async #step(): Promise<void> {
    const head = polledBlock(await httpRpc(this.#http, this.#calls.blockByNumber, ['latest', false]));
    if (!head || this.#known.get(head.number) === head.hash) return;
    // The new blocks, oldest first: back from the head to a parent this source knew.
    const last = this.#head ?? head.number - 1;
    const blocks = [head];
    for (let b = head; b.number > 0 && blocks.length < MAX_BACKFILL;) {
      const known = this.#known.get(b.number - 1);
      // Joined the chain this source knew, or reached below what it remembers.
      if (known === b.parentHash || (known === undefined && b.number - 1 <= last)) break;
      const parent = polledBlock(await httpRpc(this.#http, this.#calls.blockByHash, [b.parentHash, false]));
      if (!parent) return;
      blocks.unshift(parent);
      b = parent;
    }
    const from = blocks[0]!.number;
    // Known heights from `from` up were replaced (or are gone, when the new chain is shorter).
    const replaced = [...this.#known.keys()].some((h) => h >= from);
    // Without a reorg, the blocks between the last head and the walk's start (more than
    // MAX_BACKFILL behind) are skipped, as a client that was away would miss them.
    const logsFrom = replaced ? from : Math.max(from, last + 1);
    const hashAt = new Map(blocks.map((b) => [b.number, b.hash]));
    for (const feed of [...this.#feeds]) {
      if (feed.type === 'newHeads') {
        for (const b of blocks) feed.emit(b.header, true);
        continue;
      }
      const sent = this.#sent.get(feed);
      if (!sent) continue;
      if (replaced) {
        for (const [h, logs] of [...sent].sort((a, b) => a[0] - b[0])) {
          if (h < from) continue;
          for (const log of logs) feed.emit({ ...log, removed: true }, true);
          sent.delete(h);
        }
      }
      if (logsFrom > head.number) continue;
      const filter = (feed.params[1] ?? {}) as Record<string, unknown>;
      const logs = await httpRpc(this.#http, this.#calls.logs, [{ ...filter, fromBlock: hex(logsFrom), toBlock: hex(head.number) }]) as PolledLog[] | null;
      for (const log of logs ?? []) {
        const h = Number.parseInt(log.blockNumber ?? '', 16);
        // From another fork than the blocks walked (the chain moved between the two calls): the next tick has it.
        if (hashAt.has(h) && hashAt.get(h) !== log.blockHash) continue;
        feed.emit(log, true);
        let atHeight = sent.get(h);
        if (!atHeight) sent.set(h, atHeight = []);
        atHeight.push(log);
      }
      for (const h of sent.keys()) if (h <= head.number - MAX_BACKFILL) sent.delete(h);
    }
    for (const h of [...this.#known.keys()]) if (h >= from || h <= head.number - MAX_BACKFILL) this.#known.delete(h);
    for (const b of blocks) this.#known.set(b.number, b.hash);
    this.#head = head.number;
  }
}

/** Feeds of an environment without WebSocket upstreams whose protocol polls nothing: every subscription is refused. */
export class NoSource implements FeedSource {
  add(feed: Feed): Promise<void> {
    return Promise.reject(new FeedError(-32601, `${feed.type.slice(0, 40)} needs a WebSocket upstream, and this network has none`));
  }
  remove(): void {}
  close(): void {}
}
