import type { Registry } from 'prom-client';

/**
 * Counters and histograms for hot paths. prom-client hashes the label set on every `inc` or
 * `observe`, even through a bound child (about 1-2 µs each); here a bound cell is plain numbers
 * and the registry reads them at scrape time, so a request pays a few additions. Bind cells
 * once (`labels(...)`) and keep them.
 */
type Labels<L extends string> = Record<L, string>;

interface Exported { name: string; help: string; type: string; aggregator: 'sum'; values: Array<{ metricName?: string; labels: Record<string, string | number>; value: number }> }

abstract class FastMetric<L extends string, C> {
  readonly name: string;
  readonly help: string;
  abstract readonly type: string;
  readonly aggregator = 'sum' as const;
  protected readonly cells = new Map<string, { labels: Labels<L>; cell: C }>();
  readonly #labelNames: readonly L[];

  constructor(name: string, help: string, labelNames: readonly L[], registry: Registry) {
    this.name = name;
    this.help = help;
    this.#labelNames = labelNames;
    registry.registerMetric(this as never);
  }

  labels(labels: Labels<L>): C {
    const key = this.#labelNames.map((n) => labels[n]).join('\u0000');
    let entry = this.cells.get(key);
    if (!entry) {
      const copy = {} as Labels<L>;
      for (const n of this.#labelNames) copy[n] = String(labels[n]);
      entry = { labels: copy, cell: this.make() };
      this.cells.set(key, entry);
    }
    return entry.cell;
  }

  protected abstract make(): C;
  abstract get(): Promise<Exported>;
}

export interface CounterCell { inc(n?: number): void }

export class FastCounter<L extends string> extends FastMetric<L, CounterCell & { value: number }> {
  readonly type = 'counter';

  inc(labels: Labels<L>, n = 1): void {
    this.labels(labels).inc(n);
  }

  protected make(): CounterCell & { value: number } {
    return { value: 0, inc(n = 1) { this.value += n; } };
  }

  async get(): Promise<Exported> {
    return {
      name: this.name, help: this.help, type: this.type, aggregator: 'sum',
      values: [...this.cells.values()].map(({ labels, cell }) => ({ labels, value: cell.value })),
    };
  }
}

export interface HistogramCell { observe(value: number): void }

interface HistogramState extends HistogramCell { counts: number[]; sum: number; count: number }

export class FastHistogram<L extends string> extends FastMetric<L, HistogramState> {
  readonly type = 'histogram';
  readonly #buckets: readonly number[];

  constructor(name: string, help: string, labelNames: readonly L[], buckets: readonly number[], registry: Registry) {
    super(name, help, labelNames, registry);
    this.#buckets = buckets;
  }

  protected make(): HistogramState {
    const bounds = this.#buckets;
    return {
      counts: new Array<number>(bounds.length + 1).fill(0), sum: 0, count: 0,
      observe(value: number) {
        let i = 0;
        while (i < bounds.length && value > bounds[i]!) i++;
        this.counts[i]!++;
        this.sum += value;
        this.count++;
      },
    };
  }

  async get(): Promise<Exported> {
    const values: Exported['values'] = [];
    for (const { labels, cell } of this.cells.values()) {
      let cumulative = 0;
      for (let i = 0; i < this.#buckets.length; i++) {
        cumulative += cell.counts[i]!;
        values.push({ metricName: `${this.name}_bucket`, labels: { ...labels, le: this.#buckets[i]! }, value: cumulative });
      }
      values.push({ metricName: `${this.name}_bucket`, labels: { ...labels, le: '+Inf' }, value: cell.count });
      values.push({ metricName: `${this.name}_sum`, labels, value: cell.sum });
      values.push({ metricName: `${this.name}_count`, labels, value: cell.count });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: 'sum', values };
  }
}
