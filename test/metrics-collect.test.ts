import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { Metrics } from '../src/metrics/index.js';
import { createMetricsServer } from '../src/metrics/http.js';

const line = (text: string, series: string) => text.split('\n').find((l) => l.startsWith(`${series} `));

/** A gauge read from a source that answers, then fails or hangs as the test says (a store going away). */
function sourced(metrics: Metrics) {
  const source = { mode: 'ok' as 'ok' | 'throw' | 'hang' | 'late-throw', value: 5 };
  metrics.gauge('outbox_depth', 'test', {
    collect: async (g) => {
      if (source.mode === 'throw') throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
      if (source.mode === 'hang') await new Promise(() => {});
      if (source.mode === 'late-throw') {
        await new Promise((r) => setTimeout(r, 300));
        throw new Error('connection terminated');
      }
      g.set(source.value);
    },
  });
  return source;
}

describe('a gauge read at scrape time whose source fails', () => {
  it('keeps its last values, counts the failure, and the scrape succeeds', async () => {
    const metrics = new Metrics({ processMetrics: false, collectTimeoutMs: 100 });
    const source = sourced(metrics);
    expect(line(await metrics.text(), 'rpcctl_outbox_depth')).toBe('rpcctl_outbox_depth 5');
    source.mode = 'throw';
    source.value = 9;
    const text = await metrics.text();
    expect(line(text, 'rpcctl_outbox_depth')).toBe('rpcctl_outbox_depth 5');
    expect(line(text, 'rpcctl_metrics_collect_errors_total{metric="rpcctl_outbox_depth"}')).toBe('rpcctl_metrics_collect_errors_total{metric="rpcctl_outbox_depth"} 1');
    source.mode = 'ok';
    expect(line(await metrics.text(), 'rpcctl_outbox_depth')).toBe('rpcctl_outbox_depth 9');
  });

  it('one that hangs holds the scrape no longer than the timeout, and is not asked again while it hangs', async () => {
    const metrics = new Metrics({ processMetrics: false, collectTimeoutMs: 100 });
    let calls = 0;
    metrics.gauge('hung', 'test', { collect: () => { calls++; return new Promise(() => {}); } });
    for (const n of [1, 2]) {
      const from = Date.now();
      const text = await metrics.text();
      expect(Date.now() - from).toBeLessThan(2000);
      expect(line(text, 'rpcctl_metrics_collect_errors_total{metric="rpcctl_hung"}')).toBe(`rpcctl_metrics_collect_errors_total{metric="rpcctl_hung"} ${n}`);
    }
    expect(calls).toBe(1);
  });

  it('one that fails after its scrape gave up on it rejects nothing', async () => {
    const metrics = new Metrics({ processMetrics: false, collectTimeoutMs: 50 });
    const source = sourced(metrics);
    source.mode = 'late-throw';
    const rejections: unknown[] = [];
    const onRejection = (reason: unknown) => rejections.push(reason);
    process.on('unhandledRejection', onRejection);
    try {
      await metrics.text();
      await new Promise((r) => setTimeout(r, 500));
    } finally {
      process.off('unhandledRejection', onRejection);
    }
    expect(rejections).toEqual([]);
  });

  it('GET /metrics answers 200 with every other metric while a store-backed gauge fails', async () => {
    const metrics = new Metrics({ processMetrics: false, collectTimeoutMs: 100 });
    const source = sourced(metrics);
    metrics.gauge('usage_pending_rows', 'test', { collect: (g) => g.set(3) });
    source.mode = 'throw';
    const server = createMetricsServer(metrics, undefined).listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const r = await request(`http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`);
      const text = await r.body.text();
      expect(r.statusCode, text).toBe(200);
      expect(line(text, 'rpcctl_usage_pending_rows')).toBe('rpcctl_usage_pending_rows 3');
    } finally {
      server.close();
    }
  });
});
