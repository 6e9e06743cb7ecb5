import type { Environment, Store } from '../store/index.js';
import type { UpstreamDirectory } from './upstreams.js';

interface ProbeResult { version: string | null; blockHeight: number | null }

/**
 * Fills endpoints' `version` and `block_height` from their environment's node: one probe per
 * environment in use, not per endpoint.
 */
export class NodeProbe {
  readonly #store: Store;
  readonly #upstreams: UpstreamDirectory;
  readonly #log: (line: string) => void;
  #timer: NodeJS.Timeout | undefined;
  #first: NodeJS.Immediate | undefined;
  #running: Promise<void> | undefined;
  /** Shutdown cancels probes in flight instead of waiting out an upstream's timeout. */
  readonly #abort = new AbortController();

  constructor(store: Store, upstreams: UpstreamDirectory, log: (line: string) => void = () => {}) {
    this.#store = store;
    this.#upstreams = upstreams;
    this.#log = log;
  }

  start(intervalMs: number): void {
    const tick = () => {
      this.#running ??= this.probeAll().finally(() => { this.#running = undefined; });
    };
    this.#first = setImmediate(tick);
    this.#timer = setInterval(tick, intervalMs);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    // A service that fails to start (its port is taken) stops in the same tick it started:
    // the first probe must not run against the store it closes.
    clearImmediate(this.#first);
    clearInterval(this.#timer);
    this.#abort.abort();
    await this.#running;
  }

  async probeAll(): Promise<void> {
    if (this.#abort.signal.aborted) return;
    const rows = await this.#store.db.selectFrom('endpoints').select('network_environment_id').distinct().execute();
    await Promise.all(rows.map(async ({ network_environment_id: envId }) => {
      const env = this.#store.catalog.environment(envId);
      if (!env || env.upstreams.length === 0) return;
      try {
        const result = await this.probe(env);
        await this.#store.db.updateTable('endpoints')
          .set({ version: result.version, block_height: result.blockHeight })
          .where('network_environment_id', '=', envId)
          .execute();
      } catch (err) {
        if (this.#abort.signal.aborted) return;
        this.#log(`gateway: probe of ${env.network.slug}-${env.slug} failed: ${(err as Error).message}`);
      }
    }));
  }

  async probe(env: Environment): Promise<ProbeResult> {
    const set = this.#upstreams.for(env.id, env.upstreams);
    if (env.network.family === 'stellar') {
      const res = await set.send({ method: 'GET', path: '/', body: undefined, contentType: undefined, signal: this.#abort.signal });
      const root = JSON.parse(await res.body.text()) as { horizon_version?: string; core_version?: string; history_latest_ledger?: number };
      return { version: root.horizon_version ?? root.core_version ?? null, blockHeight: root.history_latest_ledger ?? null };
    }
    if (env.network.family === 'tron') {
      const res = await set.send({ method: 'POST', path: '/wallet/getnowblock', body: Buffer.from('{}'), contentType: 'application/json' });
      const block = JSON.parse(await res.body.text()) as { block_header?: { raw_data?: { number?: number } } };
      return { version: null, blockHeight: block.block_header?.raw_data?.number ?? null };
    }
    if (env.network.family === 'utxo') {
      const res = await set.send({ method: 'POST', path: '', body: Buffer.from(JSON.stringify([
        { jsonrpc: '1.0', id: 1, method: 'getnetworkinfo', params: [] },
        { jsonrpc: '1.0', id: 2, method: 'getblockcount', params: [] },
      ])), contentType: 'application/json' });
      const answers = JSON.parse(await res.body.text()) as Array<{ id: number; result?: { subversion?: string } | number }>;
      if (!Array.isArray(answers)) throw new Error('upstream did not answer the batch with an array');
      const info = answers.find((a) => a.id === 1)?.result;
      const height = answers.find((a) => a.id === 2)?.result;
      return { version: typeof info === 'object' ? info.subversion ?? null : null, blockHeight: typeof height === 'number' ? height : null };
    }
    const body = Buffer.from(JSON.stringify([
      { jsonrpc: '2.0', id: 1, method: 'web3_clientVersion', params: [] },
      { jsonrpc: '2.0', id: 2, method: 'eth_blockNumber', params: [] },
    ]));
    const res = await set.send({ method: 'POST', path: '', body, contentType: 'application/json', signal: this.#abort.signal });
    const answers = JSON.parse(await res.body.text()) as Array<{ id: number; result?: unknown }>;
    if (!Array.isArray(answers)) throw new Error('upstream did not answer the batch with an array');
    const version = answers.find((a) => a.id === 1)?.result;
    const height = answers.find((a) => a.id === 2)?.result;
    return {
      version: typeof version === 'string' ? version : null,
      blockHeight: typeof height === 'string' && /^0x[0-9a-f]+$/i.test(height) ? Number.parseInt(height, 16) : null,
    };
  }
}
