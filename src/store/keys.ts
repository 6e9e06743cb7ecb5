import { randomBytes, randomUUID } from 'node:crypto';
import type { Store } from './store.js';
import type { ApiKeyRow } from './tables.js';
import { announceChange, countChangeIn } from './changes.js';
import { asRole, type Role } from './roles.js';

export interface ApiKeyInfo {
  api_key: string;
  prefix: string;
  account_id: number;
  name: string | null;
  allowed_ips: string[];
  created_at: string;
  revoked_at: string | null;
  last_used_at: string | null;
  /** The cabinet member who made it; null for keys made before members or by `rpcctl admin`. */
  created_by_member: number | null;
}

/** A key as the authenticator needs it: the secret decrypted, the allowlist parsed. */
export interface ActiveKey {
  id: string;
  accountId: number;
  secret: string;
  allowedIps: string[];
  /** Its maker's role (today's, so demoting a member demotes their keys); owner when no member made it. */
  role: Role;
  /** The member who made it (or, in the cabinet, who is signed in); null: a key no member made. */
  member?: number | null;
}

const aad = (id: string) => `api_key:${id}`;

export function keyInfo(row: ApiKeyRow): ApiKeyInfo {
  return {
    api_key: row.id, prefix: row.prefix, account_id: row.account_id, name: row.name,
    allowed_ips: JSON.parse(row.allowed_ips) as string[], created_at: row.created_at, revoked_at: row.revoked_at,
    last_used_at: row.last_used_at ?? null, created_by_member: row.created_by_member ?? null,
  };
}

/** Creates a key. The returned secret is the only copy in plain text. */
export async function createApiKey(
  store: Store,
  input: { accountId: number; allowedIps?: string[]; name?: string | null; createdByMember?: number | null },
): Promise<ApiKeyInfo & { secret: string }> {
  const id = randomUUID();
  const secret = `sk_${randomBytes(32).toString('base64url')}`;
  const row: ApiKeyRow = {
    id, account_id: input.accountId, prefix: id.slice(0, 8), secret: store.secrets.seal(secret, aad(id)),
    name: input.name ?? null, allowed_ips: JSON.stringify(input.allowedIps ?? []),
    created_at: new Date().toISOString(), revoked_at: null, last_used_at: null, created_by_member: input.createdByMember ?? null,
  };
  // Counted: another process may have cached this id as unknown.
  await store.db.transaction().execute(async (trx) => {
    await trx.insertInto('api_keys').values(row).execute();
    await countChangeIn(trx, 'auth');
  });
  announceChange(store, 'auth');
  return { ...keyInfo(row), secret };
}

export async function listApiKeys(store: Store, accountId?: number): Promise<ApiKeyInfo[]> {
  let q = store.db.selectFrom('api_keys').selectAll().orderBy('created_at');
  if (accountId !== undefined) q = q.where('account_id', '=', accountId);
  return (await q.execute()).map(keyInfo);
}

/** Revokes by full id or by a unique prefix. Returns the revoked key, or undefined. */
export async function revokeApiKey(store: Store, idOrPrefix: string): Promise<ApiKeyInfo | undefined> {
  const matches = await store.db.selectFrom('api_keys').selectAll()
    .where((eb) => eb.or([eb('id', '=', idOrPrefix), eb('prefix', '=', idOrPrefix)])).execute();
  if (matches.length !== 1) return undefined;
  const row = matches[0]!;
  const revokedAt = row.revoked_at ?? new Date().toISOString();
  await store.db.transaction().execute(async (trx) => {
    await trx.updateTable('api_keys').set({ revoked_at: revokedAt }).where('id', '=', row.id).execute();
    await countChangeIn(trx, 'auth');
  });
  announceChange(store, 'auth');
  return keyInfo({ ...row, revoked_at: revokedAt });
}

export async function findActiveKey(store: Store, id: string): Promise<ActiveKey | undefined> {
  const row = await store.db.selectFrom('api_keys')
    .leftJoin('cabinet_members', 'cabinet_members.id', 'api_keys.created_by_member')
    .select(['api_keys.id', 'api_keys.account_id', 'api_keys.secret', 'api_keys.allowed_ips', 'api_keys.created_by_member', 'cabinet_members.role'])
    .where('api_keys.id', '=', id).where('api_keys.revoked_at', 'is', null).executeTakeFirst();
  if (!row) return undefined;
  // A maker no longer a member (a row removed by hand; removal revokes their keys) grants the least.
  const role = row.created_by_member === null ? 'owner' : asRole(row.role);
  return { id: row.id, accountId: row.account_id, secret: store.secrets.open(row.secret, aad(row.id)), allowedIps: JSON.parse(row.allowed_ips) as string[], role, member: row.created_by_member };
}

/**
 * A live key of one account by its prefix (the cabinet shows nothing more of a key after
 * creation); undefined when none, or when two of the account's keys share the prefix.
 */
export async function getAccountKeyByPrefix(store: Store, accountId: number, prefix: string): Promise<ApiKeyInfo | undefined> {
  const rows = await store.db.selectFrom('api_keys').selectAll()
    .where('account_id', '=', accountId).where('prefix', '=', prefix).where('revoked_at', 'is', null).limit(2).execute();
  return rows.length === 1 ? keyInfo(rows[0]!) : undefined;
}

export async function setKeyAllowedIps(store: Store, accountId: number, id: string, ips: string[]): Promise<ApiKeyInfo | undefined> {
  const row = await store.db.transaction().execute(async (trx) => {
    const updated = await trx.updateTable('api_keys').set({ allowed_ips: JSON.stringify(ips) })
      .where('account_id', '=', accountId).where('id', '=', id).where('revoked_at', 'is', null)
      .returningAll().executeTakeFirst();
    if (updated) await countChangeIn(trx, 'auth');
    return updated;
  });
  if (row) announceChange(store, 'auth');
  return row && keyInfo(row);
}

export async function revokeAccountKey(store: Store, accountId: number, id: string): Promise<ApiKeyInfo | undefined> {
  const row = await store.db.transaction().execute(async (trx) => {
    const updated = await trx.updateTable('api_keys').set({ revoked_at: new Date().toISOString() })
      .where('account_id', '=', accountId).where('id', '=', id).where('revoked_at', 'is', null)
      .returningAll().executeTakeFirst();
    if (updated) await countChangeIn(trx, 'auth');
    return updated;
  });
  if (row) announceChange(store, 'auth');
  return row && keyInfo(row);
}

/** Writes the last-use times gathered since the previous flush, one statement per key. */
export async function recordKeyUse(store: Store, lastUse: ReadonlyMap<string, number>): Promise<void> {
  if (lastUse.size === 0) return;
  await store.db.transaction().execute(async (trx) => {
    for (const [id, ms] of lastUse) {
      const at = new Date(ms).toISOString();
      // Never move it back: another instance may have flushed a later use.
      await trx.updateTable('api_keys').set({ last_used_at: at }).where('id', '=', id)
        .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', at)])).execute();
    }
  });
}
