import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../log/index.js';
import { Metrics } from '../metrics/index.js';
import { lastResort } from './last-resort.js';

/**
 * `rpcctl serve`'s last resort. The handlers are called directly: emitting the process events
 * would reach the test runner's own handlers too.
 */
describe('last resort of rpcctl serve', () => {
  it('a stray rejection is logged at error and counted, and the process serves on; an uncaught exception is fatal and stops it', async () => {
    const lines: Array<{ level: string; msg: string }> = [];
    const sink = new Writable({ write(c: Buffer, _e, done) { for (const l of c.toString().split('\n')) if (l) lines.push(JSON.parse(l) as never); done(); } });
    const metrics = new Metrics({ processMetrics: false });
    const fatal: unknown[] = [];
    const before = { rejection: process.listeners('unhandledRejection').length, exception: process.listeners('uncaughtException').length };
    const release = lastResort(createLogger({ format: 'json', stream: sink }), metrics, (err) => fatal.push(err));
    try {
      const onRejection = process.listeners('unhandledRejection').at(-1)!;
      const onException = process.listeners('uncaughtException').at(-1)!;
      onRejection(new Error('connect ECONNREFUSED 127.0.0.1:5432'), Promise.resolve());
      expect(fatal).toEqual([]);
      const boom = new Error('boom');
      onException(boom, 'uncaughtException');
      expect(fatal).toEqual([boom]);
      const counted = (await metrics.registry.getSingleMetric('rpcctl_unhandled_errors_total')!.get()).values;
      expect(Object.fromEntries(counted.map((v) => [v.labels.kind, v.value]))).toEqual({ rejection: 1, exception: 1 });
      expect(lines.map((l) => [l.level, l.msg.split('\n')[0]])).toEqual([
        ['error', 'unhandled promise rejection, serving on: Error: connect ECONNREFUSED 127.0.0.1:5432'],
        ['fatal', 'uncaught exception, stopping: Error: boom'],
      ]);
    } finally {
      release();
    }
    expect(process.listeners('unhandledRejection')).toHaveLength(before.rejection);
    expect(process.listeners('uncaughtException')).toHaveLength(before.exception);
  });
});
