import { sql, type Kysely } from 'kysely';
import { orderOverpaid } from './shown-amount.js';
import type { Database } from '../store/index.js';
import { hitEvents } from '../watch/events.js';
import { assetOfRow, hitIsAsset, paysRecipient } from './assets.js';
import { guard, orderOf, totalOf, type EngineDeps } from './engine-core.js';
import type { TipWatcher } from './tip.js';
import { transition } from './transition.js';

/** Open orders that can still be seen (for unconfirmed sightings). Exported for the query-plan tests. */
export function sightingsQuery(db: Kysely<Database>) {
  return db.selectFrom('payment_orders').select(['id', 'watch_id', 'network_environment_id'])
    .where('open', '=', sql.lit(1)).where('status', 'in', ['pending', 'underpaid', 'seen', 'expired']);
}

/**
 * Transfers to open orders in blocks still short of the network's confirmations: `seen`
 * at once (once per transaction), the rest when the scanner records the confirmed block.
 */
export async function sightings(d: EngineDeps, tip: TipWatcher, nowMs: number): Promise<number> {
  const { store, config } = d;
  const open = await sightingsQuery(store.db).execute();
  const byEnv = new Map<number, Map<string, number>>();
  for (const o of open) {
    const env = store.catalog.environment(o.network_environment_id);
    if (!env || env.confirmations <= 1) continue;
    const m = byEnv.get(env.id) ?? new Map<string, number>();
    m.set(o.watch_id, o.id);
    byEnv.set(env.id, m);
  }
  let n = 0;
  for (const [envId, watches] of byEnv) {
    const env = store.catalog.environment(envId)!;
    const look = await tip.hits(env, new Set(watches.keys()));
    for (const hit of look.hits) {
      const orderPk = watches.get(hit.watchId)!;
      n += await guard(async () => {
        const done = await store.db.transaction().execute(async (trx) => {
          const order = (await orderOf(trx, orderPk))!;
          const asset = assetOfRow(config, env, order.asset, order.decimals);
          if (!hitIsAsset(asset, hit.token) || BigInt(hit.amount) <= 0n || !paysRecipient(order, hit.to)) return 0;
          // Another order of this address counted it (a paid order's transfer a reorg took off,
          // mined again after a newer order took the address): that order's, not this one's (funding.ts).
          if (await countedElsewhere(trx, order, hit.txHash)) return 0;
          // The sighting's key (order, transaction, still on the chain) is unique in the store:
          // whichever of this look and the scanner's record (funding.ts) inserts it sends the one `seen`.
          if (!(await sight(trx, orderPk, hit.txHash, nowMs))) return 0;
          if (order.open !== 1 || !['pending', 'underpaid', 'seen', 'expired'].includes(order.status)) return 0;
          const late = order.status === 'expired' || nowMs > Number(order.expires_ms);
          await transition(trx, { store, config }, order, { status: 'seen', txHash: hit.txHash, late }, nowMs);
          return 1;
        });
        if (done) d.onDeliveries();
        return done;
      });
    }
    if (look.present) n += await vanished(d, watches, look.present, nowMs);
  }
  return n;
}

/** Whether another order of the order's watch counted `txHash` (even if a reorg took it off since). */
async function countedElsewhere(trx: Kysely<Database>, order: { id: number; watch_id: string }, txHash: string): Promise<boolean> {
  const row = await trx.selectFrom('payment_orders as o').innerJoin('payment_funding as f', 'f.order_pk', 'o.id').select('f.id')
    .where('o.watch_id', '=', order.watch_id).where('o.id', '!=', order.id).where('f.counted', '=', 1).where('f.tx_hash', '=', txHash)
    .limit(1).executeTakeFirst();
  return row !== undefined;
}

/** Inserts the sighting of `txHash` on the order; false when it was there (its `seen` went out). */
export async function sight(trx: Kysely<Database>, orderPk: number, txHash: string, nowMs: number): Promise<boolean> {
  const inserted = await trx.insertInto('payment_sightings').values({ order_pk: orderPk, tx_hash: txHash, seen_ms: nowMs })
    // No conflict target: the partial unique index (order_pk, tx_hash) WHERE removed = 0 is the
    // table's only key besides the id, on SQLite and PostgreSQL alike (a concurrent insert waits, then conflicts).
    .onConflict((oc) => oc.doNothing()).executeTakeFirst();
  return Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 1;
}

/**
 * Sightings no longer in the unconfirmed blocks nor recorded by the scanner: the transaction
 * left the chain before it was confirmed. It comes off the order at once; an order at `seen`
 * on it alone goes to `underpaid` (before `expires_at`) or `expired`, reason `reorg`.
 */
async function vanished(d: EngineDeps, watches: Map<string, number>, present: Set<string>, nowMs: number): Promise<number> {
  const { store } = d;
  const orderPks = [...watches.values()];
  if (orderPks.length === 0) return 0;
  const live = await store.db.selectFrom('payment_sightings as s').innerJoin('payment_orders as o', 'o.id', 's.order_pk')
    .leftJoin('payment_funding as f', (j) => j.onRef('f.order_pk', '=', 's.order_pk').onRef('f.tx_hash', '=', 's.tx_hash').on('f.removed', '=', 0))
    .select(['s.id', 's.order_pk', 's.tx_hash', 'o.watch_id']).where('s.order_pk', 'in', orderPks).where('s.removed', '=', 0).where('f.id', 'is', null)
    .execute();
  const gone = live.filter((r) => !present.has(`${r.watch_id} ${r.tx_hash}`));
  if (gone.length === 0) return 0;
  const byOrder = new Map<number, typeof gone>();
  for (const r of gone) byOrder.set(r.order_pk, [...(byOrder.get(r.order_pk) ?? []), r]);
  let n = 0;
  for (const [orderPk, rows] of byOrder) {
    n += await guard(async () => {
      const moved = await store.db.transaction().execute((trx) => takeOff(d, trx, orderPk, rows, nowMs));
      if (moved) d.onDeliveries();
      return moved;
    });
  }
  return n;
}

/** Takes the order's vanished sightings off; 1 when the order moved back from `seen`. */
async function takeOff(d: EngineDeps, trx: Kysely<Database>, orderPk: number, rows: Array<{ id: number; tx_hash: string }>, nowMs: number): Promise<number> {
  const { store, config } = d;
  const order = (await orderOf(trx, orderPk))!;
  // Recorded by the scanner since the look (its block confirmed): funding.ts takes it, not gone.
  const recorded = new Set((await trx.selectFrom(hitEvents(trx, { watchId: order.watch_id, types: ['payment'], since: order.created_at }).as('e'))
    .leftJoin('payment_funding as f', (j) => j.onRef('f.event_id', '=', 'e.id').on('f.order_pk', '=', orderPk))
    .select('e.tx_hash').where('f.id', 'is', null).execute())
    .map((e) => e.tx_hash));
  const off = rows.filter((r) => !recorded.has(r.tx_hash));
  if (off.length === 0) return 0;
  await trx.updateTable('payment_sightings').set({ removed: 1 }).where('id', 'in', off.map((r) => r.id)).where('removed', '=', 0).execute();
  if (order.status !== 'seen') return 0;
  // Another transfer still waiting for its confirmations keeps the order at `seen`.
  const waiting = await trx.selectFrom('payment_sightings as s')
    .leftJoin('payment_funding as f', (j) => j.onRef('f.order_pk', '=', 's.order_pk').onRef('f.tx_hash', '=', 's.tx_hash').on('f.removed', '=', 0))
    .select('s.id').where('s.order_pk', '=', orderPk).where('s.removed', '=', 0).where('f.id', 'is', null).executeTakeFirst();
  if (waiting) return 0;
  const total = await totalOf(trx, orderPk);
  await transition(trx, { store, config }, order, {
    status: nowMs >= Number(order.expires_ms) ? 'expired' : 'underpaid', txHash: null, reason: 'reorg',
    receivedRaw: total, overpaid: orderOverpaid(config, store.catalog.environment(order.network_environment_id), order, total),
  }, nowMs);
  return 1;
}
