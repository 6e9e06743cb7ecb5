import type { Selectable } from 'kysely';
import { orderOverpaid } from './shown-amount.js';
import { DEFAULT_FAMILY } from '../chains/traits.js';
import type { AmlJobsTable } from '../store/payment-tables.js';
import { sanctionKey } from './aml/sanctions.js';
import { AmlRetryError, combine, failsAt, type AmlResult } from './aml/types.js';
import { guard, orderOf, totalOf, type EngineDeps } from './engine-core.js';
import { tellWatch } from './holds.js';
import { getSettings, type FailAt, type OrderRow } from './orders.js';
import { transition } from './transition.js';

/** Screening retry backoff: a provider that keeps failing holds the order, never passes it. */
const AML_BACKOFF_MS = [2_000, 10_000, 30_000, 120_000, 600_000, 1_800_000, 3_600_000];

type Job = Selectable<AmlJobsTable>;
type Senders = Array<{ from_address: string | null; tx_hash: string }>;

/** Screens due jobs: every funding sender of the order; the worst result decides. */
export async function screenDue(d: EngineDeps, nowMs: number): Promise<number> {
  const { store } = d;
  const jobs = await store.db.selectFrom('aml_jobs').selectAll().where('status', '=', 'pending').where('next_attempt_ms', '<=', nowMs)
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', nowMs)])).orderBy('id').limit(10).execute();
  let done = 0;
  for (const job of jobs) {
    const claimed = await store.db.updateTable('aml_jobs').set({ lease_until: nowMs + d.amlLeaseMs, attempts: job.attempts + 1 })
      .where('id', '=', job.id).where('status', '=', 'pending').where('attempts', '=', job.attempts).executeTakeFirst();
    if (Number(claimed.numUpdatedRows) !== 1) continue;
    const order = (await orderOf(store.db, job.order_pk))!;
    if (order.status !== 'aml_check') {
      await store.db.updateTable('aml_jobs').set({ status: 'cancelled', lease_until: null }).where('id', '=', job.id).execute();
      continue;
    }
    const senders = await store.db.selectFrom('payment_funding').select(['from_address', 'tx_hash']).where('order_pk', '=', order.id)
      .where('counted', '=', 1).where('removed', '=', 0).orderBy('id').execute();
    const result = await screen(d, job, order, senders);
    if (!result) continue;
    done += await guard(() => decide(d, job, order, senders, result));
  }
  return done;
}

/** The worst result over the order's senders; undefined when the provider failed (the job is retried later). */
async function screen(d: EngineDeps, job: Job, order: OrderRow, senders: Senders): Promise<AmlResult | undefined> {
  const env = d.store.catalog.environment(order.network_environment_id);
  try {
    const seen = new Set<string>();
    const results: AmlResult[] = [];
    for (const s of senders) {
      // Once per address as the list matches it: only 0x addresses are case-insensitive (two
      // base58 senders, Solana's or Tron's, that differ in case are two senders).
      if (!s.from_address || seen.has(sanctionKey(s.from_address))) continue;
      seen.add(sanctionKey(s.from_address));
      results.push(await d.aml.screen({ family: env?.network.family ?? DEFAULT_FAMILY, network: order.network, address: s.from_address, txHash: s.tx_hash }));
    }
    if (results.length === 0) throw new Error('no sender to screen');
    return combine(results);
  } catch (err) {
    const attempt = job.attempts + 1;
    const delay = err instanceof AmlRetryError && err.retryAfterMs !== undefined
      ? Math.max(err.retryAfterMs, 500) : AML_BACKOFF_MS[Math.min(attempt - 1, AML_BACKOFF_MS.length - 1)]!;
    await d.store.db.updateTable('aml_jobs').set({ next_attempt_ms: Date.now() + delay, lease_until: null, last_error: (err as Error).message })
      .where('id', '=', job.id).execute();
    d.log(`payments: screening ${order.payment_id} failed (attempt ${attempt}, next in ${Math.round(delay / 1000)} s): ${(err as Error).message}`);
    return undefined;
  }
}

/** `paid` or `failed` (aml_rejected) by the merchant's threshold; the order closes and holds its watch until final. */
async function decide(d: EngineDeps, job: Job, order: OrderRow, senders: Senders, result: AmlResult): Promise<number> {
  await d.store.db.transaction().execute(async (trx) => {
    const current = (await orderOf(trx, order.id))!;
    if (current.status !== 'aml_check' || current.seq !== order.seq) return;
    const settings = await getSettings(trx, current.account_id);
    const rejected = failsAt(result.risk_level, settings.aml_fail_at as FailAt);
    const total = await totalOf(trx, current.id);
    const lastTx = senders.at(-1)?.tx_hash ?? null;
    await transition(trx, { store: d.store, config: d.config }, current, rejected
      ? { status: 'failed', txHash: lastTx, reason: 'aml_rejected', aml: result, close: true }
      : { status: 'paid', txHash: lastTx, reason: null, aml: result, receivedRaw: total, overpaid: orderOverpaid(d.config, d.store.catalog.environment(current.network_environment_id), current, total), close: true });
    await trx.updateTable('aml_jobs').set({ status: 'done', lease_until: null, last_error: null }).where('id', '=', job.id).execute();
    // Closed: the address is free for another order, but the watch stays until the funding
    // is final, so a reorg that takes it off (and a chain that mines it again) is seen.
    await trx.updateTable('payment_orders').set({ held: 1 }).where('id', '=', current.id).execute();
    await tellWatch(trx, current.watch_id);
  });
  // Counted (the loop goes on at once) also when another process decided the order first.
  d.onDeliveries();
  return 1;
}
