import type { Metrics } from '../metrics/index.js';
import type { Store } from '../store/index.js';
import type { AddressWatch } from '../watch/service.js';

/** Store query time, for `Store.open({ onQuery })`. */
export function storeQueryObserver(metrics: Metrics): ((ms: number, ok: boolean) => void) | undefined {
  if (!metrics.enabled) return undefined;
  const h = metrics.histogram('store_query_duration_seconds', 'Store query time, by outcome', ['outcome']);
  const ok = h.labels({ outcome: 'ok' });
  const failed = h.labels({ outcome: 'error' });
  return (ms, success) => (success ? ok : failed).observe(ms / 1000);
}

/** Webhook attempt results, for the delivery worker's `onAttempt`. */
export function deliveryObserver(metrics: Metrics): (result: string) => void {
  const c = metrics.counter('webhook_delivery_attempts_total', 'Webhook delivery attempts by result (delivered, retry, failed, gone)', ['result']);
  return (result) => c.inc({ result });
}

/** What the service's background parts expose at scrape time: outbox depth and scanner lag. */
export function observeService(metrics: Metrics, store: Store, watch: AddressWatch): void {
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
  metrics.gauge('scanner_lag_blocks', 'Blocks between a network\'s head and the next block its Address Watch scanner records', {
    labelNames: ['network'],
    collect: (g) => {
      g.reset();
      for (const { network, lag } of watch.scannerLags()) if (lag !== undefined) g.set({ network }, lag);
    },
  });
}
