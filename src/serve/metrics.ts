import type { Metrics } from '../metrics/index.js';
import type { Store } from '../store/index.js';
import type { AddressWatch } from '../watch/service.js';
import { RedisLimits, type Limits } from '../limits/index.js';
import { observeRedisFallbacks } from '../metrics/redis.js';
import type { RedisCacheTier } from '../gateway/index.js';

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
    labelNames: ['network', 'env'],
    collect: (g) => {
      g.reset();
      for (const { network, env, lag } of watch.scannerLags()) if (lag !== undefined) g.set({ network, env }, lag);
    },
  });
}

/**
 * Redis in multi-instance mode: whether each part counts in Redis right now (1) or fell back
 * to this instance's memory (0), and how often memory answered instead; the fallback is never
 * silent. Nothing is registered when the service runs without Redis.
 */
export function observeRedis(metrics: Metrics, limits: Limits, cache: RedisCacheTier | undefined): void {
  const parts: Array<{ part: string; source: { shared: boolean; fallbacks: number } }> = [];
  if (limits instanceof RedisLimits) parts.push({ part: 'limits', source: limits });
  if (cache) parts.push({ part: 'cache', source: cache });
  if (parts.length === 0) return;
  metrics.gauge('redis_shared', 'Whether a part (limits, cache) counts in the shared Redis right now (1) or in this instance\'s memory (0)', {
    labelNames: ['part'],
    collect: (g) => { for (const { part, source } of parts) g.set({ part }, source.shared ? 1 : 0); },
  });
  observeRedisFallbacks(metrics, parts);
}
