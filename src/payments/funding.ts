import { sql, type Kysely } from 'kysely';
import { orderOverpaid } from './shown-amount.js';
import type { Database } from '../store/index.js';
import { hitEvents, removedEvents, type HitEvent } from '../watch/events.js';
import { covers } from './amounts.js';
import { assetOfRow, hitIsAsset, paysRecipient } from './assets.js';
import { ACTIVE, guard, orderOf, totalOf, type EngineDeps } from './engine-core.js';
import { getSettings, OrderChangedError, openOrderAt, type OrderRow, type StoredSettings } from './orders.js';
import { sight } from './sightings.js';
import { transition } from './transition.js';

/** A payment event waiting to be applied to an order: its typed columns (watch/events.ts hitEvents). */
interface EventRow extends Pick<HitEvent, 'block_height' | 'tx_hash' | 'from_address' | 'to_address' | 'token' | 'amount' | 'direction'> {
  event_id: number;
  order_pk: number;
}

/**
 * New `payment` events of open orders' watches, not yet applied to the order, oldest first; with
 * `held`, the same for closed orders keeping their watch until their funding is final (a
 * transaction of theirs that a reorg took off and the chain mined again). From the orders (a
 * partial index holds only the open ones, another the held ones) to each one's watch's payment
 * events since the order was created (`watch_events_watch_payments`): joined the other way
 * round, the order of `e.id` made SQLite walk every event kept to find none. `open = 1` is a
 * literal: a partial index (`WHERE open = 1`) is only usable when the query's own condition is
 * the same constant, not a bound parameter.
 */
function ingestQuery(db: Kysely<Database>, orders: 'open' | 'held' = 'open') {
  // CROSS JOIN keeps the orders outer on SQLite, whose planner (no statistics) would otherwise
  // walk the events in id order to spare the sort; PostgreSQL plans it as the join it is.
  return db.selectFrom('payment_orders as o').crossJoin(hitEvents(db, { types: ['payment'] }).as('e'))
    .leftJoin('payment_funding as f', (j) => j.onRef('f.event_id', '=', 'e.id').onRef('f.order_pk', '=', 'o.id'))
    .select(['e.id as event_id', 'e.block_height', 'e.tx_hash', 'e.from_address', 'e.to_address', 'e.token', 'e.amount', 'e.direction', 'o.id as order_pk'])
    .where(`o.${orders}`, '=', sql.lit(1)).whereRef('e.watch_id', '=', 'o.watch_id').whereRef('e.created_at', '>=', 'o.created_at')
    .where('f.id', 'is', null)
    .orderBy('e.id').limit(500);
}

/** New `payment` events of open orders' watches, not yet applied to the order. */
export async function ingest(d: EngineDeps, nowMs: number): Promise<number> {
  const db = d.store.db;
  const rows: EventRow[] = [...await ingestQuery(db).execute(), ...await ingestQuery(db, 'held').execute()];
  if (rows.length === 0) return 0;
  const byOrder = new Map<number, EventRow[]>();
  for (const r of rows) byOrder.set(r.order_pk, [...(byOrder.get(r.order_pk) ?? []), r]);
  let changed = 0;
  for (const [orderPk, events] of byOrder) changed += await guard(() => fund(d, orderPk, events, nowMs));
  return changed || rows.length;
}

/** What applying a batch of events to an order counted. */
interface Applied {
  fresh: string[];
  onlyReturning: boolean;
  lateTx: boolean;
}

/** Applies the events to one order and moves it on, in one transaction. */
async function fund(d: EngineDeps, orderPk: number, events: EventRow[], nowMs: number): Promise<number> {
  const { store } = d;
  const settings = await getSettings(store.db, (await orderOf(store.db, orderPk))!.account_id);
  const result = await store.db.transaction().execute(async (trx) => {
    const order = (await orderOf(trx, orderPk))!;
    // Funding whose block left the chain and is not taken off yet (the scanner rewound after
    // reorged() looked): counting the new chain now would count a re-mined transaction twice.
    const stale = await trx.selectFrom('payment_funding as f').innerJoin(removedEvents(trx).as('e'), 'e.id', 'f.event_id').select('f.id')
      .where('f.order_pk', '=', orderPk).where('f.removed', '=', 0).executeTakeFirst();
    if (stale) return 0;
    const applied = await apply(d, trx, order, events, nowMs);
    if (applied.fresh.length === 0) return 0;
    return decide(d, trx, order, settings, applied, nowMs);
  });
  if (result > 0) {
    d.onDeliveries();
    // An order at `aml_check` now: the screening loop looks at once rather than at its next tick.
    d.kick();
  }
  return result;
}

/** Records each event as the order's funding; which of them count, and whether late. */
async function apply(d: EngineDeps, trx: Kysely<Database>, order: OrderRow, events: EventRow[], nowMs: number): Promise<Applied> {
  const env = d.store.catalog.environment(order.network_environment_id);
  const asset = assetOfRow(d.config, env, order.asset, order.decimals);
  // A transaction the order counted before a reorg took it off, now back in a new block.
  const before = await trx.selectFrom('payment_funding').select(['tx_hash', 'late']).where('order_pk', '=', order.id)
    .where('removed', '=', 1).where('counted', '=', 1).execute();
  const returning = new Map(before.map((r) => [r.tx_hash, r.late === 1]));
  // Sighted in a block before `expires_at` (the look-ahead's `seen`), even if a reorg took it
  // off before it was confirmed: paid in time, so in time when mined again after expiry.
  const sightedInTime = new Set((await trx.selectFrom('payment_sightings').select('tx_hash').where('order_pk', '=', order.id)
    .where('seen_ms', '<', Number(order.expires_ms)).execute()).map((r) => r.tx_hash));
  // A closed order still watching its address (the finality hold) keeps what comes to it, as
  // funds after `paid` always were (amount_received, no transition), unless a newer open
  // order took the address: then a new transfer is that order's.
  const keepsNew = order.open === 1 || !(await openOrderAt(trx, order.network_environment_id, order.address_key));
  // A transaction another order of this watch (its address) counted is that order's, also when a
  // reorg took it off and the chain mines it again after a newer order took the address: counted
  // by both, one payment would pay two orders.
  const others = new Set((await trx.selectFrom('payment_orders as o').innerJoin('payment_funding as f', 'f.order_pk', 'o.id').select('f.tx_hash')
    .where('o.watch_id', '=', order.watch_id).where('o.id', '!=', order.id).where('f.counted', '=', 1)
    .where('f.tx_hash', 'in', [...new Set(events.map((e) => e.tx_hash))]).execute()).map((r) => r.tx_hash));
  const applied: Applied = { fresh: [], onlyReturning: true, lateTx: false };
  for (const e of events) {
    const counted = e.direction === 'in' && hitIsAsset(asset, e.token) && BigInt(e.amount) > 0n && !others.has(e.tx_hash) && paysRecipient(order, e.to_address)
      && (keepsNew || returning.has(e.tx_hash));
    const txLate = returning.has(e.tx_hash) ? returning.get(e.tx_hash)!
      : !sightedInTime.has(e.tx_hash) && (order.status === 'expired' || order.late === 1);
    const inserted = await trx.insertInto('payment_funding').values({
      order_pk: order.id, event_id: e.event_id, tx_hash: e.tx_hash, from_address: e.from_address, amount_raw: e.amount,
      block_height: e.block_height, counted: counted ? 1 : 0, late: txLate ? 1 : 0, removed: 0, created_at: new Date(nowMs).toISOString(),
      // Another instance applied this event since our read (payment_funding_event): an expected
      // race, not an error. The whole change rolls back and is nothing to do on the next pass.
    }).onConflict((oc) => oc.columns(['order_pk', 'event_id']).doNothing()).executeTakeFirst();
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) !== 1) throw new OrderChangedError(`event ${e.event_id} already applied to order ${order.id}`);
    if (!counted) continue;
    applied.fresh.push(e.tx_hash);
    if (!returning.has(e.tx_hash)) applied.onlyReturning = false;
    if (txLate) applied.lateTx = true;
  }
  return applied;
}

/** The order's next status after new funding: `seen` per new transaction, then the decision. */
async function decide(d: EngineDeps, trx: Kysely<Database>, first: OrderRow, settings: StoredSettings, a: Applied, nowMs: number): Promise<number> {
  const ctx = { store: d.store, config: d.config };
  let order = first;
  // Late when a transfer is: one paid in time and mined again after `expires_at` is not.
  const late = a.lateTx || (order.late === 1 && !a.onlyReturning);
  const total = await totalOf(trx, order.id);
  const amount = BigInt(order.amount_raw);
  // Against what the checkout asked (shown-amount.ts), not the exact amount: paying the page is not overpaying.
  const overpaid = orderOverpaid(d.config, d.store.catalog.environment(order.network_environment_id), order, total);
  // Funds after the order was decided, or while it is being screened, are recorded on it
  // (amount_received, tx_hashes) without a new transition.
  if (!ACTIVE.includes(order.status) && order.status !== 'expired') {
    await trx.updateTable('payment_orders').set({ received_raw: total.toString(), overpaid: overpaid ? 1 : 0, updated_at: new Date(nowMs).toISOString() })
      .where('id', '=', order.id).execute();
    return 0;
  }
  let n = 0;
  // One `seen` per funding transaction and sighting: the store's unique key decides who sends
  // it, the unconfirmed look (sightings()) or this record, whichever inserts the sighting.
  for (const tx of a.fresh) {
    if (!(await sight(trx, order.id, tx, nowMs))) continue;
    order = await transition(trx, ctx, order, { status: 'seen', txHash: tx, receivedRaw: total, overpaid, late }, nowMs);
    n++;
  }
  const txHash = a.fresh.at(-1)!;
  const enough = covers(total, amount, settings.underpaid_tolerance_bps);
  // The total rides on the decision too: a transaction whose `seen` went out unconfirmed has no other.
  const received = { txHash, receivedRaw: total, overpaid };
  if (late && !settings.accept_late) {
    await transition(trx, ctx, order, { status: 'expired', reason: enough ? 'late' : 'partial', ...received }, nowMs);
  } else if (enough) {
    await transition(trx, ctx, order, { status: 'aml_check', aml: null, ...received }, nowMs);
    await trx.insertInto('aml_jobs').values({
      order_pk: order.id, status: 'pending', attempts: 0, next_attempt_ms: nowMs, lease_until: null, last_error: null, created_at: new Date(nowMs).toISOString(),
    }).execute();
  } else if (late || order.status === 'expired') {
    await transition(trx, ctx, order, { status: 'expired', reason: 'partial', ...received }, nowMs);
  } else {
    await transition(trx, ctx, order, { status: 'underpaid', ...received }, nowMs);
  }
  return n + 1;
}
