import type { Kysely } from 'kysely';
import type { Store } from './store.js';
import type { Database } from './tables.js';

/**
 * The second-factor columns of a member's row: the TOTP key, the key offered for enrolment (both
 * sealed with the master key, the row's name as associated data), when it was turned on and the
 * last accepted step. The cabinet (cabinet/two-factor.ts) makes keys and matches codes, handing a
 * matcher in; the sealed keys never leave this module, and each change is one conditional UPDATE
 * so two racing requests cannot both pass.
 */

type Column = 'totp_secret' | 'totp_pending';
const aad = (memberId: number, column: Column) => `cabinet_members:${memberId}:${column}`;

/** The step of the time window a code matched, or undefined; given the opened key (base32). */
export type TotpMatcher = (secret: string) => number | undefined;

/**
 * Opens a sealed key of the member's row. Keys sealed before logins became members carry their
 * old row's name (the account's login) and are read with it; they are sealed anew when enrolled again.
 */
async function openKey(store: Store, memberId: number, column: Column, sealed: string): Promise<string> {
  try {
    return store.secrets.open(sealed, aad(memberId, column));
  } catch (err) {
    const row = await store.db.selectFrom('cabinet_members').select('account_id').where('id', '=', memberId).executeTakeFirst();
    if (!row) throw err;
    return store.secrets.open(sealed, `cabinet_logins:${row.account_id}:${column}`);
  }
}

/** Whether the member has a second factor, and since when. */
export async function memberTwoFactor(store: Store, memberId: number): Promise<{ enabled: boolean; enabledAt: string | null }> {
  const row = await store.db.selectFrom('cabinet_members').select(['totp_secret', 'totp_enabled_at']).where('id', '=', memberId).executeTakeFirst();
  return { enabled: Boolean(row?.totp_secret), enabledAt: row?.totp_enabled_at ?? null };
}

/** The key offered for enrolment, `make`'s on first ask and kept (sealed) until confirmed. */
export async function pendingTotpKey(store: Store, memberId: number, make: () => string): Promise<string> {
  const row = await store.db.selectFrom('cabinet_members').select('totp_pending').where('id', '=', memberId).executeTakeFirst();
  if (row?.totp_pending) return openKey(store, memberId, 'totp_pending', row.totp_pending);
  const secret = make();
  await store.db.updateTable('cabinet_members').set({ totp_pending: store.secrets.seal(secret, aad(memberId, 'totp_pending')) })
    .where('id', '=', memberId).execute();
  return secret;
}

/** Makes the pending key the member's key when `match` accepts it; false when there is none, no match, or another confirmation came first. */
export async function confirmPendingTotp(store: Store, memberId: number, match: TotpMatcher, enabledAt: string): Promise<boolean> {
  const row = await store.db.selectFrom('cabinet_members').select('totp_pending').where('id', '=', memberId).executeTakeFirst();
  if (!row?.totp_pending) return false;
  const secret = await openKey(store, memberId, 'totp_pending', row.totp_pending);
  const step = match(secret);
  if (step === undefined) return false;
  const res = await store.db.updateTable('cabinet_members').set({
    totp_secret: store.secrets.seal(secret, aad(memberId, 'totp_secret')), totp_pending: null,
    totp_enabled_at: enabledAt, totp_last_step: step,
  }).where('id', '=', memberId).where('totp_pending', '=', row.totp_pending).executeTakeFirst();
  // Two confirmations at once: only the first turns it on.
  return Number(res.numUpdatedRows) === 1;
}

/** Whether `match` accepts the member's key at a step later than every step accepted before; that step is then used up. */
export async function spendTotpStep(store: Store, memberId: number, match: TotpMatcher): Promise<boolean> {
  const row = await store.db.selectFrom('cabinet_members').select('totp_secret').where('id', '=', memberId).executeTakeFirst();
  if (!row?.totp_secret) return false;
  const step = match(await openKey(store, memberId, 'totp_secret', row.totp_secret));
  if (step === undefined) return false;
  // One statement decides, so two requests with the same code cannot both pass.
  const res = await store.db.updateTable('cabinet_members').set({ totp_last_step: step })
    .where('id', '=', memberId).where('totp_secret', '=', row.totp_secret)
    .where((eb) => eb.or([eb('totp_last_step', 'is', null), eb('totp_last_step', '<', step)]))
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

/** Clears the member's second factor in the caller's transaction; returns whether it was on. */
export async function clearTwoFactorIn(trx: Kysely<Database>, memberId: number): Promise<boolean> {
  const res = await trx.updateTable('cabinet_members').set({ totp_secret: null, totp_pending: null, totp_enabled_at: null, totp_last_step: null })
    .where('id', '=', memberId).where('totp_secret', 'is not', null).executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}
