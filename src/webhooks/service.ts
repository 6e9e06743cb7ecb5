import type { Config } from '../config/index.js';
import type { Store } from '../store/index.js';
import { Supervisor } from '../runtime/supervisor.js';
import { DeliveryWorker, type DeliveryWorkerOptions } from './worker.js';
import type { WatchFacts } from './watch-facts.js';

export interface WebhooksOptions {
  store: Store;
  config: Config;
  log: (line: string) => void;
  /** What webhooks need of Address Watch (serve/ hands watch/'s answers in). */
  watch: WatchFacts;
  /** Delivery worker tuning (poll interval, concurrency, schedule, the attempt counter). */
  delivery?: Partial<Omit<DeliveryWorkerOptions, 'store' | 'config' | 'log' | 'supervisor' | 'watch'>>;
  /** Runs the claim loop (one of its own when none is given). */
  supervisor?: Supervisor;
}

/** Webhook delivery as a running part: serve/ starts it before Address Watch and payments and hands it to them. */
export interface Webhooks {
  readonly worker: DeliveryWorker;
  readonly watch: WatchFacts;
  /** Deliveries were written: send them now rather than at the next poll. */
  kick(): void;
  /** Waits for the deliveries in flight. */
  stop(): Promise<void>;
}

/** Builds and starts the delivery worker. */
export function startWebhooks(o: WebhooksOptions): Webhooks {
  const supervisor = o.supervisor ?? new Supervisor({ log: o.log });
  const worker = new DeliveryWorker({ store: o.store, config: o.config, log: o.log, ...o.delivery, watch: o.watch, supervisor });
  worker.start();
  return { worker, watch: o.watch, kick: () => worker.kick(), stop: () => worker.stop() };
}
