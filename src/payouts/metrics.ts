import type { Metrics } from '../metrics/index.js';
import type { Store } from '../store/index.js';
import { PAYOUT_STATUSES } from '../wire/payouts.js';

/**
 * `rpcctl_payout_lines{status}`: refund and payout lines by status, counted in the store at
 * scrape time (one grouped count), every status published (0 when none).
 */
export function observePayouts(metrics: Metrics, store: Store): void {
  metrics.gauge('payout_lines', 'Refund and payout lines by status, counted in the store at scrape time', {
    labelNames: ['status'],
    collect: async (g) => {
      const rows = await store.db.selectFrom('payout_lines').select((eb) => ['status', eb.fn.countAll<number>().as('n')]).groupBy('status').execute();
      const counts = new Map(rows.map((r) => [r.status, Number(r.n)]));
      g.reset();
      for (const status of PAYOUT_STATUSES) g.set({ status }, counts.get(status) ?? 0);
    },
  });
}
