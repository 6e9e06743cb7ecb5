import type { Config } from '../config/index.js';
import { pruneAudit, type Store } from '../store/index.js';
import { Supervisor } from '../runtime/supervisor.js';
import { pruneEvents } from '../watch/events.js';
import { pruneDeliveries } from '../webhooks/deliveries.js';

/** The job's name under the supervisor. */
export const RETENTION_TASK = 'retention';

export interface RetentionPolicy {
  /** Address Watch events older than this are deleted; 0 keeps them for ever. */
  eventsDays: number;
  /** Finished webhook deliveries (delivered, failed, cancelled) and their attempts; 0 keeps them. */
  deliveriesDays: number;
  /** Audit log entries; 0 keeps them. */
  auditDays: number;
  batchSize: number;
}

export function retentionPolicy(config: Config): RetentionPolicy {
  const r = config.retention;
  return { eventsDays: r.events_days, deliveriesDays: r.deliveries_days, auditDays: r.audit_days, batchSize: r.batch_size };
}

export interface PruneResult { events: number; deliveries: number; attempts: number; audit: number }

const DAY_MS = 86_400_000;
/** Batches per run: a backlog is worked off over several runs, never in one long burst. */
const MAX_BATCHES_PER_RUN = 20;

/**
 * Deletes what is past its retention through each table's owner (watch/ its events, webhooks/
 * their deliveries, store/ the audit log), in small batches of one short transaction each, with a
 * turn of the event loop between them: the gateway and the API keep being answered while it
 * runs. Pending deliveries are never deleted, however old.
 */
export async function pruneOnce(store: Store, policy: RetentionPolicy, nowMs = Date.now()): Promise<PruneResult> {
  const result: PruneResult = { events: 0, deliveries: 0, attempts: 0, audit: 0 };
  for (let batch = 0; batch < MAX_BATCHES_PER_RUN; batch++) {
    const [events, deliveries, audit] = await Promise.all([
      policy.eventsDays > 0 ? pruneEvents(store.db, new Date(nowMs - policy.eventsDays * DAY_MS).toISOString(), policy.batchSize) : 0,
      policy.deliveriesDays > 0 ? pruneDeliveries(store.db, new Date(nowMs - policy.deliveriesDays * DAY_MS).toISOString(), policy.batchSize) : { deliveries: 0, attempts: 0 },
      policy.auditDays > 0 ? pruneAudit(store, new Date(nowMs - policy.auditDays * DAY_MS).toISOString(), policy.batchSize) : 0,
    ]);
    result.events += events;
    result.deliveries += deliveries.deliveries;
    result.attempts += deliveries.attempts;
    result.audit += audit;
    if (events < policy.batchSize && deliveries.deliveries < policy.batchSize && audit < policy.batchSize) break;
    await new Promise((r) => setImmediate(r));
  }
  return result;
}

/** Runs pruneOnce every `intervalMs` in the background; stop() waits for a run in progress. */
export class RetentionJob {
  readonly #store: Store;
  readonly #policy: RetentionPolicy;
  readonly #log: (line: string) => void;
  readonly #supervisor: Supervisor;

  constructor(store: Store, policy: RetentionPolicy, log: (line: string) => void, supervisor: Supervisor = new Supervisor({ log })) {
    this.#store = store;
    this.#policy = policy;
    this.#log = log;
    this.#supervisor = supervisor;
  }

  /** Runs every `intervalMs`, the first time soon after start; a failed run is retried with back-off. */
  start(intervalMs: number): void {
    this.#supervisor.every(RETENTION_TASK, intervalMs, () => this.#prune(), { firstAfterMs: Math.min(intervalMs, 5000) });
  }

  /** One run by hand; a failure is logged and counted, never thrown. */
  async run(): Promise<void> {
    await this.#supervisor.run(RETENTION_TASK, () => this.#prune());
  }

  async #prune(): Promise<void> {
    const r = await pruneOnce(this.#store, this.#policy);
    if (r.events + r.deliveries + r.audit > 0) this.#log(`retention: deleted ${r.events} events, ${r.deliveries} deliveries, ${r.attempts} attempts, ${r.audit} audit entries`);
  }

  async stop(): Promise<void> {
    await this.#supervisor.cancel(RETENTION_TASK);
  }
}
