import { sql } from 'kysely';
import type { Role } from './roles.js';
import type { Store } from './store.js';

/**
 * The writes of a member's sign-in columns (e-mail, password hash, when they joined). The
 * cabinet checks and hashes (cabinet/credentials.ts) and ends sessions; the row is written here,
 * by the owner of `cabinet_members` (docs/architecture.md "Tables and their owners").
 */

export interface NewMember {
  accountId: number;
  email: string;
  passwordHash: string | null;
  role: Role;
  /** Joined now (a login made by `rpcctl admin`), or invited and not yet joined. */
  joined: boolean;
  now: string;
}

/** Inserts a member; a taken e-mail fails on the unique index, which the caller explains. */
export async function insertMember(store: Store, m: NewMember): Promise<number> {
  const row = await store.db.insertInto('cabinet_members').values({
    account_id: m.accountId, email: m.email, password_hash: m.passwordHash, role: m.role, created_at: m.now, joined_at: m.joined ? m.now : null, updated_at: m.now,
  }).returning('id').executeTakeFirstOrThrow();
  return row.id;
}

/** Replaces the e-mail and/or the password hash of a member, whichever is given. */
export async function updateMemberLogin(store: Store, memberId: number, change: { email?: string | undefined; passwordHash?: string | undefined }, now: string): Promise<void> {
  await store.db.updateTable('cabinet_members')
    .set({ ...(change.email !== undefined ? { email: change.email } : {}), ...(change.passwordHash !== undefined ? { password_hash: change.passwordHash } : {}), updated_at: now })
    .where('id', '=', memberId).execute();
}

/** A member's new password hash; an invited member who sets one has joined. */
export async function setMemberPasswordHash(store: Store, memberId: number, passwordHash: string, now: string): Promise<void> {
  // One statement: the joined e-mails' unique index refuses the password together with the joining.
  await store.db.updateTable('cabinet_members')
    .set({ password_hash: passwordHash, updated_at: now, joined_at: sql<string>`COALESCE(joined_at, ${now})` }).where('id', '=', memberId).execute();
}

/**
 * What a sign-in checks of an e-mail: its joined member's id, account and password hash (null
 * while none is set), or undefined when no member has joined with it.
 */
export async function loginByEmail(store: Store, email: string): Promise<{ id: number; account_id: number; password_hash: string | null } | undefined> {
  return store.db.selectFrom('cabinet_members').select(['id', 'account_id', 'password_hash'])
    .where('email', '=', email).where('joined_at', 'is not', null).executeTakeFirst();
}
