import type { Kysely } from 'kysely';
import type { Config } from '../config/index.js';
import type { Database, Store, WatchedAddressRow } from '../store/index.js';
import type { AmlProvider } from './aml/types.js';
import { OrderChangedError, type OrderRow } from './orders.js';

/** What the engine tells the in-memory watch registry after a commit. */
export interface WatchSync {
  added(row: WatchedAddressRow): void;
  removed(row: WatchedAddressRow): void;
}

/** What every job of the engine (funding.ts, reorgs.ts, expiry.ts, holds.ts, sightings.ts, screening.ts) works with. */
export interface EngineDeps {
  store: Store;
  config: Config;
  aml: AmlProvider;
  watches: WatchSync;
  log: (line: string) => void;
  /** Deliveries were written: the webhook service sends them now. */
  onDeliveries(): void;
  /** Wakes the engine's sleeping loops (screening after an order reached `aml_check`). */
  kick(): void;
  /** How long a screening claim holds a job. */
  amlLeaseMs: number;
}

/** Statuses still waiting for (more) funds. */
export const ACTIVE: readonly string[] = ['pending', 'seen', 'underpaid'];

export async function orderOf(db: Kysely<Database>, id: number): Promise<OrderRow | undefined> {
  return db.selectFrom('payment_orders').selectAll().where('id', '=', id).executeTakeFirst();
}

/** What counts toward the order: its asset, still on the chain. */
export async function totalOf(db: Kysely<Database>, orderPk: number): Promise<bigint> {
  const rows = await db.selectFrom('payment_funding').select('amount_raw').where('order_pk', '=', orderPk)
    .where('counted', '=', 1).where('removed', '=', 0).execute();
  return rows.reduce((sum, r) => sum + BigInt(r.amount_raw), 0n);
}

/** A lost compare-and-set (another process moved the order) is retried on the next pass. */
export async function guard(fn: () => Promise<number>): Promise<number> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof OrderChangedError) return 0;
    throw err;
  }
}
