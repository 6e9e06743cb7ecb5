import { readFileSync } from 'node:fs';
import type { Supervisor } from '../runtime/supervisor.js';
import type { Config } from '../config/index.js';
import type { Store } from '../store/index.js';
import type { AddressWatch } from '../watch/service.js';
import type { Webhooks } from '../webhooks/service.js';
import { CHANNELS } from '../store/index.js';
import { DEV_SANCTIONS_LIST } from './aml/dev-list.js';
import { HttpAmlProvider } from './aml/http.js';
import { NoAmlProvider, parseSanctionsList, SanctionsFileError, replaceSanctions, sanctionsCount, SanctionsListProvider } from './aml/sanctions.js';
import type { AmlProvider } from './aml/types.js';
import { PaymentEngine } from './engine.js';
import { rateSourceFor, type RateSource } from './rates.js';

export interface PaymentsOptions {
  store: Store;
  config: Config;
  log: (line: string) => void;
  addressWatch: AddressWatch;
  /** The running webhook service: woken when transitions wrote deliveries. */
  webhooks: Pick<Webhooks, 'kick'>;
  env?: NodeJS.ProcessEnv;
  /** Runs the engine's loops (one of its own when none is given). */
  supervisor?: Supervisor;
}

export interface Payments {
  engine: PaymentEngine;
  /** Where fiat-priced orders get their rate (`payments.rates`). */
  rates: RateSource;
  stop(): Promise<void>;
}

/** The provider `payments.aml` names. */
export function amlProviderFor(store: Store, config: Config, env: NodeJS.ProcessEnv = process.env): AmlProvider {
  const aml = config.payments.aml;
  if (aml.provider === 'none') return new NoAmlProvider();
  if (aml.provider === 'sanctions-list') return new SanctionsListProvider(store.db);
  const http = aml.http!;
  const apiKey = http.api_key ?? (http.api_key_env ? env[http.api_key_env] : undefined);
  if (!apiKey) throw new Error(`payments.aml.http: no API key (set api_key, or api_key_env naming a variable that holds it)`);
  return new HttpAmlProvider({
    preset: http.preset, apiKey, timeoutMs: http.timeout_ms, chains: http.chains, reportUrlTemplate: http.report_url_template ?? null,
    baseUrl: http.base_url ?? (http.preset === 'chainalysis' ? 'https://api.chainalysis.com' : 'https://api.trmlabs.com'),
  });
}

function readSanctionsFile(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    const reason = (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message;
    throw new SanctionsFileError(`payments.aml.sanctions_file: cannot read ${file}: ${reason}`);
  }
}

/** The sanctions list at start: the configured file (reloaded each start), else the dev list on an empty store. */
async function loadSanctions(store: Store, config: Config, log: (line: string) => void): Promise<void> {
  const aml = config.payments.aml;
  if (aml.provider !== 'sanctions-list') return;
  if (aml.sanctions_file) {
    const n = await replaceSanctions(store.db, parseSanctionsList(readSanctionsFile(aml.sanctions_file), aml.sanctions_file), aml.sanctions_file);
    log(`payments: sanctions list: ${n} addresses from ${aml.sanctions_file}`);
  } else if ((await sanctionsCount(store.db)) === 0) {
    await replaceSanctions(store.db, parseSanctionsList(DEV_SANCTIONS_LIST), 'rpcctl-dev-list');
    log('payments: sanctions list: the shipped development list (load the real one: rpcctl admin aml load SDN_ADVANCED.XML)');
  }
}

/** Payment orders on top of Address Watch: the engine and its screening queue (routes and pages: feature.ts). */
export async function startPayments(o: PaymentsOptions): Promise<Payments> {
  await loadSanctions(o.store, o.config, o.log);
  const watch = o.addressWatch;
  const engine = new PaymentEngine({
    store: o.store, config: o.config, log: o.log, aml: amlProviderFor(o.store, o.config, o.env), tickMs: o.config.payments.tick_ms,
    // Every provider call is bounded by its timeout; a claim outlives that by a margin, so a
    // process killed mid-screening holds the job only briefly.
    amlLeaseMs: (o.config.payments.aml.http?.timeout_ms ?? 10_000) * 2 + 2000,
    watches: { added: (row) => void watch.watchAdded(row), removed: (row) => watch.watchRemoved(row) },
    registry: watch.registry,
    leaseOf: (envId) => watch.leaseOf(envId),
    onDeliveries: () => o.webhooks.kick(),
    supervisor: o.supervisor,
  });
  const rates = rateSourceFor(o.store.db, o.config.payments.rates, o.env ?? process.env, o.log);
  engine.start();
  // Recorded events reach the engine by a call: this instance's scanners tell it, and those of
  // the others through the store's notifications (PostgreSQL; SQLite is one instance). The
  // poll (`payments.tick_ms`) is the safety net for a notification lost with its connection.
  const unhook = watch.onRecorded(() => engine.kick());
  const unlisten = o.store.notifications.on(CHANNELS.events, () => engine.kick(), () => engine.kick());
  return {
    engine, rates,
    stop: async () => {
      unhook();
      unlisten();
      await engine.stop();
    },
  };
}
