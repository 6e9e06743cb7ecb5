import type { Kysely } from 'kysely';
import { orderOverpaid } from './shown-amount.js';
import type { Database, WatchedAddressRow } from '../store/index.js';
import { removedEvents } from '../watch/events.js';
import { restoreWatchIn, watchAt, watchHolder } from '../watch/watches.js';
import { covers } from './amounts.js';
import { guard, orderOf, totalOf, type EngineDeps } from './engine-core.js';
import { tellWatch } from './holds.js';
import { getSettings, type OrderRow } from './orders.js';
import { transition } from './transition.js';

/** Funding not yet taken off whose event left the chain: from the few removed events (watch/events.ts removedEvents). */
function reorgedQuery(db: Kysely<Database>) {
  return db.selectFrom(removedEvents(db).as('e')).crossJoin('payment_funding as f')
    .select(['f.id', 'f.order_pk', 'f.tx_hash']).whereRef('f.event_id', '=', 'e.id').where('f.removed', '=', 0).limit(500);
}

/**
 * Funding whose block left the chain comes off its order at once, whatever its status; the
 * order moves back if no longer covered. Its sighting goes too, so the same transaction in a
 * new block is `seen` again.
 */
export async function reorged(d: EngineDeps, nowMs: number): Promise<number> {
  const rows = await reorgedQuery(d.store.db).execute();
  if (rows.length === 0) return 0;
  const byOrder = new Map<number, Array<{ id: number; tx_hash: string }>>();
  for (const r of rows) byOrder.set(r.order_pk, [...(byOrder.get(r.order_pk) ?? []), r]);
  for (const [orderPk, gone] of byOrder) {
    await guard(async () => {
      const reopened = await d.store.db.transaction().execute((trx) => takeOff(d, trx, orderPk, gone, nowMs));
      if (reopened) d.watches.added(reopened);
      d.onDeliveries();
      return 1;
    });
  }
  return rows.length;
}

/** Takes the funding off and moves the order back; the watch restored for a reopened order, if any. */
async function takeOff(
  d: EngineDeps, trx: Kysely<Database>, orderPk: number, gone: Array<{ id: number; tx_hash: string }>, nowMs: number,
): Promise<WatchedAddressRow | undefined> {
  await trx.updateTable('payment_funding').set({ removed: 1 }).where('id', 'in', gone.map((g) => g.id)).execute();
  await trx.updateTable('payment_sightings').set({ removed: 1 }).where('order_pk', '=', orderPk)
    .where('tx_hash', 'in', [...new Set(gone.map((g) => g.tx_hash))]).where('removed', '=', 0).execute();
  const order = (await orderOf(trx, orderPk))!;
  const settings = await getSettings(trx, order.account_id);
  const total = await totalOf(trx, orderPk);
  const amount = BigInt(order.amount_raw);
  const decided = order.status === 'failed' || order.status === 'pending';
  const overpaidNow = orderOverpaid(d.config, d.store.catalog.environment(order.network_environment_id), order, total);
  if (decided || (covers(total, amount, settings.underpaid_tolerance_bps) && order.status !== 'seen')) {
    await trx.updateTable('payment_orders').set({ received_raw: total.toString(), overpaid: overpaidNow ? 1 : 0 }).where('id', '=', orderPk).execute();
    return undefined;
  }
  await trx.updateTable('aml_jobs').set({ status: 'cancelled', last_error: 'funding left the chain (reorg)' })
    .where('order_pk', '=', orderPk).where('status', '=', 'pending').execute();
  const expired = nowMs >= Number(order.expires_ms);
  // A paid order had let its address go: it is payable again, so it takes it back; taken
  // back after `expires_at` it is an expired order like any other, which keeps its address
  // (late payments recorded) until the late window ends.
  const taken = await trx.selectFrom('payment_orders').select('id').where('network_environment_id', '=', order.network_environment_id)
    .where('address_key', '=', order.address_key).where('open', '=', 1).executeTakeFirst();
  const reopen = order.open === 0 && !taken && (!expired || nowMs < Number(order.monitor_until_ms));
  const current = reopen ? await rewatch(trx, order) : { order, watch: undefined };
  await transition(trx, { store: d.store, config: d.config }, current.order, {
    status: expired ? 'expired' : 'underpaid', txHash: null, reason: 'reorg', receivedRaw: total, overpaid: overpaidNow,
    aml: null, close: false,
  }, nowMs);
  // Open again: it holds its address (and a slot) like any open order, not a finality hold.
  if (reopen) {
    await trx.updateTable('payment_orders').set({ open: 1, held: 0 }).where('id', '=', orderPk).execute();
    await tellWatch(trx, current.order.watch_id);
  }
  return current.watch;
}

/**
 * A reopened order's watch: still there, or its own again, or, when the merchant watches the
 * address through the API meanwhile, that watch, shared (the unique (account, environment,
 * address) allows one).
 */
async function rewatch(trx: Kysely<Database>, order: OrderRow): Promise<{ order: OrderRow; watch: WatchedAddressRow | undefined }> {
  if (await watchHolder(trx, order.watch_id)) return { order, watch: undefined };
  const other = await watchAt(trx, order.account_id, order.network_environment_id, order.address_key);
  if (other) {
    // Not its own (owns_watch: what an instance of the previous release reads, watches.ts handToMerchant).
    await trx.updateTable('payment_orders').set({ watch_id: other.watch_id, owns_watch: 0 }).where('id', '=', order.id).execute();
    return { order: { ...order, watch_id: other.watch_id, owns_watch: 0 }, watch: undefined };
  }
  const watch = await restoreWatchIn(trx, {
    watch_id: order.watch_id, account_id: order.account_id, network_environment_id: order.network_environment_id,
    // A referenced order's watch is on its reference (address_key its watch key), not the wallet.
    network_slug: order.network, address: order.reference ?? order.address, address_key: order.address_key,
  });
  return { order, watch };
}
