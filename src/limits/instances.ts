import type { Kysely } from 'kysely';
import type { Database } from '../store/tables.js';
import type { Supervisor } from '../runtime/supervisor.js';

export interface LiveInstancesOptions {
  db: Kysely<Database>;
  instanceId: string;
  /** How long after its last heartbeat an instance still counts as alive. */
  liveForMs?: number;
  /** Called when the number of live instances changes. */
  onChange?: (live: number) => void;
}

/** Heartbeat every this often (the supervisor's `heartbeat` task). */
export const HEARTBEAT_MS = 1000;
/** Three missed heartbeats and an instance no longer counts: a stopped one frees its share within seconds. */
const LIVE_FOR_MS = 3 * HEARTBEAT_MS + 500;
/** Rows of instances gone this long are deleted by whichever instance beats. */
const FORGET_AFTER_MS = 10 * 60_000;

/**
 * How many instances of the fleet are alive, from a heartbeat row each writes in the store.
 * While Redis cannot count for the fleet, each instance enforces limit / live instances, so
 * the fleet admits about the plan's limit instead of N times it. Clocks are compared across
 * instances: they must agree within a second or so, as the shared windows already require.
 */
export class LiveInstances {
  readonly #o: LiveInstancesOptions;
  readonly #liveForMs: number;
  /** This instance alone until the store says otherwise: never a share larger than the limit. */
  #live = 1;

  constructor(o: LiveInstancesOptions) {
    this.#o = o;
    this.#liveForMs = o.liveForMs ?? LIVE_FOR_MS;
  }

  get live(): number {
    return this.#live;
  }

  /** Records this instance's heartbeat and counts the live ones (itself always included). */
  async beat(now = Date.now()): Promise<number> {
    const { db, instanceId } = this.#o;
    await db.insertInto('instance_heartbeats').values({ instance_id: instanceId, seen_at: now })
      .onConflict((oc) => oc.column('instance_id').doUpdateSet({ seen_at: now })).execute();
    await db.deleteFrom('instance_heartbeats').where('seen_at', '<', now - FORGET_AFTER_MS).execute();
    const row = await db.selectFrom('instance_heartbeats').select((eb) => eb.fn.countAll<number>().as('n'))
      .where('seen_at', '>', now - this.#liveForMs).where('instance_id', '!=', instanceId).executeTakeFirst();
    const live = 1 + Number(row?.n ?? 0);
    if (live !== this.#live) {
      this.#live = live;
      this.#o.onChange?.(live);
    }
    return live;
  }

  /** A clean stop: the others stop counting this instance at once rather than seconds later. */
  async leave(): Promise<void> {
    await this.#o.db.deleteFrom('instance_heartbeats').where('instance_id', '=', this.#o.instanceId).execute();
  }
}

/** One instance's part of a fleet-wide limit: at least 1, so nothing is refused outright. */
export function shareOf(limit: number, live: number): number {
  return live <= 1 ? limit : Math.max(1, Math.floor(limit / live));
}

/**
 * Multi-instance mode with Redis: the `heartbeat` task keeps this instance's row and the live
 * count fresh, and hands the count to the API's limits (this thread) and the gateway workers'
 * RPS windows (theirs; they never touch the store). Returns what a clean stop calls.
 */
export function shareLimitsByHeartbeat(o: {
  supervisor: Supervisor; db: Kysely<Database>; instanceId: string;
  /** RedisLimits, named by the one field set here: redis.ts imports this file for shareOf. */
  limits: { liveInstances: number };
  workers: { instances(live: number): void };
}): () => Promise<void> {
  const live = new LiveInstances({
    db: o.db, instanceId: o.instanceId,
    onChange: (n) => {
      o.limits.liveInstances = n;
      o.workers.instances(n);
    },
  });
  o.supervisor.every('heartbeat', HEARTBEAT_MS, async () => { await live.beat(); });
  return async () => {
    await o.supervisor.cancel('heartbeat');
    await live.leave();
  };
}
