import { existsSync } from 'node:fs';
import type { Server as NetServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { CacheStats } from '../cache.js';
import type { UpstreamSnapshot } from '../health.js';
import type { EndpointWire } from '../registry.js';
import { claimFreePort, claimPort, type PortClaim } from './port-claim.js';
import type { FromWorker, ProbedWire, ToWorker, UsageWire, WorkerStart } from './protocol.js';
import type { CallQuery, CallWire } from '../request-log.js';
import type { Config } from '../../config/index.js';
import type { Network, CatalogPlan } from '../../store/index.js';
import { RpcctlError } from '../../util/errors.js';

/** A worker that could not listen (the port is taken...). */
export class GatewayListenError extends RpcctlError {
  readonly code: string;
  constructor(code: string | undefined, message: string) {
    super(message);
    this.name = 'GatewayListenError';
    this.code = code ?? 'E_GATEWAY_WORKER';
  }
}

/**
 * The compiled worker script. Under the TypeScript sources (tests run them through vitest) the
 * worker still loads the build in dist/: a worker thread runs plain JavaScript. The tests'
 * global setup (test/global-setup.ts) builds dist/ first, so that build is the current source.
 */
export function workerScript(): string {
  const here = fileURLToPath(import.meta.url);
  if (here.endsWith('.js')) return join(dirname(here), 'worker.js');
  const root = resolve(dirname(here), '..', '..', '..');
  const built = join(root, 'dist', 'gateway', 'workers', 'worker.js');
  if (!existsSync(built)) throw new Error(`the gateway worker script ${built} is missing: run npm run build`);
  return built;
}

export interface PoolOptions {
  count: number;
  /** Everything of WorkerStart but what differs per worker and per start. */
  start: () => Omit<WorkerStart, 'index' | 'workers' | 'port' | 'host' | 'liveInstances'>;
  log: (line: string) => void;
  /** A worker ended: what it held in shared memory is given back before its successor starts. */
  onExit: (index: number) => void;
  onUsage: (rows: UsageWire[]) => void;
  onAccess: (obj: Record<string, unknown>, msg: string) => void;
  health: () => Promise<boolean>;
  /** A worker's Redis client for `part` lost Redis (`down`) or has it back. */
  onRedis?: (index: number, part: string, down: boolean, reason: string) => void;
}

interface Slot {
  index: number;
  worker: Worker;
  pending: Map<number, (value: unknown) => void>;
  state: Extract<FromWorker, { t: 'state' }> | undefined;
  listening: boolean;
  exited: boolean;
}

/**
 * The gateway's worker threads, all listening on one port (SO_REUSEPORT: the kernel spreads
 * connections), which no other process may share (port-claim.ts). A worker that dies is started
 * again and the event logged; every request to the workers is answered even by one that died
 * meanwhile (with nothing).
 */
export class GatewayWorkers {
  readonly #o: PoolOptions;
  readonly #slots: Slot[] = [];
  #seq = 0;
  #port = 0;
  #host = '127.0.0.1';
  #stopping = false;
  #draining = false;
  /** This service's hold on the port, for as long as it runs (workers started again bind under it). */
  #claim: PortClaim | undefined;
  #liveInstances = 1;
  /** Workers started again after they died, since start. */
  restarts = 0;

  constructor(o: PoolOptions) {
    this.#o = o;
  }

  get port(): number {
    return this.#port;
  }

  get threadIds(): number[] {
    return this.#slots.map((s) => s.worker.threadId);
  }

  /**
   * Starts the workers on `port` (0: one the kernel picks) and resolves once all listen. The
   * port is claimed for this service first (port-claim.ts): a port another process holds, a
   * running rpcctl gateway's included, fails with EADDRINUSE rather than being shared with it.
   */
  async listen(port: number, host: string): Promise<number> {
    this.#host = host;
    let holder: NetServer | undefined;
    try {
      if (port === 0) ({ claim: this.#claim, holder } = await claimFreePort(host));
      else this.#claim = await claimPort(port, host);
    } catch (err) {
      // As a worker's failed listen is reported: EADDRINUSE, EACCES... with the system's words.
      const { code, message } = err as NodeJS.ErrnoException;
      throw new GatewayListenError(code, message);
    }
    port = this.#claim.port;
    this.#port = port;
    try {
      await Promise.all(Array.from({ length: this.#o.count }, (_, i) => this.#spawn(i)));
    } catch (err) {
      await this.stop();
      throw err;
    } finally {
      holder?.close();
    }
    return port;
  }

  #spawn(index: number): Promise<void> {
    const start: WorkerStart = { ...this.#o.start(), index, workers: this.#o.count, port: this.#port, host: this.#host, liveInstances: this.#liveInstances };
    const worker = new Worker(workerScript(), { workerData: start, name: `gateway-${index}` });
    const slot: Slot = { index, worker, pending: new Map(), state: undefined, listening: false, exited: false };
    this.#slots[index] = slot;
    return new Promise<void>((ok, fail) => {
      worker.on('message', (m: FromWorker) => {
        switch (m.t) {
          case 'listening':
            slot.listening = true;
            // A worker started again while the service drains drains too.
            if (this.#draining) this.#post(slot, { t: 'drain', seq: 0 });
            return ok();
          case 'failed':
            if (!slot.listening) fail(new GatewayListenError(m.code, m.message));
            else this.#o.log(`gateway: worker ${index}: ${m.message}`);
            return;
          case 'reply': {
            const resolve = slot.pending.get(m.seq);
            slot.pending.delete(m.seq);
            resolve?.(m.value);
            return;
          }
          case 'cache-set':
          case 'upstream-failed':
          case 'upstream-closed':
            for (const other of this.#slots) if (other !== slot) this.#post(other, m);
            return;
          case 'usage-push':
            return this.#o.onUsage(m.rows);
          case 'log':
            return this.#o.log(m.line);
          case 'redis':
            return this.#o.onRedis?.(index, m.part, m.down, m.reason);
          case 'access':
            return this.#o.onAccess(m.obj, m.msg);
          case 'state':
            slot.state = m;
            return;
          case 'ask': {
            this.#o.health().catch(() => false).then((value) => {
              this.#post(slot, { t: 'answer', seq: m.seq, value });
            });
            return;
          }
        }
      });
      worker.on('error', (err: Error) => {
        this.#o.log(`gateway: worker ${index} failed: ${err.stack ?? err.message}`);
      });
      worker.on('exit', (code) => {
        slot.exited = true;
        for (const resolve of slot.pending.values()) resolve(undefined);
        slot.pending.clear();
        if (!slot.listening) {
          fail(new GatewayListenError(undefined, `gateway worker ${index} exited with code ${code} before it listened`));
          return;
        }
        if (this.#stopping || this.#slots[index] !== slot) return;
        this.#o.onExit(index);
        // Serving must not silently shrink: a worker that died is replaced at once.
        this.restarts++;
        this.#o.log(`gateway: worker ${index} exited with code ${code}; starting it again`);
        this.#spawn(index).catch((err: unknown) => this.#o.log(`gateway: worker ${index} could not start again: ${(err as Error).message}`));
      });
    });
  }

  #post(slot: Slot, m: ToWorker): void {
    try {
      slot.worker.postMessage(m);
    } catch { /* exited: its 'exit' handler answers what waits on it */ }
  }

  /** Sends `make(seq)` to every worker and resolves with their answers (undefined from one that died). */
  #askAll<T>(make: (seq: number, index: number) => ToWorker): Promise<Array<T | undefined>> {
    return Promise.all(this.#slots.map((slot) => new Promise<T | undefined>((resolve) => {
      if (slot.exited) return resolve(undefined);
      const seq = ++this.#seq;
      slot.pending.set(seq, resolve as (v: unknown) => void);
      this.#post(slot, make(seq, slot.index));
    })));
  }

  /** Resolves once every worker applied the rows. */
  async endpoints(rows: EndpointWire[]): Promise<void> {
    await this.#askAll((seq) => ({ t: 'endpoints', seq, rows }));
  }

  chain(views: Array<[number, { head: number; finalized: number }]>): void {
    for (const s of this.#slots) this.#post(s, { t: 'chain', views });
  }

  /** Live instances of the fleet, for the workers' share of each RPS limit while Redis is away. */
  instances(live: number): void {
    this.#liveInstances = live;
    for (const s of this.#slots) this.#post(s, { t: 'instances', live });
  }

  probed(envs: Array<[number, ProbedWire[]]>): void {
    for (const s of this.#slots) this.#post(s, { t: 'probed', envs });
  }

  /** A config reload: resolves once every worker applied it. */
  async reload(config: Config, networks: Network[], plans: CatalogPlan[]): Promise<void> {
    await this.#askAll((seq) => ({ t: 'reload', seq, config, networks, plans }));
  }

  /** Every worker answers `/ready` with 503 from now on (and keeps serving). */
  async drain(): Promise<void> {
    this.#draining = true;
    await this.#askAll((seq) => ({ t: 'drain', seq }));
  }

  /** Takes every worker's usage counted so far (to `onUsage`). */
  async collectUsage(): Promise<void> {
    for (const rows of await this.#askAll<UsageWire[]>((seq) => ({ t: 'usage', seq }))) if (rows) this.#o.onUsage(rows);
  }

  async metrics(): Promise<unknown[][]> {
    return (await this.#askAll<unknown[]>((seq) => ({ t: 'metrics', seq }))).filter((m): m is unknown[] => Array.isArray(m));
  }

  async cacheDrop(envId: number, height: number): Promise<number> {
    return (await this.#askAll<number>((seq) => ({ t: 'cache-drop', seq, envId, height }))).reduce<number>((a, b) => a + (b ?? 0), 0);
  }

  async cacheAnchors(envId: number): Promise<Array<[number, string]>> {
    const byHeight = new Map<number, string>();
    for (const list of await this.#askAll<Array<[number, string]>>((seq) => ({ t: 'cache-anchors', seq, envId }))) {
      for (const [h, hash] of list ?? []) byHeight.set(h, hash);
    }
    return [...byHeight].sort((a, b) => b[0] - a[0]);
  }

  /** Each worker's entry for `key`. */
  async cacheGet(key: string): Promise<Array<string | undefined>> {
    return this.#askAll<string | undefined>((seq) => ({ t: 'cache-get', seq, key }));
  }

  /** Each worker's part of an endpoint's request log, in worker order (undefined: none kept, or the worker died); `after[i]` is worker i's cursor. */
  async requestLog(query: Omit<CallQuery, 'after'>, after: number[]): Promise<Array<{ seq: number; calls: CallWire[] } | undefined>> {
    return this.#askAll((seq, index) => ({ t: 'request-log', seq, query: { ...query, after: after[index] ?? 0 } }));
  }

  /** Client WebSocket subscriptions over all workers, as last reported. */
  get subscriptions(): number {
    return this.#slots.reduce((n, s) => n + (s.state?.subscriptions ?? 0), 0);
  }

  /** Each worker's view of its upstreams, as last reported. */
  upstreamViews(): Array<Map<number, UpstreamSnapshot[]>> {
    return this.#slots.map((s) => new Map(s.state?.upstreams ?? []));
  }

  cacheStats(): CacheStats | undefined {
    let total: CacheStats | undefined;
    for (const s of this.#slots) {
      const c = s.state?.cache;
      if (!c) continue;
      total ??= { hits: 0, misses: 0, entries: 0, bytes: 0, dropped: 0 };
      total.hits += c.hits;
      total.misses += c.misses;
      total.entries += c.entries;
      total.bytes += c.bytes;
      total.dropped += c.dropped;
    }
    return total;
  }

  async closeSockets(): Promise<void> {
    await this.#askAll((seq) => ({ t: 'close-sockets', seq }));
  }

  /** Test hook: ends a worker as a crash would; it is started again. */
  async kill(index: number): Promise<void> {
    await this.#slots[index]?.worker.terminate();
  }

  /** Stops accepting, lets in-flight requests finish, takes the last usage counts, ends the threads. */
  async stop(): Promise<void> {
    this.#stopping = true;
    let timer: NodeJS.Timeout | undefined;
    // A worker finishes its in-flight requests within 5 s (then drops them): one that does not
    // answer by then is stuck, and ended.
    const finals = await Promise.race([
      this.#askAll<UsageWire[]>((seq) => ({ t: 'stop', seq })),
      new Promise<undefined[]>((resolve) => { timer = setTimeout(() => resolve([]), 10_000); }),
    ]);
    clearTimeout(timer);
    for (const rows of finals) if (rows) this.#o.onUsage(rows);
    // Every answer is in: what is left of a thread holds nothing worth waiting for.
    await Promise.all(this.#slots.map((s) => s.worker.terminate()));
    await this.#claim?.release();
    this.#claim = undefined;
  }
}
