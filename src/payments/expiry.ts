import { sql, type Kysely } from 'kysely';
import type { Database } from '../store/index.js';
import { ACTIVE, guard, orderOf, type EngineDeps } from './engine-core.js';
import { tellWatch } from './holds.js';
import { transition } from './transition.js';

/** Orders due to expire: `status` leads `payment_orders_status`, so finished orders are never read. */
function expireQuery(db: Kysely<Database>, nowMs: number) {
  return db.selectFrom('payment_orders').select('id')
    .where((eb) => eb.or([
      eb.and([eb('status', 'in', ['pending', 'underpaid']), eb('expires_ms', '<=', nowMs)]),
      eb.and([eb('status', '=', 'seen'), eb('monitor_until_ms', '<=', nowMs)]),
    ])).limit(200);
}

/** Expired orders still holding their address past the late window: the open ones only (a partial index, hence the literal). */
function closeWindowsQuery(db: Kysely<Database>, nowMs: number) {
  return db.selectFrom('payment_orders').select('id')
    .where('status', '=', 'expired').where('open', '=', sql.lit(1)).where('monitor_until_ms', '<=', nowMs).limit(200);
}

/** Orders past `expires_at` with nothing confirmed, or not enough. */
export async function expire(d: EngineDeps, nowMs: number): Promise<number> {
  const { store, config } = d;
  // `seen` at rest waits for confirmations of a transfer made in time; it expires only if
  // they never come (the transfer left the chain) by the end of the late window.
  const due = await expireQuery(store.db, nowMs).execute();
  for (const { id } of due) {
    await guard(() => store.db.transaction().execute(async (trx) => {
      const order = (await orderOf(trx, id))!;
      if (!ACTIVE.includes(order.status)) return 0;
      const window = config.payments.late_window_s * 1000;
      await transition(trx, { store, config }, order, {
        status: 'expired', txHash: null, reason: BigInt(order.received_raw) > 0n ? 'partial' : null,
        monitorUntilMs: Math.max(Number(order.expires_ms) + window, order.status === 'seen' ? nowMs + window : 0),
      }, nowMs);
      return 1;
    }));
  }
  if (due.length) d.onDeliveries();
  return due.length;
}

/** Expired orders whose late window is over let their address (and watch) go. */
export async function closeWindows(d: EngineDeps, nowMs: number): Promise<number> {
  const due = await closeWindowsQuery(d.store.db, nowMs).execute();
  for (const { id } of due) await guard(() => close(d, id));
  return due.length;
}

/** Ends an order's hold on its address: its watch stays (held) until its funding is final. */
async function close(d: EngineDeps, orderPk: number): Promise<number> {
  await d.store.db.transaction().execute(async (trx) => {
    const res = await trx.updateTable('payment_orders').set({ open: 0, held: 1 }).where('id', '=', orderPk).where('open', '=', 1)
      .returning('watch_id').executeTakeFirst();
    if (res) await tellWatch(trx, res.watch_id);
  });
  return 1;
}
