import { randomBytes } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { CHANNELS, lockFor, notifyIn, type Database, type Environment, type CatalogPlan, type Store, type WatchedAddressRow } from '../store/index.js';
import type { ParsedAddress } from '../chains/address.js';
import type { WatchedAddress } from '../wire/watch.js';
import { RpcctlError } from '../util/errors.js';
import { cursorLock } from './record.js';

export class SlotLimitError extends RpcctlError {
  readonly code = 'E_SLOT_LIMIT';
}

export function presentWatch(r: WatchedAddressRow): WatchedAddress {
  return { watch_id: r.watch_id, network_slug: r.network_slug, address: r.address, created_at: r.created_at };
}

export function newWatchId(): string {
  return `w_${randomBytes(12).toString('base64url')}`;
}

/** What a new watch is: the account's address on one environment. */
export interface NewWatch {
  accountId: number;
  plan: CatalogPlan | undefined;
  env: Environment;
  /** The identifier the watch was created with; its events carry it. */
  networkSlug: string;
  address: ParsedAddress;
  createdAt?: string;
  /** The refusal when every slot is taken (payments word it for orders). */
  slotLimitMessage?: (slots: number, planName: string) => string;
  /**
   * The merchant asks for this watch (the API): an existing one a payment order owns becomes
   * theirs, so closing or releasing the order never removes a watch the merchant was told exists.
   */
  claim?: boolean;
  /** A payment order asks: a new watch is the orders' (`holder`), not the merchant's. */
  forOrder?: boolean;
  /** With `claim`: told when the watch passes from the orders to the merchant. */
  holderChanged?: HolderChanged;
}

/**
 * Adds a watch, or returns the account's existing watch of the same address on the same
 * environment (`created: false`): a retried POST must not use a second slot. The slot count
 * is checked in the insert's transaction so concurrent adds cannot pass the cap together.
 */
export async function addWatch(store: Store, input: NewWatch): Promise<{ row: WatchedAddressRow; created: boolean }> {
  return store.db.transaction().execute((trx) => addWatchIn(trx, input));
}

/*
 * The only writers of `watched_addresses` (Address Watch's API and payment orders alike), each
 * in the caller's transaction: an add takes the account's lock for its slot check, and every
 * change is announced to the other instances on commit. Whichever instance holds a network's
 * scanner lease matches against its own registry, which only these notifications keep in step
 * with the store. After the commit the writing instance tells its own AddressWatch
 * (`watchAdded`, which also sets the network's starting block, or `watchRemoved`).
 */

/** Adds a watch inside `trx` (see addWatch). */
export async function addWatchIn(trx: Kysely<Database>, input: NewWatch): Promise<{ row: WatchedAddressRow; created: boolean }> {
  await lockFor(trx, `watches:${input.accountId}`);
  const find = () => trx.selectFrom('watched_addresses').selectAll()
    .where('account_id', '=', input.accountId)
    .where('network_environment_id', '=', input.env.id)
    .where('address_key', '=', input.address.key)
    .executeTakeFirst();
  const slots = input.plan?.webhook_address_slots ?? 0;
  const checkSlots = async () => {
    if ((await countWatches(trx, input.accountId)) >= slots) {
      throw new SlotLimitError((input.slotLimitMessage ?? slotLimitMessage)(slots, input.plan?.name ?? 'current'));
    }
  };
  let existing = await find();
  // Only a closed order's finality hold keeps it, holding no slot: both callers make it count
  // again (the merchant's own watch, or a new open order), so it needs a free slot like a new one.
  if (existing && !holdsSlot(existing)) await checkSlots();
  // A release in flight (payments letting a finality hold go) updates the watch row in its
  // transaction: this update waits for it and finds the row removed (a new one is added below).
  if (existing && input.claim) existing = await handToMerchant(trx, existing.watch_id, input.holderChanged);
  if (existing) return { row: existing, created: false };
  await checkSlots();
  const startHeight = await startHeightIn(trx, input.env.id);
  const row = await trx.insertInto('watched_addresses').values({
    watch_id: newWatchId(), account_id: input.accountId, network_environment_id: input.env.id,
    network_slug: input.networkSlug, address: input.address.display, address_key: input.address.key,
    created_at: input.createdAt ?? new Date().toISOString(), start_height: startHeight, holder: input.forOrder ? 'order' : 'merchant',
  }).returningAll().executeTakeFirstOrThrow();
  await notifyIn(trx, CHANNELS.watches, JSON.stringify({ op: '+', row }));
  return { row, created: true };
}

/**
 * A new watch's first block: the environment's next unrecorded block, read with the cursor's
 * row locked until the add commits. A scanner recording that block moves the cursor first, so
 * it either waits for the add (and then finds the watch, record.ts) or has already committed
 * (and the watch starts after it). Adds on one environment therefore also commit in id order,
 * which lets the scanner ask only for ids above the last it saw. With no cursor yet (nothing
 * scanned), the lock the cursor is created under stands in for the row: the watch starts
 * before the first block (0), and the scanner's first record finds it.
 */
async function startHeightIn(trx: Kysely<Database>, envId: number): Promise<number> {
  // A no-op update rather than FOR UPDATE: it locks on both stores (SQLite's write lock is
  // already held, BEGIN IMMEDIATE).
  const lockCursor = async () => (await trx.updateTable('scanner_cursors').set((eb) => ({ next_height: eb.ref('next_height') }))
    .where('network_environment_id', '=', envId).returning('next_height').executeTakeFirst())?.next_height;
  let next = await lockCursor();
  if (next === undefined) {
    await lockFor(trx, cursorLock(envId));
    next = await lockCursor();
  }
  return next ?? 0;
}

function slotLimitMessage(slots: number, planName: string): string {
  return slots === 0
    ? `Watched address limit reached: the ${planName} plan has no webhook address slots (webhook_address_slots is 0); upgrade the plan to watch addresses`
    : `Watched address limit reached: the ${planName} plan allows ${slots} watched address${slots === 1 ? '' : 'es'} (webhook_address_slots); remove one first`;
}

/**
 * Puts a removed watch back under its old `watch_id` (a paid order reopened by a reorg takes
 * its address back; its events keep naming the same watch), the orders' and used by an open
 * one. undefined when it is still there.
 */
export async function restoreWatchIn(
  trx: Kysely<Database>,
  watch: Omit<WatchedAddressRow, 'id' | 'created_at' | 'start_height' | 'holder' | 'order_open' | 'order_held'> & { start_height?: number },
): Promise<WatchedAddressRow | undefined> {
  await lockFor(trx, `watches:${watch.account_id}`);
  const exists = await trx.selectFrom('watched_addresses').select('id').where('watch_id', '=', watch.watch_id).executeTakeFirst();
  if (exists) return undefined;
  // A new start like any add (the blocks already recorded were matched without it), unless
  // the caller knows an earlier one: a rewind below the new start would otherwise hide the
  // watch's payments in the blocks scanned again.
  const next = await startHeightIn(trx, watch.network_environment_id);
  const startHeight = Math.min(next, watch.start_height ?? next);
  const row = await trx.insertInto('watched_addresses')
    .values({ ...watch, created_at: new Date().toISOString(), start_height: startHeight, holder: 'order', order_open: 1, order_held: 0 })
    .returningAll().executeTakeFirstOrThrow();
  await notifyIn(trx, CHANNELS.watches, JSON.stringify({ op: '+', row }));
  return row;
}

/** Removes a watch inside `trx`; undefined when there was none (of that account, when given). */
export async function deleteWatchIn(trx: Kysely<Database>, watchId: string, accountId?: number): Promise<WatchedAddressRow | undefined> {
  let q = trx.deleteFrom('watched_addresses').where('watch_id', '=', watchId);
  if (accountId !== undefined) q = q.where('account_id', '=', accountId);
  const row = await q.returningAll().executeTakeFirst();
  if (row) await notifyIn(trx, CHANNELS.watches, JSON.stringify({ op: '-', row }));
  return row;
}

/**
 * Watches holding a slot. An orders' watch kept only for a closed order's finality hold holds
 * none: a slot is the order's while it is open; it counts again once an open order shares it.
 */
export async function countWatches(db: Store['db'], accountId: number): Promise<number> {
  const r = await db.selectFrom('watched_addresses').select(sql<number>`count(*)`.as('n')).where('account_id', '=', accountId)
    .where((eb) => eb.or([eb('holder', '=', 'merchant'), eb('order_open', '=', 1), eb.and([eb('holder', '=', 'order'), eb('order_held', '=', 0)])]))
    .executeTakeFirst();
  return Number(r?.n ?? 0);
}

/** Whether the watch holds a slot (see countWatches). */
function holdsSlot(w: WatchedAddressRow): boolean {
  return w.holder === 'merchant' || w.order_open === 1 || (w.holder === 'order' && w.order_held === 0);
}

/**
 * Told in the transaction when the merchant takes a watch from the orders or gives it back:
 * payments keep `payment_orders.owns_watch` in step, which an instance of the previous release
 * reads as the holder (migration 0029; a rolling upgrade runs both for a moment). Serve hands
 * it in; dropped with the column.
 */
export type HolderChanged = (trx: Kysely<Database>, watchId: string, holder: 'merchant' | 'order') => Promise<void>;

/** The merchant asks for a watch the orders hold: it becomes theirs (undefined: it was removed meanwhile). */
async function handToMerchant(trx: Kysely<Database>, watchId: string, changed?: HolderChanged): Promise<WatchedAddressRow | undefined> {
  const row = await trx.updateTable('watched_addresses').set({ holder: 'merchant' }).where('watch_id', '=', watchId).returningAll().executeTakeFirst();
  if (row) await changed?.(trx, watchId, 'merchant');
  return row;
}

/** The merchant lets go of a watch a closed order still needs until its funding is final. */
async function handToOrder(trx: Kysely<Database>, watchId: string, changed?: HolderChanged): Promise<WatchedAddressRow | undefined> {
  const row = await trx.updateTable('watched_addresses').set({ holder: 'order' }).where('watch_id', '=', watchId).returningAll().executeTakeFirst();
  if (row) await changed?.(trx, watchId, 'order');
  return row;
}

/** What payment orders use a watch for, as their own rows say after a change. */
export interface OrderUse {
  /** An open order listens through it. */
  open: boolean;
  /** A closed order keeps it until its funding is final. */
  held: boolean;
  /**
   * An order says it owns the watch (`owns_watch`, see handToMerchant): on a watch never told
   * of an order, an instance of the previous release added it for that order without a holder
   * (the column's default, the merchant's), so it is the orders'.
   */
  owned?: boolean;
}

/**
 * Payments tell the watch what their orders use it for, in their transaction, after every
 * change of an order's `open` or `held`. An orders' watch no order uses any more is removed
 * (returned, to tell the registry after the commit); the merchant's stays theirs.
 */
export async function useForOrders(trx: Kysely<Database>, watchId: string, use: OrderUse): Promise<WatchedAddressRow | undefined> {
  // Never told of any order yet (only payments write these, and they always do): added by an
  // instance of the previous release, for the order that owns it.
  const untold = use.owned && await trx.selectFrom('watched_addresses').select('id').where('watch_id', '=', watchId)
    .where('holder', '=', 'merchant').where('order_open', '=', 0).where('order_held', '=', 0).executeTakeFirst();
  const row = await trx.updateTable('watched_addresses')
    .set({ order_open: use.open ? 1 : 0, order_held: use.held ? 1 : 0, ...(untold && { holder: 'order' as const }) })
    .where('watch_id', '=', watchId).returning('holder').executeTakeFirst();
  if (row?.holder !== 'order' || use.open || use.held) return undefined;
  return deleteWatchIn(trx, watchId);
}

/** Whose the watch is; undefined when it is gone. */
export async function watchHolder(db: Kysely<Database>, watchId: string): Promise<WatchedAddressRow['holder'] | undefined> {
  return (await db.selectFrom('watched_addresses').select('holder').where('watch_id', '=', watchId).executeTakeFirst())?.holder;
}

/** The account's watch of an address on an environment, if any (a restored watch shares it). */
export async function watchAt(db: Kysely<Database>, accountId: number, envId: number, addressKey: string): Promise<WatchedAddressRow | undefined> {
  return db.selectFrom('watched_addresses').selectAll().where('account_id', '=', accountId)
    .where('network_environment_id', '=', envId).where('address_key', '=', addressKey).executeTakeFirst();
}

export async function listWatches(
  store: Store,
  q: { accountId: number; envId?: number; addressKey?: string; page: number; perPage: number },
): Promise<{ rows: WatchedAddressRow[]; total: number }> {
  let base = store.db.selectFrom('watched_addresses').where('account_id', '=', q.accountId);
  if (q.envId !== undefined) base = base.where('network_environment_id', '=', q.envId);
  if (q.addressKey !== undefined) base = base.where('address_key', '=', q.addressKey);
  const [rows, total] = await Promise.all([
    base.selectAll().orderBy('id').limit(q.perPage).offset((q.page - 1) * q.perPage).execute(),
    base.select(sql<number>`count(*)`.as('n')).executeTakeFirst(),
  ]);
  return { rows, total: Number(total?.n ?? 0) };
}

/** One watched address of the account on the network: the sample of a webhook test delivery. */
export async function sampleWatch(store: Store, accountId: number, envId: number): Promise<{ watchId: string; network: string; address: string } | undefined> {
  const { rows } = await listWatches(store, { accountId, envId, page: 1, perPage: 1 });
  return rows[0] && { watchId: rows[0].watch_id, network: rows[0].network_slug, address: rows[0].address };
}

/**
 * The merchant stops watching: the watch is removed (`kept: false`), or, when a closed order's
 * finality hold still uses it, given back to the orders (`kept: true`): it stops holding a slot
 * and sending the merchant's webhooks, and goes when the order's funding is final, so a reorg
 * is still seen. One an open order listens through is not removed (`inUse`).
 */
export async function deleteWatch(
  store: Store, accountId: number, watchId: string, holderChanged?: HolderChanged,
): Promise<{ row: WatchedAddressRow; kept: boolean; inUse?: boolean } | undefined> {
  return store.db.transaction().execute(async (trx) => {
    const row = await trx.selectFrom('watched_addresses').selectAll().where('watch_id', '=', watchId).where('account_id', '=', accountId).executeTakeFirst();
    if (!row) return undefined;
    if (row.order_open === 1) return { row, kept: true, inUse: true };
    if (row.order_held === 1) return { row: (await handToOrder(trx, watchId, holderChanged)) ?? row, kept: true };
    const removed = await deleteWatchIn(trx, watchId, accountId);
    return removed && { row: removed, kept: false };
  });
}

export async function allWatches(store: Store): Promise<WatchedAddressRow[]> {
  return store.db.selectFrom('watched_addresses').selectAll().execute();
}

/**
 * A refund or payout line tracks the transfer to `address` (payouts/ asks, in its transaction):
 * the account's watch of it when there is one (the merchant's or the orders', shared), else a
 * new one the payouts hold, which takes no slot and sends no Address Watch webhook. `created`:
 * tell the registry after the commit.
 */
export async function watchForPayout(
  trx: Kysely<Database>, input: { accountId: number; env: Environment; networkSlug: string; address: ParsedAddress; createdAt?: string },
): Promise<{ row: WatchedAddressRow; created: boolean }> {
  return (await watchesForPayout(trx, input, [input.address]))[0]!;
}

/** Chunks of a list for `in (...)` and multi-row inserts, within SQLite's variable limit. */
const CHUNK = 200;
const chunks = <T>(xs: readonly T[]): T[][] => Array.from({ length: Math.ceil(xs.length / CHUNK) }, (_, i) => xs.slice(i * CHUNK, (i + 1) * CHUNK));

/**
 * watchForPayout for many addresses of one account and environment at once (a batch of payout
 * lines): one lock, the existing watches read and the new ones written a chunk a statement, so
 * 1,000 lines cost a few statements rather than five each. Answers in the order of `addresses`.
 */
export async function watchesForPayout(
  trx: Kysely<Database>, input: { accountId: number; env: Environment; networkSlug: string; createdAt?: string }, addresses: readonly ParsedAddress[],
): Promise<Array<{ row: WatchedAddressRow; created: boolean }>> {
  if (addresses.length === 0) return [];
  await lockFor(trx, `watches:${input.accountId}`);
  const found = new Map<string, { row: WatchedAddressRow; created: boolean }>();
  for (const keys of chunks([...new Set(addresses.map((a) => a.key))])) {
    const rows = await trx.selectFrom('watched_addresses').selectAll().where('account_id', '=', input.accountId)
      .where('network_environment_id', '=', input.env.id).where('address_key', 'in', keys).execute();
    for (const row of rows) found.set(row.address_key, { row, created: false });
  }
  const missing = [...new Map(addresses.filter((a) => !found.has(a.key)).map((a) => [a.key, a])).values()];
  if (missing.length > 0) {
    const startHeight = await startHeightIn(trx, input.env.id);
    const createdAt = input.createdAt ?? new Date().toISOString();
    const made: WatchedAddressRow[] = [];
    for (const part of chunks(missing)) {
      made.push(...await trx.insertInto('watched_addresses').values(part.map((a) => ({
        watch_id: newWatchId(), account_id: input.accountId, network_environment_id: input.env.id, network_slug: input.networkSlug,
        address: a.display, address_key: a.key, created_at: createdAt, start_height: startHeight, holder: 'payout',
      }))).returningAll().execute());
    }
    for (const row of made) found.set(row.address_key, { row, created: true });
    await notifyIn(trx, CHANNELS.watches, made.map((row) => JSON.stringify({ op: '+', row })));
  }
  return addresses.map((a) => found.get(a.key)!);
}

/**
 * No payout line tracks through the watch any more (payouts/ tells it, in its transaction): a
 * payouts' watch goes, or passes to the orders when an order uses it meanwhile; the merchant's
 * and the orders' stay theirs. Returns the removed watch, for the registry after the commit.
 */
export async function payoutsDone(trx: Kysely<Database>, watchId: string): Promise<WatchedAddressRow | undefined> {
  return (await payoutsDoneAll(trx, [watchId]))[0];
}

/** payoutsDone for many watches at once (a batch's lines completed together); the removed ones. */
export async function payoutsDoneAll(trx: Kysely<Database>, watchIds: readonly string[]): Promise<WatchedAddressRow[]> {
  const removed: WatchedAddressRow[] = [];
  for (const ids of chunks([...new Set(watchIds)])) {
    const rows = await trx.selectFrom('watched_addresses').selectAll().where('watch_id', 'in', ids).where('holder', '=', 'payout').execute();
    const toOrders = rows.filter((r) => r.order_open === 1 || r.order_held === 1).map((r) => r.watch_id);
    const gone = rows.filter((r) => r.order_open !== 1 && r.order_held !== 1).map((r) => r.watch_id);
    if (toOrders.length > 0) await trx.updateTable('watched_addresses').set({ holder: 'order' }).where('watch_id', 'in', toOrders).execute();
    if (gone.length > 0) removed.push(...await trx.deleteFrom('watched_addresses').where('watch_id', 'in', gone).returningAll().execute());
  }
  await notifyIn(trx, CHANNELS.watches, removed.map((row) => JSON.stringify({ op: '-', row })));
  return removed;
}
