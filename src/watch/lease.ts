import type { Kysely } from 'kysely';
import { lockFor, type Database } from '../store/index.js';
import { RpcctlError } from '../util/errors.js';

/** How long a scanner's claim on an environment lasts without renewal; a dead instance's is taken over after it. */
export const SCANNER_LEASE_MS = 5000;

export interface ScannerLease {
  owner: string;
  generation: number;
}

/** The scanner no longer holds its environment: another instance took it over. */
export class LeaseLostError extends RpcctlError {
  readonly code = 'E_LEASE_LOST';
}

/**
 * Takes or renews the environment's lease for `owner`. A free or expired lease is taken with
 * the next generation; a live one of another owner is left alone (undefined).
 */
export async function acquireLease(db: Kysely<Database>, envId: number, owner: string, ttlMs = SCANNER_LEASE_MS): Promise<ScannerLease | undefined> {
  return db.transaction().execute(async (trx) => {
    await lockFor(trx, `scanner:${envId}`);
    const now = Date.now();
    const row = await trx.selectFrom('scanner_leases').selectAll().where('network_environment_id', '=', envId).executeTakeFirst();
    if (!row) {
      await trx.insertInto('scanner_leases').values({ network_environment_id: envId, owner, generation: 1, expires_at: now + ttlMs }).execute();
      return { owner, generation: 1 };
    }
    if (row.owner !== owner && row.expires_at > now) return undefined;
    const generation = row.owner === owner ? row.generation : row.generation + 1;
    await trx.updateTable('scanner_leases').set({ owner, generation, expires_at: now + ttlMs })
      .where('network_environment_id', '=', envId).where('generation', '=', row.generation).execute();
    return { owner, generation };
  });
}

/**
 * The fence: inside a transaction that writes the cursor or events, renews the lease only if
 * it is still ours at our generation, else throws (and the transaction rolls back). A scanner
 * that stalled past its lease can therefore never write over its successor.
 */
export async function fence(trx: Kysely<Database>, envId: number, lease: ScannerLease, ttlMs = SCANNER_LEASE_MS): Promise<void> {
  const res = await trx.updateTable('scanner_leases').set({ expires_at: Date.now() + ttlMs })
    .where('network_environment_id', '=', envId).where('owner', '=', lease.owner).where('generation', '=', lease.generation)
    .executeTakeFirst();
  if (Number(res.numUpdatedRows) !== 1) throw new LeaseLostError(`the scanner lease of environment ${envId} moved to another instance`);
}

/** Gives the environment up at once (a clean stop), so another instance need not wait for expiry. */
export async function releaseLease(db: Kysely<Database>, envId: number, lease: ScannerLease): Promise<void> {
  await db.updateTable('scanner_leases').set({ expires_at: 0 })
    .where('network_environment_id', '=', envId).where('owner', '=', lease.owner).where('generation', '=', lease.generation).execute();
}
