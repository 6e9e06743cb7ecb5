import type { Metrics } from '../metrics/index.js';
import type { Store } from '../store/index.js';

/**
 * Webhook attempt results, for the delivery worker's `onAttempt`. Apart from `observeWebhooks`:
 * the worker (run by Address Watch) needs it before it starts, the routes only after.
 */
export function deliveryObserver(metrics: Metrics): (result: string) => void {
  const c = metrics.counter('webhook_delivery_attempts_total', 'Webhook delivery attempts by result (delivered, retry, failed, gone)', ['result']);
  return (result) => c.inc({ result });
}

/** The outbox at scrape time: how many deliveries wait, and how late the oldest is. */
export function observeWebhooks(metrics: Metrics, store: Store): void {
  metrics.gauge('webhook_outbox_depth', 'Webhook deliveries waiting to be sent (pending, including retries)', {
    collect: async (g) => {
      const row = await store.db.selectFrom('webhook_deliveries').select((eb) => eb.fn.countAll<number>().as('n'))
        .where('status', '=', 'pending').executeTakeFirst();
      g.set(Number(row?.n ?? 0));
    },
  });
  metrics.gauge('webhook_outbox_oldest_seconds', 'Age of the oldest pending webhook delivery\'s next attempt, in seconds past due (0 when none is due)', {
    collect: async (g) => {
      const row = await store.db.selectFrom('webhook_deliveries').select((eb) => eb.fn.min<number>('next_attempt_at').as('at'))
        .where('status', '=', 'pending').executeTakeFirst();
      const at = row?.at === null || row?.at === undefined ? undefined : Number(row.at);
      g.set(at === undefined ? 0 : Math.max(0, (Date.now() - at) / 1000));
    },
  });
}
