import type { Kysely } from 'kysely';
import { announceChange, countChangeIn } from './changes.js';
import { lockFor } from './dialect.js';
import { asRole, type Role } from './roles.js';
import type { Store } from './store.js';
import type { Database } from './tables.js';
import { RpcctlError } from '../util/errors.js';

/**
 * An account's members: each its own login (e-mail, password, second factor) with a role. One
 * e-mail is one login: among joined members an e-mail is unique service-wide; an invitation
 * reserves it only within its account (migration 0031). The rule kept here, in one transaction per change: an account keeps at least one owner who has
 * joined, so nobody is locked out of members, keys and settings.
 */

export class MemberError extends RpcctlError {
  readonly code: 'E_LAST_OWNER' | 'E_NOT_FOUND';
  constructor(code: MemberError['code'], message: string) {
    super(message);
    this.name = 'MemberError';
    this.code = code;
  }
}

export interface Member {
  id: number;
  accountId: number;
  email: string;
  role: Role;
  createdAt: string;
  /** Null while the invitation is not yet accepted. */
  joinedAt: string | null;
  hasPassword: boolean;
  twoFactor: boolean;
}

type MemberRow = { id: number; account_id: number; email: string; role: string; created_at: string; joined_at: string | null; password_hash: string | null; totp_secret: string | null };

function member(row: MemberRow): Member {
  return {
    id: row.id, accountId: row.account_id, email: row.email, role: asRole(row.role), createdAt: row.created_at, joinedAt: row.joined_at,
    hasPassword: row.password_hash !== null, twoFactor: row.totp_secret !== null,
  };
}

const COLUMNS = ['id', 'account_id', 'email', 'role', 'created_at', 'joined_at', 'password_hash', 'totp_secret'] as const;

export async function listMembers(store: Store, accountId: number): Promise<Member[]> {
  const rows = await store.db.selectFrom('cabinet_members').select(COLUMNS).where('account_id', '=', accountId).orderBy('id').execute();
  return rows.map(member);
}

export async function getMember(store: Store, memberId: number): Promise<Member | undefined> {
  const row = await store.db.selectFrom('cabinet_members').select(COLUMNS).where('id', '=', memberId).executeTakeFirst();
  return row && member(row);
}

/**
 * The login of an e-mail: its member who has joined (one at most, service-wide). With an account,
 * that account's member of the e-mail instead, joined or invited (one at most per account).
 * Invitations reserve nothing service-wide: one e-mail may be invited by several accounts.
 */
export async function memberByEmail(store: Store, email: string, accountId?: number): Promise<Member | undefined> {
  let q = store.db.selectFrom('cabinet_members').select(COLUMNS).where('email', '=', email);
  q = accountId === undefined ? q.where('joined_at', 'is not', null) : q.where('account_id', '=', accountId);
  const row = await q.executeTakeFirst();
  return row && member(row);
}

/** The account's first owner: whom `rpcctl admin` means when it names the account alone. */
export async function primaryOwner(store: Store, accountId: number): Promise<Member | undefined> {
  const row = await store.db.selectFrom('cabinet_members').select(COLUMNS)
    .where('account_id', '=', accountId).where('role', '=', 'owner').orderBy('id').limit(1).executeTakeFirst();
  return row && member(row);
}

async function memberIn(trx: Kysely<Database>, accountId: number, memberId: number): Promise<MemberRow> {
  const row = await trx.selectFrom('cabinet_members').select(COLUMNS).where('id', '=', memberId).where('account_id', '=', accountId).executeTakeFirst();
  if (!row) throw new MemberError('E_NOT_FOUND', `account ${accountId} has no member ${memberId}`);
  return row;
}

/** Refuses a change that would leave no joined owner besides `memberId`. */
async function keepAnOwner(trx: Kysely<Database>, row: MemberRow, doing: string): Promise<void> {
  if (row.role !== 'owner' || row.joined_at === null) return;
  const others = await trx.selectFrom('cabinet_members').select('id')
    .where('account_id', '=', row.account_id).where('role', '=', 'owner').where('joined_at', 'is not', null).where('id', '!=', row.id)
    .limit(1).executeTakeFirst();
  if (!others) throw new MemberError('E_LAST_OWNER', `${row.email} is the account's last owner and cannot ${doing}: make another member owner first`);
}

/** Changes a member's role; their API keys act with the new one from the next request on. */
export async function setMemberRole(store: Store, accountId: number, memberId: number, role: Role): Promise<Member> {
  const row = await store.db.transaction().execute(async (trx) => {
    await lockFor(trx, `members:${accountId}`);
    const row = await memberIn(trx, accountId, memberId);
    if (role !== 'owner') await keepAnOwner(trx, row, 'be given another role');
    await trx.updateTable('cabinet_members').set({ role, updated_at: new Date().toISOString() }).where('id', '=', memberId).execute();
    // The authenticator caches keys with their role.
    await countChangeIn(trx, 'auth');
    return { ...row, role };
  });
  announceChange(store, 'auth');
  return member(row);
}

/** Deletes what a higher layer keeps of a member, in the removal's transaction (the cabinet's `forgetMemberIn`). */
export type ForgetMember = (trx: Kysely<Database>, memberId: number) => Promise<void>;

/**
 * Removes a member (or withdraws an invitation): the API keys they made are revoked, since
 * those keys act with the member's role, and `forget` deletes what the cabinet keeps of them
 * (sessions, links, second factor), all in one transaction. Returns how many keys were revoked.
 */
export async function removeMember(
  store: Store, accountId: number, memberId: number, forget: ForgetMember,
): Promise<{ member: Member; keysRevoked: number }> {
  const out = await store.db.transaction().execute(async (trx) => {
    await lockFor(trx, `members:${accountId}`);
    const row = await memberIn(trx, accountId, memberId);
    await keepAnOwner(trx, row, 'leave');
    const revoked = await trx.updateTable('api_keys').set({ revoked_at: new Date().toISOString() })
      .where('created_by_member', '=', memberId).where('revoked_at', 'is', null).executeTakeFirst();
    await forget(trx, memberId);
    await trx.deleteFrom('cabinet_members').where('id', '=', memberId).execute();
    await countChangeIn(trx, 'auth');
    return { member: member(row), keysRevoked: Number(revoked.numUpdatedRows) };
  });
  announceChange(store, 'auth');
  return out;
}
