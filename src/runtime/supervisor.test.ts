import { describe, expect, it } from 'vitest';
import { Supervisor, backoffMs } from './supervisor.js';
import { Metrics } from '../metrics/index.js';

async function until(cond: () => boolean | Promise<boolean>, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function errorsOf(metrics: Metrics, task: string): Promise<number> {
  const m = await metrics.registry.getSingleMetric('rpcctl_background_errors_total')!.get();
  return m.values.find((v) => v.labels.task === task)?.value ?? 0;
}

describe('Supervisor', () => {
  it('catches, logs, counts and retries a failing periodic task until it succeeds', async () => {
    const metrics = new Metrics({ processMetrics: false });
    const lines: string[] = [];
    const sup = new Supervisor({ metrics, log: (l) => lines.push(l) });
    let calls = 0;
    let ok = 0;
    sup.every('flaky', 60_000, async () => {
      calls++;
      if (calls <= 3) throw new Error(`boom ${calls}`);
      ok++;
    }, { backoff: { minMs: 5, maxMs: 20 } });
    // The interval is a minute: only the back-off can bring the retries this soon.
    await until(() => ok === 1);
    expect(calls).toBe(4);
    expect(await errorsOf(metrics, 'flaky')).toBe(3);
    expect(lines.filter((l) => l.includes('background task flaky failed: boom'))).toHaveLength(3);
    await sup.stop();
  });

  it('restarts a loop that throws, and an injected failure counts like a real one', async () => {
    const metrics = new Metrics({ processMetrics: false });
    const sup = new Supervisor({ metrics });
    let starts = 0;
    sup.inject('loop-task');
    const done = sup.loop('loop-task', async () => {
      starts++;
      if (starts === 1) throw new Error('first run dies');
    }, { backoff: { minMs: 5, maxMs: 5 } });
    await done;
    expect(starts).toBe(2);
    expect(await errorsOf(metrics, 'loop-task')).toBe(2);
    await sup.stop();
  });

  it('an unhandled rejection never escapes a run, and stop() ends pending schedules', async () => {
    const sup = new Supervisor();
    expect(await sup.run('x', () => { throw new Error('sync throw'); })).toBe(false);
    expect(await sup.run('x', async () => {})).toBe(true);
    let runs = 0;
    sup.every('tick', 5, () => { runs++; });
    await until(() => runs >= 2);
    await sup.stop();
    const after = runs;
    await new Promise((r) => setTimeout(r, 30));
    expect(runs).toBe(after);
  });

  it('a repeated failure is counted every time but logged once a minute; the first success after it says so', async () => {
    const metrics = new Metrics({ processMetrics: false });
    const lines: string[] = [];
    const sup = new Supervisor({ metrics, log: (l) => lines.push(l) });
    for (let i = 0; i < 5; i++) expect(await sup.run('store-bound', () => { throw new Error('connect ECONNREFUSED'); })).toBe(false);
    expect(await errorsOf(metrics, 'store-bound')).toBe(5);
    expect(lines).toEqual(['supervisor: background task store-bound failed: connect ECONNREFUSED']);
    expect(await sup.run('store-bound', () => {})).toBe(true);
    expect(lines.at(-1)).toBe('supervisor: background task store-bound works again');
    await sup.stop();
  });

  it('kick runs a periodic task now, cancel ends one task alone, delay backs a self-scheduled loop off', async () => {
    const sup = new Supervisor();
    let a = 0;
    let b = 0;
    sup.every('a', 60_000, () => { a++; }, { immediate: false });
    sup.every('b', 5, () => { b++; });
    sup.kick('a');
    await until(() => a === 1 && b >= 1);
    await sup.cancel('a');
    expect(sup.tasks()).not.toContain('a');
    sup.kick('a'); // gone: nothing happens
    const seen = b;
    await until(() => b > seen); // the other task goes on
    expect(a).toBe(1);
    expect(sup.delay('loop', 500, { minMs: 100, maxMs: 300 })).toBe(500);
    await sup.run('loop', () => { throw new Error('x'); });
    await sup.run('loop', () => { throw new Error('x'); });
    expect(sup.delay('loop', 500, { minMs: 100, maxMs: 300 })).toBe(200);
    await sup.stop();
  });

  it('back-off doubles from the minimum up to the maximum', () => {
    const b = { minMs: 100, maxMs: 1000 };
    expect([1, 2, 3, 4, 5, 50].map((n) => backoffMs(b, n))).toEqual([100, 200, 400, 800, 1000, 1000]);
  });
});

describe('Supervisor.hold', () => {
  it('waits for the run in progress, keeps the next from starting until released', async () => {
    const sup = new Supervisor();
    let finishFirst!: () => void;
    const events: string[] = [];
    const first = sup.run('held', () => new Promise<void>((r) => { events.push('first started'); finishFirst = () => { events.push('first done'); r(); }; }));
    const holding = sup.hold('held').then((release) => { events.push('held'); return release; });
    await until(() => events.includes('first started'));
    expect(events).toEqual(['first started']); // the hold waits for the run in progress
    finishFirst();
    const release = await holding;
    const second = sup.run('held', () => { events.push('second'); });
    await new Promise((r) => setTimeout(r, 20));
    expect(events).toEqual(['first started', 'first done', 'held']);
    release();
    expect(await second).toBe(true);
    expect(await first).toBe(true);
    expect(events.at(-1)).toBe('second');
    await sup.stop();
  });
});
