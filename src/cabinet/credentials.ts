import { createHash, randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import type { Store } from '../store/index.js';
import { RpcctlError } from '../util/errors.js';

/** Passwords, logins and one-time sign-in links of the cabinet. Shared by the cabinet and `rpcctl admin`. */

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
  const e = email.trim().toLowerCase();
  if (e.length > 254 || !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(e)) throw new CredentialError('E_EMAIL', `"${email}" is not an e-mail address`);
  return e;
}

export function checkPassword(password: string): void {
  if (password.length < MIN_PASSWORD_LENGTH) throw new CredentialError('E_PASSWORD', `the password must have at least ${MIN_PASSWORD_LENGTH} characters`);
  if (password.length > 1024) throw new CredentialError('E_PASSWORD', 'the password must have at most 1024 characters');
}

export async function loginOf(store: Store, accountId: number): Promise<{ email: string; hasPassword: boolean } | undefined> {
  const row = await store.db.selectFrom('cabinet_logins').select(['email', 'password_hash']).where('account_id', '=', accountId).executeTakeFirst();
  return row && { email: row.email, hasPassword: row.password_hash !== null };
}

/** Sets (or replaces) the account's sign-in e-mail and, when given, its password. */
export async function setLogin(store: Store, accountId: number, input: { email?: string; password?: string }): Promise<void> {
  const email = input.email === undefined ? undefined : normalizeEmail(input.email);
  if (input.password !== undefined) checkPassword(input.password);
  const passwordHash = input.password === undefined ? undefined : await hashPassword(input.password);
  const current = await store.db.selectFrom('cabinet_logins').selectAll().where('account_id', '=', accountId).executeTakeFirst();
  if (email !== undefined && email !== current?.email) {
    const taken = await store.db.selectFrom('cabinet_logins').select('account_id').where('email', '=', email).executeTakeFirst();
    if (taken) throw new CredentialError('E_EMAIL_TAKEN', `${email} already signs in to account ${taken.account_id}`);
  }
  const now = new Date().toISOString();
  if (!current) {
    if (email === undefined) throw new CredentialError('E_EMAIL', `account ${accountId} has no sign-in e-mail yet; give one`);
    await store.db.insertInto('cabinet_logins').values({ account_id: accountId, email, password_hash: passwordHash ?? null, updated_at: now }).execute();
    return;
  }
  await store.db.updateTable('cabinet_logins')
    .set({ ...(email !== undefined ? { email } : {}), ...(passwordHash !== undefined ? { password_hash: passwordHash } : {}), updated_at: now })
    .where('account_id', '=', accountId).execute();
  // A new password ends every session that knew the old one.
  if (passwordHash !== undefined) await store.db.deleteFrom('cabinet_sessions').where('account_id', '=', accountId).execute();
}

/** The account of an e-mail and password, or undefined; the same work whether the e-mail exists or not. */
export async function checkLogin(store: Store, email: string, password: string): Promise<number | undefined> {
  const row = await store.db.selectFrom('cabinet_logins').select(['account_id', 'password_hash'])
    .where('email', '=', email.trim().toLowerCase()).executeTakeFirst();
  if (!row?.password_hash) {
    decoyHash ??= hashPassword(randomBytes(16).toString('hex'));
    await verifyPassword(password, await decoyHash);
    return undefined;
  }
  return (await verifyPassword(password, row.password_hash)) ? row.account_id : undefined;
}

export const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

export async function createLoginLink(store: Store, accountId: number, nowMs = Date.now()): Promise<{ token: string; expiresAt: number }> {
  const token = randomBytes(32).toString('base64url');
  const expiresAt = nowMs + LOGIN_LINK_TTL_MS;
  await store.db.deleteFrom('cabinet_login_links').where('expires_at', '<', nowMs).execute();
  await store.db.insertInto('cabinet_login_links').values({ token_hash: sha256(token), account_id: accountId, expires_at: expiresAt, used_at: null }).execute();
  return { token, expiresAt };
}

/** Marks the link used and returns its account; undefined when unknown, expired or used before. */
export async function consumeLoginLink(store: Store, token: string, nowMs = Date.now()): Promise<number | undefined> {
  if (token.length > 100) return undefined;
  const row = await store.db.updateTable('cabinet_login_links').set({ used_at: nowMs })
    .where('token_hash', '=', sha256(token)).where('used_at', 'is', null).where('expires_at', '>', nowMs)
    .returning('account_id').executeTakeFirst();
  return row?.account_id;
}

/** Whether a link would still work, without using it (the page that asks to continue). */
export async function loginLinkValid(store: Store, token: string, nowMs = Date.now()): Promise<boolean> {
  if (token.length > 100) return false;
  const row = await store.db.selectFrom('cabinet_login_links').select('account_id')
    .where('token_hash', '=', sha256(token)).where('used_at', 'is', null).where('expires_at', '>', nowMs).executeTakeFirst();
  return row !== undefined;
}
