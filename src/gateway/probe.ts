import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { announceChange, environmentsInUse, recordProbe, type Environment, type Store } from '../store/index.js';
import { firstChangedHeight, type CacheStats, type ChainView } from './cache.js';
import { UpstreamError, type Upstream, type UpstreamDirectory, type UpstreamSet } from './upstreams/index.js';
import type { UpstreamSnapshot } from './health.js';
import { traitsOf } from '../chains/traits.js';
import type { HeadProbe, ProbeReading, ProbeRequest } from '../chains/gateway.js';
import { Supervisor } from '../runtime/supervisor.js';

interface ProbeResult { version: string | null; blockHeight: number | null }

/** The file `rpcctl admin upstreams` reads: the serving process's view of its upstreams. */
export const UPSTREAM_STATE_FILE = 'gateway-upstreams.json';

export interface UpstreamStateFile {
  written_at: string;
  pid: number;
  environments: Array<{
    environment_id: number;
    network: string;
    environment: string;
    head: number | null;
    finalized: number | null;
    upstreams: UpstreamSnapshot[];
  }>;
  cache: { hits: number; misses: number; entries: number; bytes: number; dropped: number } | null;
}

/** The probe's name under the supervisor (logs, `rpcctl_background_errors_total{task}`). */
export const PROBE_TASK = 'probe';

/** The response cache as the probe sees it: the gateway workers' caches together. */
export interface ProbeCache {
  dropFrom(envId: number, height: number): number | Promise<number>;
  anchors(envId: number): Array<[height: number, hash: string]> | Promise<Array<[height: number, hash: string]>>;
  snapshot(): CacheStats | undefined;
}

/**
 * Asks every upstream of every environment in use for its version, head and finalized block.
 * This is what keeps selection honest: lag is measured against the best head, an upstream that
 * failed the probe is reached again here (and so recovers without waiting for client traffic;
 * one that failed client calls needs a client call's success, see health.ts), the
 * finalized height bounds the cache, and a changed hash under a cached block drops what it covers.
 */
export class NodeProbe {
  readonly #store: Store;
  readonly #upstreams: UpstreamDirectory;
  readonly #cache: ProbeCache | undefined;
  readonly #views: Map<number, ChainView>;
  readonly #log: (line: string) => void;
  /** After each round: what it learnt goes to the gateway workers. */
  readonly #onRound: (roundEnd: boolean) => void;
  readonly #state: () => Map<number, UpstreamSnapshot[]>;
  /** Runs the rounds: a round that fails (the store away) is logged, counted and retried, never thrown. */
  readonly #supervisor: Supervisor;
  /** Shutdown cancels probes in flight instead of waiting out an upstream's timeout. */
  #abort = new AbortController();
  #stopped = false;
  /** The environments endpoints use, as the store last said: probed on while the store is away. */
  #inUse: number[] = [];

  constructor(store: Store, upstreams: UpstreamDirectory, log: (line: string) => void = () => {},
    chain: { cache?: ProbeCache; views?: Map<number, ChainView>; onRound?: (roundEnd: boolean) => void; state?: () => Map<number, UpstreamSnapshot[]>; supervisor?: Supervisor } = {}) {
    this.#store = store;
    this.#upstreams = upstreams;
    this.#log = log;
    this.#cache = chain.cache;
    this.#views = chain.views ?? new Map();
    this.#onRound = chain.onRound ?? (() => {});
    this.#state = chain.state ?? (() => upstreams.snapshot());
    this.#supervisor = chain.supervisor ?? new Supervisor({ log });
  }

  start(intervalMs: number): void {
    this.#supervisor.every(PROBE_TASK, intervalMs, () => this.#stopped ? undefined : this.probeAll());
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    // A service that fails to start (its port is taken) stops in the same tick it started:
    // the first probe must not run against the store it closes.
    this.#abort.abort();
    await this.#supervisor.cancel(PROBE_TASK);
    // No more rounds of its own; a round asked for by hand afterwards (tests, a one-off check)
    // gets a live signal again.
    this.#abort = new AbortController();
  }

  /**
   * One round. The environments in use come from the store, but the store is not needed to
   * probe them: while it is away the last list known is probed (the workers' health and heads
   * keep moving), only the heights the API shows go unwritten, and the round fails once it is
   * over so the supervisor logs and counts the store's failure.
   */
  async probeAll(): Promise<void> {
    if (this.#abort.signal.aborted) return;
    let storeFailure: unknown;
    try {
      this.#inUse = await environmentsInUse(this.#store);
    } catch (err) {
      storeFailure = err;
    }
    await Promise.all(this.#inUse.map(async (envId) => {
      const env = this.#store.catalog.environment(envId);
      if (!env || env.upstreams.length === 0) return;
      let result: ProbeResult;
      try {
        result = await this.probe(env);
      } catch (err) {
        if (!this.#abort.signal.aborted) this.#log(`gateway: probe of ${env.network.slug}-${env.slug} failed: ${(err as Error).message}`);
        return;
      }
      try {
        await recordProbe(this.#store, envId, result.version, result.blockHeight);
        // The API's cached listings show the heights.
        announceChange(this.#store, 'endpoints');
      } catch (err) {
        storeFailure ??= err;
      }
    }));
    if (this.#abort.signal.aborted) return;
    this.#onRound(true);
    this.#writeState();
    if (storeFailure !== undefined) throw storeFailure;
  }

  async probe(env: Environment): Promise<ProbeResult> {
    const set = this.#upstreams.for(env.id, env.upstreams);
    // Every upstream is asked for its own head (the family's probe): lag is measured against the best.
    const probe = traitsOf(env.network.family).gateway.probe;
    const answers = await Promise.all(set.upstreams.map(async (up) => {
      try {
        let reading: ProbeReading | undefined;
        try {
          reading = await ask(set, up, probe.request, probe.read, this.#abort.signal);
        } catch (err) {
          if (err instanceof UpstreamError || !probe.fallback) throw err; // unreachable: no second try this round
          // Some providers refuse batches: the head alone, asked singly, is what matters.
          reading = await ask(set, up, probe.fallback.request, probe.fallback.read, this.#abort.signal);
        }
        if (reading.unhealthy !== undefined) throw new Error(`upstream says it is unhealthy: ${reading.unhealthy}`);
        up.probed(reading.head);
        return { up, ...reading };
      } catch (err) {
        // sendTo already counted a transport failure; an answer we cannot read is one too. A probe
        // cancelled at shutdown is nobody's failure.
        if (!up.down && !this.#abort.signal.aborted) up.failed((err as Error).message, false);
        return undefined;
      }
    }));
    const best = answers.reduce<(typeof answers)[number]>((b, a) => (a?.head !== undefined && (b?.head === undefined || a.head > b.head) ? a : b), undefined);
    if (!best) throw new Error('no upstream answered');
    for (const up of set.upstreams) up.bestHead = best.head;
    if (best.head !== undefined) await this.#updateView(env, set, best.up, best.head, best.finalized);
    return { version: best.version, blockHeight: best.head ?? null };
  }

  async #updateView(env: Environment, set: UpstreamSet, best: Upstream, head: number, finalizedTag: number | undefined): Promise<void> {
    // The node's own `finalized` where it has one; else the confirmations the operator trusts.
    const finalized = Math.min(head, finalizedTag ?? Math.max(0, head - env.confirmations));
    const before = this.#views.get(env.id);
    const cache = this.#cache;
    if (cache && before && finalized < before.finalized) {
      // Final blocks do not go back on a sound chain; if they did, nothing above is final any more.
      const n = await cache.dropFrom(env.id, finalized + 1);
      this.#log(`gateway: ${env.network.slug}-${env.slug} finalized height went back from ${before.finalized} to ${finalized}; dropped ${n} cached answers`);
    }
    this.#views.set(env.id, { head, finalized });
    // The workers' calls read the view: they get it now, not at the end of the round.
    this.#onRound(false);
    const blockHash = traitsOf(env.network.family).gateway.probe.blockHash;
    if (cache && blockHash) await this.#verifyAnchors(env, set, best, cache, blockHash);
  }

  /**
   * Compares the hashes cached answers came from with the best node's. If the highest still
   * matches, every lower one does (each block commits to its parent); else the highest height
   * that matches is found by bisection and everything above it is dropped.
   */
  async #verifyAnchors(env: Environment, set: UpstreamSet, up: Upstream, cache: ProbeCache, blockHash: NonNullable<HeadProbe['blockHash']>): Promise<void> {
    const anchors = await cache.anchors(env.id);
    if (anchors.length === 0) return;
    const matches = async (i: number): Promise<boolean> => {
      const [height, hash] = anchors[i]!;
      const read = (status: number, text: string) => {
        if (status >= 400) throw new Error(`upstream answered ${status}`);
        return blockHash.read(text);
      };
      return await ask(set, up, blockHash.request(height), read, this.#abort.signal) === hash;
    };
    const from = await firstChangedHeight(anchors, matches);
    if (from === undefined) return;
    const n = await cache.dropFrom(env.id, from);
    this.#log(`gateway: ${env.network.slug}-${env.slug} reorg: dropped ${n} cached answers from block ${from}`);
  }

  #writeState(): void {
    const environments: UpstreamStateFile['environments'] = [];
    for (const [envId, upstreams] of this.#state()) {
      const env = this.#store.catalog.environment(envId);
      const view = this.#views.get(envId);
      environments.push({
        environment_id: envId, network: env?.network.slug ?? '?', environment: env?.slug ?? '?',
        head: view?.head ?? null, finalized: view?.finalized ?? null, upstreams,
      });
    }
    const state: UpstreamStateFile = { written_at: new Date().toISOString(), pid: process.pid, environments, cache: this.#cache?.snapshot() ?? null };
    const file = join(this.#store.dataDir, UPSTREAM_STATE_FILE);
    try {
      // Written whole then renamed: a reader never sees half a file.
      writeFileSync(`${file}.tmp`, JSON.stringify(state), { mode: 0o600 });
      renameSync(`${file}.tmp`, file);
    } catch (err) {
      this.#log(`gateway: cannot write ${file}: ${(err as Error).message}`);
    }
  }
}

async function ask<T>(set: UpstreamSet, up: Upstream, req: ProbeRequest, read: (status: number, text: string) => T, signal: AbortSignal): Promise<T> {
  const res = await set.sendTo(up, {
    method: req.method, path: req.path, body: req.body === undefined ? undefined : Buffer.from(req.body), contentType: req.contentType, signal, probe: true,
  });
  return read(res.status, await res.body.text());
}
