import { randomUUID } from 'node:crypto';
import { CompiledQuery } from 'kysely';
import type { Store } from './store.js';
import { CHANNELS, lockFor, notifyIn } from './dialect.js';
import type { EndpointRow } from './tables.js';
import { announceChange, ChangeWatch } from './changes.js';
import { RpcctlError } from '../util/errors.js';

/**
 * Endpoint names are unique within an account (a unique index since 0030): a name picks one
 * endpoint in every command (`rpcctl rpc main ...`) and in the cabinet. The API answers 409.
 */
export class EndpointNameTakenError extends RpcctlError {
  readonly code = 'E_CONFLICT';
  constructor(name: string, id: number) {
    super(`name: an endpoint named "${name}" exists already (id ${id}); names are unique within an account: choose another, or rename that one`);
  }
}

/** `eth-mainnet`, then `eth-mainnet-2`, ...: the first of `base`'s forms no row has. */
export function freeName(base: string, rows: readonly { name: string }[]): string {
  const taken = new Set(rows.map((r) => r.name));
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) if (!taken.has(`${base}-${n}`)) return `${base}-${n}`;
}

const listSql = new WeakMap<Store, string>();

interface Listing { generation: number; at: number; rows: readonly EndpointRow[] }
const listings = new WeakMap<Store, { watch: ChangeWatch; byAccount: Map<number, Listing> }>();

/**
 * How long a cached listing may miss a change nobody announced (another instance's probe
 * writing block heights): changes made through the API are seen at once.
 */
const LISTING_MAX_AGE_MS = 1000;

/**
 * The hottest read of the API, answered from memory: an account's rows are read once, and
 * again only after a change to endpoints (in this process at once; by another process at the
 * next look, see ChangeWatch) or after LISTING_MAX_AGE_MS. The rows are shared: read only.
 */
export async function listEndpointRows(store: Store, accountId: number, nowMs = Date.now()): Promise<readonly EndpointRow[]> {
  let cache = listings.get(store);
  if (!cache) listings.set(store, (cache = { watch: new ChangeWatch(store, 'endpoints'), byAccount: new Map() }));
  const generation = await cache.watch.current(nowMs);
  const hit = cache.byAccount.get(accountId);
  if (hit && hit.generation === generation && nowMs - hit.at < LISTING_MAX_AGE_MS) return hit.rows;
  let sql = listSql.get(store);
  if (sql === undefined) {
    sql = store.db.selectFrom('endpoints').selectAll().where('account_id', '=', 0).orderBy('id').compile().sql;
    listSql.set(store, sql);
  }
  const rows = (await store.db.executeQuery<EndpointRow>(CompiledQuery.raw(sql, [accountId]))).rows;
  if (cache.byAccount.size >= 10_000) cache.byAccount.clear();
  cache.byAccount.set(accountId, { generation, at: nowMs, rows });
  return rows;
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
  input: { accountId: number; name: string; environmentId: number; defaultName?: boolean },
  check: (existing: EndpointRow[]) => void,
): Promise<EndpointRow> {
  return store.db.transaction().execute(async (trx) => {
    await lockFor(trx, `endpoints:${input.accountId}`);
    const existing = await trx.selectFrom('endpoints').selectAll().where('account_id', '=', input.accountId).execute();
    check(existing);
    // A name the caller chose must be free; one made up for it (`eth-mainnet`) is made free.
    const clash = existing.find((r) => r.name === input.name);
    if (clash && !input.defaultName) throw new EndpointNameTakenError(input.name, clash.id);
    const name = input.defaultName ? freeName(input.name, existing) : input.name;
    const now = new Date().toISOString();
    const row = await trx.insertInto('endpoints').values({
      uuid: randomUUID(), account_id: input.accountId, name, status: 'active',
      network_environment_id: input.environmentId, allowed_ips: '[]', created_at: now, updated_at: now,
      version: null, block_height: null,
    }).returningAll().executeTakeFirstOrThrow();
    await notifyIn(trx, CHANNELS.endpoints, `e:${row.id}`);
    return row;
  }).then((row) => {
    announceChange(store, 'endpoints');
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
    if (patch.name !== undefined) {
      await lockFor(trx, `endpoints:${accountId}`);
      const clash = await trx.selectFrom('endpoints').select('id')
        .where('account_id', '=', accountId).where('name', '=', patch.name).where('id', '!=', id).executeTakeFirst();
      if (clash) throw new EndpointNameTakenError(patch.name, clash.id);
    }
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
  }).then((row) => {
    if (row) announceChange(store, 'endpoints');
    return row;
  });
}

/** The node version and block height the gateway's probe saw on an environment, shown with its endpoints. */
export async function recordProbe(store: Store, envId: number, version: string | null, blockHeight: number | null): Promise<void> {
  await store.db.updateTable('endpoints').set({ version, block_height: blockHeight }).where('network_environment_id', '=', envId).execute();
}

/** The environments some endpoint uses: those the gateway's probe keeps an eye on. */
export async function environmentsInUse(store: Store): Promise<number[]> {
  const rows = await store.db.selectFrom('endpoints').select('network_environment_id').distinct().execute();
  return rows.map((r) => r.network_environment_id);
}

/**
 * The endpoints as the gateway routes them, each with its account's plan: a query the gateway's
 * registry narrows (by id, account, or time of change) and pages.
 */
export function endpointRoutesQuery(store: Store) {
  return store.db.selectFrom('endpoints as e')
    .innerJoin('accounts as a', 'a.id', 'e.account_id')
    .select(['e.id', 'e.uuid', 'e.account_id', 'e.status', 'e.allowed_ips', 'e.network_environment_id', 'e.updated_at', 'a.plan_id']);
}
