import { randomBytes } from 'node:crypto';
import type { Store } from './store.js';
import { CHANNELS, notifyIn } from './dialect.js';
import type { AccountRow } from './tables.js';
import { announceChange, countChangeIn } from './changes.js';
import { RpcctlError } from '../util/errors.js';

export class NotFoundError extends RpcctlError {
  readonly code = 'E_NOT_FOUND';
}

export async function createAccount(store: Store, input: { planId: number; name?: string | null }): Promise<AccountRow> {
  const now = new Date().toISOString();
  return store.db.transaction().execute(async (trx) => {
    const row = await trx.insertInto('accounts')
      .values({ plan_id: input.planId, name: input.name ?? null, webhook_secret: '', created_at: now })
      .returningAll().executeTakeFirstOrThrow();
    // Sealed after insert: the row id is the associated data that pins the ciphertext to this account.
    const sealed = store.secrets.seal(newWebhookSecret(), `account:${row.id}:webhook`);
    await trx.updateTable('accounts').set({ webhook_secret: sealed }).where('id', '=', row.id).execute();
    return { ...row, webhook_secret: sealed };
  });
}

export function newWebhookSecret(): string {
  return `whsec_${randomBytes(24).toString('base64url')}`;
}

export async function getAccount(store: Store, id: number): Promise<AccountRow | undefined> {
  return store.db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function listAccounts(store: Store): Promise<AccountRow[]> {
  return store.db.selectFrom('accounts').selectAll().orderBy('id').execute();
}

export async function setAccountPlan(store: Store, id: number, planId: number): Promise<AccountRow> {
  const row = await store.db.transaction().execute(async (trx) => {
    const updated = await trx.updateTable('accounts').set({ plan_id: planId }).where('id', '=', id).returningAll().executeTakeFirst();
    // The plan's RPS limit applies to the account's endpoints on every instance's gateway: the
    // endpoints' updated_at is what the gateways' version check reads.
    if (updated) {
      await trx.updateTable('endpoints').set({ updated_at: new Date().toISOString() }).where('account_id', '=', id).execute();
      await notifyIn(trx, CHANNELS.endpoints, `a:${id}`);
      await countChangeIn(trx, 'auth');
    }
    return updated;
  });
  if (!row) throw new NotFoundError(`account ${id} not found`);
  announceChange(store, 'auth');
  announceChange(store, 'endpoints');
  return row;
}

export function webhookSecretOf(store: Store, account: AccountRow): string {
  return store.secrets.open(account.webhook_secret, `account:${account.id}:webhook`);
}

export async function rotateWebhookSecret(store: Store, id: number): Promise<string> {
  const secret = newWebhookSecret();
  // The API's cached account rows carry the sealed secret: counted like a plan change.
  const res = await store.db.transaction().execute(async (trx) => {
    const r = await trx.updateTable('accounts')
      .set({ webhook_secret: store.secrets.seal(secret, `account:${id}:webhook`) })
      .where('id', '=', id).executeTakeFirst();
    if (Number(r.numUpdatedRows) > 0) await countChangeIn(trx, 'auth');
    return r;
  });
  if (Number(res.numUpdatedRows) === 0) throw new NotFoundError(`account ${id} not found`);
  announceChange(store, 'auth');
  return secret;
}
