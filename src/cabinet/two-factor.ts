import { randomBytes } from 'node:crypto';
import { base32nopad } from '@scure/base';
import { clearTwoFactorIn, confirmPendingTotp, memberTwoFactor, pendingTotpKey, spendTotpStep, type Store } from '../store/index.js';
import { sha256, type Login } from './credentials.js';
import { matchTotp, newTotpSecret, secretFromBase32, secretToBase32 } from './totp.js';

/**
 * The cabinet's second factor: a TOTP key on the login row (sealed with the master key, kept by
 * store/member-two-factor.ts, the row's owner), single-use recovery codes (hashed), the sign-in
 * challenges between the password and the code, and the account's "every login needs two-factor"
 * policy. A login is a member (cabinet_members.id); nothing here returns or logs a secret except
 * to the page that enrols it.
 */

export const RECOVERY_CODES = 10;
/** A challenge lives this long and survives this many wrong codes; then the password again. */
export const CHALLENGE_TTL_MS = 5 * 60_000;
export const CHALLENGE_MAX_FAILURES = 5;

export interface TwoFactorState {
  enabled: boolean;
  enabledAt: string | null;
  recoveryLeft: number;
  /** The account requires a second factor of every login. */
  required: boolean;
}

export async function twoFactorState(store: Store, login: Login): Promise<TwoFactorState> {
  const factor = await memberTwoFactor(store, login.memberId);
  const left = await store.db.selectFrom('cabinet_recovery_codes').select((eb) => eb.fn.countAll<number>().as('n'))
    .where('member_id', '=', login.memberId).where('used_at', 'is', null).executeTakeFirst();
  return {
    enabled: factor.enabled, enabledAt: factor.enabledAt,
    recoveryLeft: Number(left?.n ?? 0), required: await twoFactorRequired(store, login.accountId),
  };
}

export async function twoFactorEnabled(store: Store, memberId: number): Promise<boolean> {
  return (await memberTwoFactor(store, memberId)).enabled;
}

export async function twoFactorRequired(store: Store, accountId: number): Promise<boolean> {
  const row = await store.db.selectFrom('cabinet_policies').select('require_two_factor').where('account_id', '=', accountId).executeTakeFirst();
  return Number(row?.require_two_factor ?? 0) === 1;
}

/** The policy is on and this login has no second factor yet: it may do nothing but enrol. */
export async function mustEnrol(store: Store, login: Login): Promise<boolean> {
  return (await twoFactorRequired(store, login.accountId)) && !(await twoFactorEnabled(store, login.memberId));
}

export async function setTwoFactorRequired(store: Store, accountId: number, on: boolean): Promise<void> {
  const updated_at = new Date().toISOString();
  await store.db.insertInto('cabinet_policies').values({ account_id: accountId, require_two_factor: on ? 1 : 0, updated_at })
    .onConflict((oc) => oc.column('account_id').doUpdateSet({ require_two_factor: on ? 1 : 0, updated_at })).execute();
}

/** The key offered for enrolment, made on first ask and kept until confirmed, so a reload shows the same one. */
export async function pendingSecret(store: Store, memberId: number): Promise<string> {
  return pendingTotpKey(store, memberId, () => secretToBase32(newTotpSecret()));
}

/** Turns two-factor on when `code` is the pending key's; returns the new recovery codes (shown once), else undefined. */
export async function confirmEnrolment(store: Store, login: Login, code: string, nowMs = Date.now()): Promise<string[] | undefined> {
  const given = code.trim();
  // Two confirmations at once: only the first turns it on.
  const on = await confirmPendingTotp(store, login.memberId, (secret) => matchTotp(secretFromBase32(secret), given, nowMs), new Date(nowMs).toISOString());
  return on ? newRecoveryCodes(store, login) : undefined;
}

/**
 * Whether `code` is a current TOTP code of the login or one of its unused recovery codes; either
 * is used up by the answer. A TOTP step accepted once is refused after (as is every older one),
 * so a code read over a shoulder or from a proxy's log cannot sign in again.
 */
export async function useSecondFactor(store: Store, memberId: number, code: string, nowMs = Date.now()): Promise<'totp' | 'recovery' | undefined> {
  const given = code.replace(/\s/g, '');
  if (/^\d{6}$/.test(given)) return (await useTotp(store, memberId, given, nowMs)) ? 'totp' : undefined;
  return (await useRecoveryCode(store, memberId, given, nowMs)) ? 'recovery' : undefined;
}

async function useTotp(store: Store, memberId: number, code: string, nowMs: number): Promise<boolean> {
  // The store refuses a step accepted before in one conditional UPDATE, so two requests with the same code cannot both pass.
  return spendTotpStep(store, memberId, (secret) => matchTotp(secretFromBase32(secret), code, nowMs));
}

/** Case, spaces and dashes do not matter; 0 and 1 (not in the base32 alphabet) are read as o and l. */
const normalizeRecovery = (code: string) => code.toLowerCase().replace(/[^a-z0-9]/g, '').replace(/0/g, 'o').replace(/1/g, 'l');

async function useRecoveryCode(store: Store, memberId: number, code: string, nowMs: number): Promise<boolean> {
  const plain = normalizeRecovery(code);
  if (plain.length !== 10) return false;
  const res = await store.db.updateTable('cabinet_recovery_codes').set({ used_at: nowMs })
    .where('member_id', '=', memberId).where('code_hash', '=', sha256(plain)).where('used_at', 'is', null)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

/** Replaces every recovery code of the login with ten new ones: 50 random bits each, `xxxxx-xxxxx`. */
export async function newRecoveryCodes(store: Store, login: Login): Promise<string[]> {
  const codes = Array.from({ length: RECOVERY_CODES }, () => base32nopad.encode(randomBytes(7)).slice(0, 10).toLowerCase());
  await store.db.transaction().execute(async (trx) => {
    await trx.deleteFrom('cabinet_recovery_codes').where('member_id', '=', login.memberId).execute();
    await trx.insertInto('cabinet_recovery_codes')
      .values(codes.map((c) => ({ account_id: login.accountId, member_id: login.memberId, code_hash: sha256(c), used_at: null }))).execute();
  });
  return codes.map((c) => `${c.slice(0, 5)}-${c.slice(5)}`);
}

/** Turns two-factor off for the login; returns whether it was on. */
export async function disableTwoFactor(store: Store, memberId: number): Promise<boolean> {
  return store.db.transaction().execute(async (trx) => {
    const wasOn = await clearTwoFactorIn(trx, memberId);
    await trx.deleteFrom('cabinet_recovery_codes').where('member_id', '=', memberId).execute();
    await trx.deleteFrom('cabinet_sign_in_challenges').where('member_id', '=', memberId).execute();
    return wasOn;
  });
}

/** `rpcctl admin … reset-2fa`: off, and every session of the member ended (whoever holds one may be who took the phone). */
export async function resetTwoFactor(store: Store, memberId: number): Promise<boolean> {
  const wasOn = await disableTwoFactor(store, memberId);
  await store.db.deleteFrom('cabinet_sessions').where('member_id', '=', memberId).execute();
  return wasOn;
}

/** After the password (or a link): the token for the second step's cookie; only its hash is stored. */
export async function createChallenge(store: Store, login: Login, next: string, nowMs = Date.now()): Promise<string> {
  const token = randomBytes(32).toString('base64url');
  await store.db.deleteFrom('cabinet_sign_in_challenges').where('expires_at', '<', nowMs).execute();
  await store.db.insertInto('cabinet_sign_in_challenges')
    .values({ token_hash: sha256(token), account_id: login.accountId, member_id: login.memberId, next, expires_at: nowMs + CHALLENGE_TTL_MS }).execute();
  return token;
}

export interface Challenge extends Login {
  tokenHash: string;
  next: string;
}

export async function findChallenge(store: Store, token: string | undefined, nowMs = Date.now()): Promise<Challenge | undefined> {
  if (!token || token.length > 100) return undefined;
  const row = await store.db.selectFrom('cabinet_sign_in_challenges').select(['token_hash', 'account_id', 'member_id', 'next'])
    .where('token_hash', '=', sha256(token)).where('expires_at', '>', nowMs).where('failures', '<', CHALLENGE_MAX_FAILURES)
    .executeTakeFirst();
  return row && { tokenHash: row.token_hash, accountId: row.account_id, memberId: row.member_id, next: row.next };
}

/** Counts a wrong code; returns true when the challenge is used up (the password must be given again). */
export async function failChallenge(store: Store, tokenHash: string): Promise<boolean> {
  const row = await store.db.updateTable('cabinet_sign_in_challenges').set((eb) => ({ failures: eb('failures', '+', 1) }))
    .where('token_hash', '=', tokenHash).returning('failures').executeTakeFirst();
  const spent = !row || Number(row.failures) >= CHALLENGE_MAX_FAILURES;
  if (spent) await endChallenge(store, tokenHash);
  return spent;
}

export async function endChallenge(store: Store, tokenHash: string): Promise<void> {
  await store.db.deleteFrom('cabinet_sign_in_challenges').where('token_hash', '=', tokenHash).execute();
}
