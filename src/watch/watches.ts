import { randomBytes } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { CHANNELS, lockFor, notifyIn, type Database, type Environment, type Plan, type Store, type WatchedAddressRow } from '../store/index.js';
import type { ParsedAddress } from '../chains/address.js';
import type { WatchedAddress } from '../client/address-watch.js';
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
  plan: Plan | undefined;
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
  if (existing && !(await counted(trx, existing.watch_id))) await checkSlots();
  if (existing && input.claim) {
    // A release in flight (engine.ts #letGo) holds its order's row: the first update waits for
    // it, and what it did is seen after (the watch removed: a new one is added below; or
    // handed to a newer order, which the second update takes it from).
    const disown = (watchId: string) => trx.updateTable('payment_orders').set({ owns_watch: 0 })
      .where('watch_id', '=', watchId).where('owns_watch', '=', 1).execute();
    await disown(existing.watch_id);
    existing = await find();
    if (existing) await disown(existing.watch_id);
  }
  if (existing) return { row: existing, created: false };
  await checkSlots();
  const startHeight = await startHeightIn(trx, input.env.id);
  const row = await trx.insertInto('watched_addresses').values({
    watch_id: newWatchId(), account_id: input.accountId, network_environment_id: input.env.id,
    network_slug: input.networkSlug, address: input.address.display, address_key: input.address.key,
    created_at: input.createdAt ?? new Date().toISOString(), start_height: startHeight,
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
 * its address back; its events keep naming the same watch). undefined when it is still there.
 */
export async function restoreWatchIn(
  trx: Kysely<Database>, watch: Omit<WatchedAddressRow, 'id' | 'created_at' | 'start_height'> & { start_height?: number },
): Promise<WatchedAddressRow | undefined> {
  await lockFor(trx, `watches:${watch.account_id}`);
  const exists = await trx.selectFrom('watched_addresses').select('id').where('watch_id', '=', watch.watch_id).executeTakeFirst();
  if (exists) return undefined;
  // A new start like any add (the blocks already recorded were matched without it), unless
  // the caller knows an earlier one: a rewind below the new start would otherwise hide the
  // watch's payments in the blocks scanned again.
  const next = await startHeightIn(trx, watch.network_environment_id);
  const startHeight = Math.min(next, watch.start_height ?? next);
  const row = await trx.insertInto('watched_addresses').values({ ...watch, created_at: new Date().toISOString(), start_height: startHeight })
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
 * Watches holding a slot. A watch kept only for a closed payment order's finality hold
 * (`payment_orders.held`) holds none: a slot is the order's while it is open; it counts again
 * once an open order shares it.
 */
export async function countWatches(db: Store['db'], accountId: number): Promise<number> {
  const r = await holdingSlots(db).select(sql<number>`count(*)`.as('n')).where('w.account_id', '=', accountId).executeTakeFirst();
  return Number(r?.n ?? 0);
}

/** Whether the watch holds a slot (see countWatches). */
async function counted(db: Kysely<Database>, watchId: string): Promise<boolean> {
  return (await holdingSlots(db).select('w.id').where('w.watch_id', '=', watchId).executeTakeFirst()) !== undefined;
}

function holdingSlots(db: Kysely<Database>) {
  return db.selectFrom('watched_addresses as w').where((eb) => eb.or([
    eb.not(eb.exists(eb.selectFrom('payment_orders as h').select('h.id').whereRef('h.watch_id', '=', 'w.watch_id').where('h.held', '=', 1).where('h.owns_watch', '=', 1))),
    eb.exists(eb.selectFrom('payment_orders as o').select('o.id').whereRef('o.watch_id', '=', 'w.watch_id').where('o.open', '=', 1)),
  ]));
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
 * finality hold still uses it, given back to that order (`kept: true`): it stops holding a slot
 * and sending the merchant's webhooks, and goes when the order's funding is final, so a reorg
 * is still seen.
 */
export async function deleteWatch(store: Store, accountId: number, watchId: string): Promise<{ row: WatchedAddressRow; kept: boolean } | undefined> {
  return store.db.transaction().execute(async (trx) => {
    const holder = await trx.selectFrom('payment_orders').select('id').where('account_id', '=', accountId).where('watch_id', '=', watchId)
      .where('held', '=', 1).where('open', '=', 0).orderBy('id', 'desc').executeTakeFirst();
    const held = holder && await trx.selectFrom('watched_addresses').selectAll().where('watch_id', '=', watchId).where('account_id', '=', accountId).executeTakeFirst();
    if (holder && held) {
      await trx.updateTable('payment_orders').set({ owns_watch: 1 }).where('id', '=', holder.id).execute();
      return { row: held, kept: true };
    }
    const row = await deleteWatchIn(trx, watchId, accountId);
    return row && { row, kept: false };
  });
}

export async function allWatches(store: Store): Promise<WatchedAddressRow[]> {
  return store.db.selectFrom('watched_addresses').selectAll().execute();
}
