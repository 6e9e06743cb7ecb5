import type { Metrics } from './index.js';

// Here, not in serve/metrics.ts with the other Redis gauges: the gateway's worker threads
// register it too, and the gateway sits below serve/.

/**
 * The decisions and reads that memory answered because Redis did not. Every thread with a
 * Redis client registers its own (the gateway workers decide most RPS windows); the scrape
 * sums them into one count per part.
 */
export function observeRedisFallbacks(metrics: Metrics, parts: Array<{ part: string; source: { fallbacks: number } }>): void {
  metrics.counter('redis_fallbacks_total', 'Decisions and reads this instance answered from memory because Redis did not', ['part'], function collect() {
    this.reset();
    for (const { part, source } of parts) this.inc({ part }, source.fallbacks);
  });
}
