import { createHash, randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { getMember, insertMember, loginByEmail, memberByEmail, primaryOwner, setMemberPasswordHash, updateMemberLogin, type Role, type Store } from '../store/index.js';
import { RpcctlError } from '../util/errors.js';

/** Passwords, members' logins and one-time links of the cabinet. Shared by the cabinet and `rpcctl admin`. */

export class CredentialError extends RpcctlError {
  readonly code: 'E_EMAIL' | 'E_PASSWORD' | 'E_EMAIL_TAKEN' | 'E_NOT_FOUND';
  constructor(code: CredentialError['code'], message: string) {
    super(message);
    this.name = 'CredentialError';
    this.code = code;
  }
}

const SCRYPT = { N: 16384, r: 8, p: 1, keylen: 32 };
export const MIN_PASSWORD_LENGTH = 10;
export const LOGIN_LINK_TTL_MS = 15 * 60_000;
/** An invitation waits a week for its member; a reset link a day. */
export const INVITE_TTL_MS = 7 * 24 * 3600_000;
export const RESET_LINK_TTL_MS = 24 * 3600_000;

function scryptAsync(password: string, salt: Buffer, keylen: number, opts: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => scrypt(password, salt, keylen, opts, (err, key) => (err ? reject(err) : resolve(key))));
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await scryptAsync(password, salt, SCRYPT.keylen, { N: SCRYPT.N, r: SCRYPT.r, p: SCRYPT.p });
  return `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${salt.toString('base64url')}$${hash.toString('base64url')}`;
}

/** Compared in constant time; a malformed stored hash never matches. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const actual = await scryptAsync(password, Buffer.from(salt, 'base64url'), expected.length, {
    N: Number(n), r: Number(r), p: Number(p), maxmem: 64 * 1024 * 1024,
  });
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/** Spent on an unknown e-mail, so a wrong address takes as long as a wrong password. */
let decoyHash: Promise<string> | undefined;

export function normalizeEmail(email: string): string {
  // NUL, ESC, CR/LF and the rest would reach a terminal (`admin members list`), a log line or a
  // page; no e-mail address has them. Not quoted back: the address itself is what is wrong.
  if (/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/.test(email)) {
    throw new CredentialError('E_EMAIL', 'an e-mail address has no control characters');
  }
  const e = email.trim().toLowerCase();
  if (e.length > 254 || !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(e)) throw new CredentialError('E_EMAIL', `"${email}" is not an e-mail address`);
  return e;
}

export function checkPassword(password: string): void {
  if (password.length < MIN_PASSWORD_LENGTH) throw new CredentialError('E_PASSWORD', `the password must have at least ${MIN_PASSWORD_LENGTH} characters`);
  if (password.length > 1024) throw new CredentialError('E_PASSWORD', 'the password must have at most 1024 characters');
}

/** A login that passed its first factor: the member and its account. */
export interface Login {
  memberId: number;
  accountId: number;
}

/** The e-mail of the account's first owner (what `rpcctl admin` shows of an account). */
export async function loginOf(store: Store, accountId: number): Promise<{ email: string; hasPassword: boolean } | undefined> {
  const owner = await primaryOwner(store, accountId);
  return owner && { email: owner.email, hasPassword: owner.hasPassword };
}

/**
 * Refuses an e-mail that already signs in (has a joined member anywhere) or that the account
 * itself has a member or an invitation of. Only for whom may be told: the operator (`rpcctl
 * admin`) and the invitee joining; an owner inviting hears only of their own account's members.
 */
async function emailFree(store: Store, email: string, accountId: number): Promise<void> {
  if (await accountHas(store, accountId, email)) throw new CredentialError('E_EMAIL_TAKEN', `${email} is a member of this account already`);
  // Never which account.
  if (await memberByEmail(store, email)) throw new CredentialError('E_EMAIL_TAKEN', `${email} already signs in to an account of this service`);
}

async function accountHas(store: Store, accountId: number, email: string): Promise<boolean> {
  return (await memberByEmail(store, email, accountId)) !== undefined;
}

/**
 * Sets (or replaces) the sign-in e-mail and, when given, the password of the account's first
 * owner, made on first use (`rpcctl admin accounts create --email`, `set-password`).
 */
export async function setLogin(store: Store, accountId: number, input: { email?: string; password?: string }): Promise<void> {
  const email = input.email === undefined ? undefined : normalizeEmail(input.email);
  if (input.password !== undefined) checkPassword(input.password);
  const passwordHash = input.password === undefined ? undefined : await hashPassword(input.password);
  const current = await primaryOwner(store, accountId);
  if (email !== undefined && email !== current?.email) await emailFree(store, email, accountId);
  const now = new Date().toISOString();
  if (!current) {
    if (email === undefined) throw new CredentialError('E_EMAIL', `account ${accountId} has no sign-in e-mail yet; give one`);
    await insertMember(store, { accountId, email, passwordHash: passwordHash ?? null, role: 'owner', joined: true, now });
    return;
  }
  await updateMemberLogin(store, current.id, { email, passwordHash }, now);
  // A new password ends every session that knew the old one.
  if (passwordHash !== undefined) await store.db.deleteFrom('cabinet_sessions').where('member_id', '=', current.id).execute();
}

/**
 * A member's new password (their own change, an accepted invitation, a reset link); ends their
 * sessions. Joining (the first password of an invitation) is refused with E_EMAIL_TAKEN when the
 * e-mail signs in already (one e-mail, one login): the invitation stays, unjoined.
 */
export async function setMemberPassword(store: Store, memberId: number, password: string): Promise<void> {
  checkPassword(password);
  const hash = await hashPassword(password);
  const now = new Date().toISOString();
  try {
    await setMemberPasswordHash(store, memberId, hash, now);
  } catch (err) {
    await joinable(store, memberId);
    throw err;
  }
  await store.db.deleteFrom('cabinet_sessions').where('member_id', '=', memberId).execute();
}

/** Refuses (E_EMAIL_TAKEN) a member who has not joined and whose e-mail another member signs in with. */
export async function joinable(store: Store, memberId: number): Promise<void> {
  const me = await getMember(store, memberId);
  if (!me || me.joinedAt) return;
  const login = await memberByEmail(store, me.email);
  if (login && login.id !== me.id) throw new CredentialError('E_EMAIL_TAKEN', `${me.email} already signs in to an account of this service`);
}

/**
 * Adds a member who has not joined yet (no password); the caller hands them a set-password link.
 * Whether the e-mail signs in elsewhere is not asked: the invitation is stored either way, and
 * only the invitee learns it, on joining.
 */
export async function addInvitedMember(store: Store, accountId: number, emailInput: string, role: Role): Promise<number> {
  const email = normalizeEmail(emailInput);
  const own = () => new CredentialError('E_EMAIL_TAKEN', `${email} is a member of this account already`);
  if (await accountHas(store, accountId, email)) throw own();
  const now = new Date().toISOString();
  try {
    return await insertMember(store, { accountId, email, passwordHash: null, role, joined: false, now });
  } catch (err) {
    // Two invitations of one e-mail to one account at once: the unique index decides, and the loser hears why.
    if (await accountHas(store, accountId, email)) throw own();
    throw err;
  }
}

/** The member of an e-mail and password, or undefined; the same work whether the e-mail exists or not. */
export async function checkLogin(store: Store, email: string, password: string): Promise<Login | undefined> {
  const row = await loginByEmail(store, email.trim().toLowerCase());
  if (!row?.password_hash) {
    decoyHash ??= hashPassword(randomBytes(16).toString('hex'));
    await verifyPassword(password, await decoyHash);
    return undefined;
  }
  return (await verifyPassword(password, row.password_hash)) ? { memberId: row.id, accountId: row.account_id } : undefined;
}

export const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** `sign-in` links stand for the password; `set-password` links (invitations, resets) lead to a new one first. */
export type LinkPurpose = 'sign-in' | 'set-password';

export async function createLoginLink(
  store: Store, login: Login, opts: { purpose?: LinkPurpose; ttlMs?: number; nowMs?: number } = {},
): Promise<{ token: string; expiresAt: number }> {
  const nowMs = opts.nowMs ?? Date.now();
  const token = randomBytes(32).toString('base64url');
  const expiresAt = nowMs + (opts.ttlMs ?? LOGIN_LINK_TTL_MS);
  await store.db.deleteFrom('cabinet_login_links').where('expires_at', '<', nowMs).execute();
  await store.db.insertInto('cabinet_login_links').values({
    token_hash: sha256(token), account_id: login.accountId, member_id: login.memberId, purpose: opts.purpose ?? 'sign-in', expires_at: expiresAt, used_at: null,
  }).execute();
  return { token, expiresAt };
}

/** Marks the link used and returns its login; undefined when unknown, expired, used before or of another purpose. */
export async function consumeLoginLink(store: Store, token: string, purpose: LinkPurpose = 'sign-in', nowMs = Date.now()): Promise<Login | undefined> {
  if (token.length > 100) return undefined;
  const row = await store.db.updateTable('cabinet_login_links').set({ used_at: nowMs })
    .where('token_hash', '=', sha256(token)).where('used_at', 'is', null).where('expires_at', '>', nowMs).where('purpose', '=', purpose)
    .returning(['account_id', 'member_id']).executeTakeFirst();
  return row && { accountId: row.account_id, memberId: row.member_id };
}

/** The login a link would sign in, without using it (the page that asks to continue). */
export async function loginLinkValid(store: Store, token: string, purpose: LinkPurpose = 'sign-in', nowMs = Date.now()): Promise<Login | undefined> {
  if (token.length > 100) return undefined;
  const row = await store.db.selectFrom('cabinet_login_links').select(['account_id', 'member_id'])
    .where('token_hash', '=', sha256(token)).where('used_at', 'is', null).where('expires_at', '>', nowMs).where('purpose', '=', purpose)
    .executeTakeFirst();
  return row && { accountId: row.account_id, memberId: row.member_id };
}
