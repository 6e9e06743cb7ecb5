import type { Config } from '../config/index.js';
import type { RouteDef } from '../api/router.js';
import type { Environment, Store } from '../store/index.js';
import { addressWatchRoutes } from '../api/routes/address-watch.js';
import { blockSubscribers } from '../webhooks/config.js';
import { blockNetworkEnvIds } from '../webhooks/filters.js';
import { DeliveryWorker, type DeliveryWorkerOptions } from '../webhooks/worker.js';
import { EvmChain } from './evm-chain.js';
import { Scanner, type ChainAdapter } from './scanner.js';
import { TronChain } from './tron/chain.js';
import { UtxoChain } from './utxo/chain.js';
import { StellarChain } from './stellar-chain.js';
import { WatchRegistry } from './registry.js';
import { allWatches } from './watches.js';

export interface AddressWatchOptions {
  store: Store;
  config: Config;
  log: (line: string) => void;
  /** Head polling interval of the scanners (default 500 ms). */
  pollMs?: number;
  delivery?: Partial<Omit<DeliveryWorkerOptions, 'store' | 'config' | 'log'>>;
}

/**
 * Address Watch in one object: the in-memory watch sets, a scanner per watched environment,
 * the delivery worker, and the API routes that change them.
 */
export class AddressWatch {
  readonly registry = new WatchRegistry();
  readonly worker: DeliveryWorker;
  readonly routes: RouteDef[];
  readonly #o: AddressWatchOptions;
  readonly #scanners = new Map<number, Scanner>();
  #reconciling: Promise<void> = Promise.resolve();
  #again = false;
  #stopped = false;
  #stopping: Promise<void> | undefined;
  #unsubscribe: () => void = () => {};

  constructor(o: AddressWatchOptions) {
    this.#o = o;
    this.worker = new DeliveryWorker({ store: o.store, config: o.config, log: o.log, ...o.delivery });
    this.routes = addressWatchRoutes(this);
  }

  async start(): Promise<void> {
    this.registry.load(await allWatches(this.#o.store));
    this.#unsubscribe = this.registry.onChange(() => void this.reconcile());
    this.worker.start();
    await this.reconcile();
  }

  /** Brings the running scanners in line with what is watched; calls never overlap. */
  reconcile(): Promise<void> {
    if (this.#stopped) return Promise.resolve();
    this.#again = true;
    this.#reconciling = this.#reconciling.then(async () => {
      while (this.#again && !this.#stopped) {
        this.#again = false;
        await this.#reconcileOnce().catch((err: unknown) => this.#o.log(`watch: reconcile failed: ${(err as Error).message}`));
      }
    });
    return this.#reconciling;
  }

  async #reconcileOnce(): Promise<void> {
    const { store } = this.#o;
    const wanted = new Set(this.registry.watchedEnvIds());
    for (const sub of await blockSubscribers(store.db)) for (const id of blockNetworkEnvIds(store.catalog, sub.filters)) wanted.add(id);
    for (const [envId, scanner] of this.#scanners) {
      if (wanted.has(envId)) continue;
      this.#scanners.delete(envId);
      await scanner.stop();
      // Nothing is watched there any more: a later watch starts at the head, not at a stale
      // cursor, and its parent-hash check must not compare against hashes kept from before
      // (after a chain reset they would all differ and trigger a false rewind).
      await store.db.transaction().execute(async (trx) => {
        await trx.deleteFrom('scanner_cursors').where('network_environment_id', '=', envId).execute();
        await trx.deleteFrom('scanner_blocks').where('network_environment_id', '=', envId).execute();
      });
    }
    const starting: Promise<void>[] = [];
    for (const envId of wanted) {
      if (this.#scanners.has(envId) || this.#stopped) continue;
      const env = store.catalog.environment(envId);
      if (!env || env.upstreams.length === 0) continue;
      const chain = chainFor(env);
      const scanner = new Scanner({
        store, registry: this.registry, env, chain, log: this.#o.log, pollMs: this.#o.pollMs ?? 500,
        onRecorded: () => this.worker.kick(),
      });
      this.#scanners.set(envId, scanner);
      starting.push(scanner.start());
    }
    // A new watch takes effect from the block after the head at the time of the add; a slow
    // upstream may not hold up the API for long, though.
    if (starting.length) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([Promise.all(starting), new Promise((r) => { timer = setTimeout(r, 3000); })]);
      clearTimeout(timer);
    }
  }

  scannedEnvIds(): number[] {
    return [...this.#scanners.keys()];
  }

  /** Scanners finish the block in hand, the worker the deliveries in flight. */
  stop(): Promise<void> {
    this.#stopping ??= (async () => {
      this.#stopped = true;
      this.#unsubscribe();
      await this.#reconciling;
      await Promise.all([...this.#scanners.values()].map((s) => s.stop()));
      this.#scanners.clear();
      await this.worker.stop();
    })();
    return this.#stopping;
  }
}

function chainFor(env: Environment): ChainAdapter {
  switch (env.network.family) {
    case 'stellar': return new StellarChain(env.upstreams);
    case 'utxo': return new UtxoChain(env.upstreams);
    case 'tron': return new TronChain(env.upstreams);
    default: return new EvmChain(env.upstreams);
  }
}

export async function startAddressWatch(o: AddressWatchOptions): Promise<AddressWatch> {
  const w = new AddressWatch(o);
  await w.start();
  return w;
}
