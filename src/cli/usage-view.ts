import type { Usage } from '../client/types.js';
import { dailyChart } from './chart.js';
import type { Output } from './output.js';

/** Totals, per-method table and, with `chart`, requests and credits per day. */
export function renderUsage(out: Output, usage: Usage, opts: { title: string; chart?: boolean }): void {
  const { c } = out;
  if (out.isTTY) out.print(c.bold(`${opts.title}, last ${usage.days} days`));
  out.fields([
    ['requests', usage.total_requests],
    ['credits', usage.total_credits],
    ['from', usage.series[0]?.date],
    ['to', usage.series[usage.series.length - 1]?.date],
  ]);
  if (opts.chart) {
    // Piped output has no width; 80 columns is what a reader of a log expects.
    const width = out.io.stdout.columns ?? 80;
    for (const [label, key] of [['requests', 'requests'], ['credits', 'credits']] as const) {
      const { text, bucketDays } = dailyChart(usage.series.map((p) => ({ date: p.date, value: p[key] })), { width });
      out.print();
      out.print(c.bold(`${label} per ${bucketDays === 1 ? 'day' : `${bucketDays} days`}`));
      out.print(text);
    }
  }
  out.print();
  out.table(usage.methods, [
    { header: 'METHOD', value: (m) => m.method },
    { header: 'REQUESTS', value: (m) => m.requests },
    { header: 'CREDITS', value: (m) => m.credits },
  ]);
}
