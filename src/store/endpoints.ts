import { randomUUID } from 'node:crypto';
import { CompiledQuery } from 'kysely';
import type { Store } from './store.js';
import { CHANNELS, lockFor, notifyIn } from './dialect.js';
import type { EndpointRow } from './tables.js';

const listSql = new WeakMap<Store, string>();

/** The hottest read of the API: compiled once per store, then only executed. */
export async function listEndpointRows(store: Store, accountId: number): Promise<EndpointRow[]> {
  let sql = listSql.get(store);
  if (sql === undefined) {
    sql = store.db.selectFrom('endpoints').selectAll().where('account_id', '=', 0).orderBy('id').compile().sql;
    listSql.set(store, sql);
  }
  return (await store.db.executeQuery<EndpointRow>(CompiledQuery.raw(sql, [accountId]))).rows;
}

export async function getEndpointRow(store: Store, accountId: number, id: number): Promise<EndpointRow | undefined> {
  return store.db.selectFrom('endpoints').selectAll().where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst();
}

/**
 * Inserts an endpoint after `check` has approved it, inside one transaction, so two
 * concurrent creates cannot both slip under the plan's limits.
 */
export async function insertEndpointChecked(
  store: Store,
  input: { accountId: number; name: string; environmentId: number },
  check: (existing: EndpointRow[]) => void,
): Promise<EndpointRow> {
  return store.db.transaction().execute(async (trx) => {
    await lockFor(trx, `endpoints:${input.accountId}`);
    const existing = await trx.selectFrom('endpoints').selectAll().where('account_id', '=', input.accountId).execute();
    check(existing);
    const now = new Date().toISOString();
    const row = await trx.insertInto('endpoints').values({
      uuid: randomUUID(), account_id: input.accountId, name: input.name, status: 'active',
      network_environment_id: input.environmentId, allowed_ips: '[]', created_at: now, updated_at: now,
      version: null, block_height: null,
    }).returningAll().executeTakeFirstOrThrow();
    await notifyIn(trx, CHANNELS.endpoints, `e:${row.id}`);
    return row;
  });
}

export async function updateEndpointRow(
  store: Store,
  accountId: number,
  id: number,
  patch: { status?: 'active' | 'paused'; allowed_ips?: string[]; name?: string },
): Promise<EndpointRow | undefined> {
  // Every instance's gateway hears of it when it commits (pause and allowlist changes must not wait for a reload).
  return store.db.transaction().execute(async (trx) => {
    const row = await trx.updateTable('endpoints')
      .set({
        ...(patch.status !== undefined ? { status: patch.status } : {}),
        ...(patch.allowed_ips !== undefined ? { allowed_ips: JSON.stringify(patch.allowed_ips) } : {}),
        ...(patch.name !== undefined ? { name: patch.name } : {}),
        updated_at: new Date().toISOString(),
      })
      .where('account_id', '=', accountId).where('id', '=', id)
      .returningAll().executeTakeFirst();
    if (row) await notifyIn(trx, CHANNELS.endpoints, `e:${row.id}`);
    return row;
  });
}
