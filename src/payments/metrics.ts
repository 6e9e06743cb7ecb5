import type { Metrics } from '../metrics/index.js';
import type { Store } from '../store/index.js';
import type { PaymentStatus } from './orders.js';

/** Every status an order can be in: each is published, 0 when none, so a rate or an alert never sees a gap. */
const STATUSES = ['pending', 'seen', 'underpaid', 'aml_check', 'paid', 'failed', 'expired'] as const satisfies readonly PaymentStatus[];

/**
 * `rpcctl_payment_orders{status}`: orders by status, counted in the store at scrape time (one
 * grouped count on the status index; seven series whatever the volume), so every instance
 * reports the same shared truth and nothing is kept in step on the order paths.
 */
export function observePayments(metrics: Metrics, store: Store): void {
  metrics.gauge('payment_orders', 'Payment orders by status, counted in the store at scrape time', {
    labelNames: ['status'],
    collect: async (g) => {
      const rows = await store.db.selectFrom('payment_orders')
        .select((eb) => ['status', eb.fn.countAll<number>().as('n')]).groupBy('status').execute();
      const counts = new Map(rows.map((r) => [r.status, Number(r.n)]));
      g.reset();
      for (const status of STATUSES) g.set({ status }, counts.get(status) ?? 0);
    },
  });
}
