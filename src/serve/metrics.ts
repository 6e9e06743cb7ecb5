import type { Metrics } from '../metrics/index.js';
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
