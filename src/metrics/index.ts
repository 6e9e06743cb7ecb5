import { AggregatorRegistry, Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { IpAllowlist } from '../util/ip.js';
import { FastCounter, FastHistogram } from './fast.js';

export type { Counter, Gauge, Histogram } from 'prom-client';
export type { FastCounter, FastHistogram, CounterCell, HistogramCell } from './fast.js';

/** Every metric name starts with this; docs/operations.md lists them all. */
export const PREFIX = 'rpcctl_';

/** How long a scrape waits for a gauge's `collect` before it publishes the gauge's last values. */
export const COLLECT_TIMEOUT_MS = 1000;

/** Seconds; from a fast local node (1 ms) to a slow archive query (10 s). */
export const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export interface GaugeOptions<L extends string> {
  labelNames?: readonly L[];
  /**
   * Called on every scrape to set the gauge's values: the way to publish what already lives
   * elsewhere (a queue's depth, a cursor's lag). May be async (a store query); keep it cheap.
   * One that throws or outlasts `collectTimeoutMs` leaves the values it had set (so ask first,
   * then set) and is counted in `rpcctl_metrics_collect_errors_total{metric}`: a dependency
   * away must not take the whole scrape with it.
   */
  collect?: (gauge: Gauge<L>) => void | Promise<void>;
}

/**
 * The service's metrics, one registry per running service (tests run several in a process).
 * Parts ask for their metrics by name here; asking twice for the same name returns the same
 * metric, so a part may be created more than once. Labels stay low-cardinality: network,
 * upstream, reason, status — never an endpoint, account or address.
 *
 * `enabled: false` keeps the objects (so callers need no checks) but the gateway skips its
 * per-request hooks and `/metrics` answers 404.
 */
export class Metrics {
  readonly registry = new Registry();
  readonly enabled: boolean;
  readonly #scrapers: IpAllowlist;
  readonly #made = new Map<string, unknown>();
  #threads: (() => Promise<unknown[][]>) | undefined;
  readonly #collectTimeoutMs: number;
  readonly #collectErrors: Counter<'metric'>;
  /** The gauges' collects of the scrape under way. */
  readonly #guarding = new Set<Promise<void>>();

  constructor(opts: { enabled?: boolean; processMetrics?: boolean; allowedIps?: readonly string[]; collectTimeoutMs?: number } = {}) {
    this.enabled = opts.enabled ?? true;
    this.#scrapers = new IpAllowlist(opts.allowedIps ?? []);
    this.#collectTimeoutMs = opts.collectTimeoutMs ?? COLLECT_TIMEOUT_MS;
    const guarding = this.#guarding;
    this.#collectErrors = this.counter('metrics_collect_errors_total', 'Scrapes at which a gauge could not be read (its source failed or was slower than 1 s); the gauge kept its last values', ['metric'],
      // The scrape reads every metric at once: this count waits for the gauges of the same scrape
      // (started in the same turn, so begun once a macrotask has passed) to include their failures.
      async function collect() {
        await new Promise((r) => setImmediate(r));
        await Promise.all(guarding);
      });
    if (this.enabled && opts.processMetrics !== false) {
      collectDefaultMetrics({ register: this.registry, prefix: PREFIX });
      // Gauges named like counters (OpenMetrics would read them as counters); each is the sum
      // over `type` of its namesake without `_total`, which stays.
      for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']) this.registry.removeSingleMetric(PREFIX + name);
    }
  }

  /** `collect`: sets the count at scrape from where it already lives (a running total kept elsewhere). */
  counter<L extends string = never>(name: string, help: string, labelNames: readonly L[] = [], collect?: (this: Counter<L>) => void | Promise<void>): Counter<L> {
    return this.#once(name, () => new Counter<L>({ name: PREFIX + name, help, labelNames, registers: [this.registry], ...(collect ? { collect } : {}) }));
  }

  gauge<L extends string = never>(name: string, help: string, opts: GaugeOptions<L> = {}): Gauge<L> {
    const collect = opts.collect;
    return this.#once(name, () => {
      const gauge: Gauge<L> = new Gauge<L>({
        name: PREFIX + name, help, labelNames: opts.labelNames ?? [], registers: [this.registry],
        ...(collect ? { collect: this.#guarded(PREFIX + name, () => collect(gauge)) } : {}),
      });
      return gauge;
    });
  }

  /**
   * A gauge's `collect` as the scrape calls it: it never rejects and never waits more than
   * `collectTimeoutMs`. A run still going when the next scrape comes is waited on again rather
   * than joined by another, so a hung store holds at most one query per gauge.
   */
  #guarded(metric: string, collect: () => void | Promise<void>): () => Promise<void> {
    let running: Promise<boolean> | undefined;
    const guarded = async () => {
      // Settles to whether it worked: a run that fails after its scrape gave up on it rejects nothing.
      running ??= (async () => { await collect(); })().then(() => true, () => false).finally(() => { running = undefined; });
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<false>((resolve) => { timer = setTimeout(resolve, this.#collectTimeoutMs, false); });
      try {
        if (!await Promise.race([running, late])) this.#collectErrors.inc({ metric });
      } finally {
        clearTimeout(timer);
      }
    };
    return () => {
      const done = guarded();
      this.#guarding.add(done);
      return done.finally(() => this.#guarding.delete(done));
    };
  }

  histogram<L extends string = never>(name: string, help: string, labelNames: readonly L[] = [], buckets = LATENCY_BUCKETS): Histogram<L> {
    return this.#once(name, () => new Histogram<L>({ name: PREFIX + name, help, labelNames, buckets, registers: [this.registry] }));
  }

  /** Whether `ip` may read `/metrics` (anyone when no addresses are configured). */
  allows(ip: string): boolean {
    return this.#scrapers.size === 0 || this.#scrapers.allows(ip);
  }

  /** A counter for hot paths: bound cells are plain numbers, read at scrape (see fast.ts). */
  fastCounter<L extends string = never>(name: string, help: string, labelNames: readonly L[] = []): FastCounter<L> {
    return this.#once(name, () => new FastCounter<L>(PREFIX + name, help, labelNames, this.registry));
  }

  /** A histogram for hot paths, like fastCounter. */
  fastHistogram<L extends string = never>(name: string, help: string, labelNames: readonly L[] = [], buckets = LATENCY_BUCKETS): FastHistogram<L> {
    return this.#once(name, () => new FastHistogram<L>(PREFIX + name, help, labelNames, buckets, this.registry));
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** The Prometheus text exposition of every metric, with the other threads' added in (see `addThreads`). */
  async text(): Promise<string> {
    if (!this.#threads) return this.registry.metrics();
    const [own, others] = await Promise.all([this.registry.getMetricsAsJSON(), this.#threads()]);
    return AggregatorRegistry.aggregate([own, ...others] as Parameters<typeof AggregatorRegistry.aggregate>[0]).metrics();
  }

  /**
   * Metrics that other threads (the gateway workers) count in registries of their own: summed
   * into this one's exposition (counters and histograms add up; so do the gauges they keep).
   */
  addThreads(collect: () => Promise<unknown[][]>): void {
    this.#threads = collect;
  }

  #once<M>(name: string, make: () => M): M {
    let m = this.#made.get(name);
    if (!m) {
      m = make();
      this.#made.set(name, m);
    }
    return m as M;
  }
}

/**
 * An upstream URL as a label: scheme, host and port only. Paths, query strings and userinfo
 * often carry a provider's key and never leave the process.
 */
export function upstreamLabel(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}`;
  } catch {
    return 'invalid-url';
  }
}
