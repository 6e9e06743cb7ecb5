import type { Logger } from '../log/index.js';
import type { Metrics } from '../metrics/index.js';

/** Back-off after a failed run: the first retry after `minMs`, doubling up to `maxMs`, reset by a success. */
export interface Backoff { minMs: number; maxMs: number }

export const DEFAULT_BACKOFF: Backoff = { minMs: 250, maxMs: 30_000 };

export interface TaskOptions {
  /** Run the first time at once (default) or only after one interval. */
  immediate?: boolean;
  /** The first run after this many ms instead (a job that need not compete with start-up). */
  firstAfterMs?: number;
  backoff?: Backoff;
}

export interface SupervisorOptions {
  /** Structured logger: a failure is an `error` line with `task` and `err`. */
  logger?: Logger;
  /** The line logger the parts were written against; used when no `logger` is given. */
  log?: (line: string) => void;
  /** Counts `rpcctl_background_errors_total{task}` and the last success per task. */
  metrics?: Metrics;
}

interface Task {
  name: string;
  timer: NodeJS.Timeout | undefined;
  running: Promise<void> | undefined;
  /** An `every` task's next run, at once (see `kick`). */
  now: (() => void) | undefined;
  cancelled: boolean;
  failures: number;
  injected: Error[];
  /** The failure last logged, and when: a repeat of it is counted but logged once a minute. */
  lastMessage: string | undefined;
  lastLoggedAt: number;
  /** While set, runs wait for it before starting (see `hold`). */
  gate: Promise<void> | undefined;
  /** The run in progress, if any. */
  current: Promise<boolean> | undefined;
}

/** A failure that repeats itself (an upstream or the store away for hours) is logged again this often. */
const REPEAT_LOG_MS = 60_000;

/**
 * Runs the service's background tasks (probe, scanners, usage flush, delivery worker, payments
 * tick, retention, registry check...) so that none can end the process: every run is caught,
 * logged at `error` with the task's name, counted, and retried with a back-off that grows
 * while the failure lasts and resets on the first success. A dependency outage (the store,
 * Redis, an upstream) is an ordinary failure here: the task keeps trying until it is back.
 *
 * One supervisor per running service; `stop()` ends every task and waits for runs in flight.
 */
export class Supervisor {
  readonly #o: SupervisorOptions;
  readonly #tasks = new Map<string, Task>();
  readonly #abort = new AbortController();
  readonly #errors: ((task: string) => void) | undefined;
  readonly #succeeded: ((task: string) => void) | undefined;

  constructor(opts: SupervisorOptions = {}) {
    this.#o = opts;
    if (opts.metrics) {
      const errors = opts.metrics.counter('background_errors_total', 'Failed runs of a background task (each is logged and retried with back-off)', ['task']);
      const success = opts.metrics.gauge('background_last_success_timestamp_seconds', 'When a background task last ran without error (Unix time)', { labelNames: ['task'] });
      this.#errors = (task) => errors.inc({ task });
      this.#succeeded = (task) => success.set({ task }, Date.now() / 1000);
    }
  }

  /** Aborted when the supervisor stops: tasks pass it to what they wait on. */
  get signal(): AbortSignal {
    return this.#abort.signal;
  }

  get stopped(): boolean {
    return this.#abort.signal.aborted;
  }

  /**
   * Runs `step` every `intervalMs` (measured from the end of one run to the start of the
   * next, so runs never overlap); after a failure the next run comes after the back-off
   * instead, whichever is sooner.
   */
  every(name: string, intervalMs: number, step: (signal: AbortSignal) => Promise<void> | void, opts: TaskOptions = {}): void {
    const task = this.#task(name);
    const backoff = opts.backoff ?? DEFAULT_BACKOFF;
    const schedule = (ms: number) => {
      if (this.stopped || task.cancelled) return;
      task.timer = setTimeout(() => {
        task.timer = undefined;
        task.running = this.run(name, step).then((ok) => {
          task.running = undefined;
          schedule(ok ? intervalMs : Math.min(intervalMs, backoffMs(backoff, task.failures)));
        });
      }, ms);
      task.timer.unref();
    };
    task.now = () => {
      if (task.timer === undefined) return; // running now: the next run comes on its own
      clearTimeout(task.timer);
      schedule(0);
    };
    schedule(opts.firstAfterMs ?? (opts.immediate === false ? intervalMs : 0));
  }

  /**
   * Runs a long-lived loop (a scanner, the delivery worker): when it throws, the failure is
   * handled as for `every` and the loop is started again after the back-off. A loop that
   * returns has finished and is not restarted.
   */
  loop(name: string, body: (signal: AbortSignal) => Promise<void>, opts: Pick<TaskOptions, 'backoff'> = {}): Promise<void> {
    const task = this.#task(name);
    const backoff = opts.backoff ?? DEFAULT_BACKOFF;
    const done = (async () => {
      while (!this.stopped) {
        if (await this.run(name, body)) return;
        await sleep(backoffMs(backoff, task.failures), this.#abort.signal);
      }
    })();
    task.running = done;
    return done;
  }

  /**
   * Runs `step` once under the supervisor's rules; resolves true when it succeeded, false when
   * it failed (logged and counted). Never rejects. For tasks that keep their own schedule.
   */
  async run(name: string, step: (signal: AbortSignal) => Promise<void> | void): Promise<boolean> {
    const task = this.#task(name);
    while (task.gate) await task.gate;
    const attempt = this.#attempt(task, step);
    task.current = attempt;
    try {
      return await attempt;
    } finally {
      if (task.current === attempt) task.current = undefined;
    }
  }

  /**
   * Holds `name`: resolves once its run in progress (if any) has finished, and no run starts
   * until the returned release is called. The tests' hook for a state no run may see half-made.
   */
  async hold(name: string): Promise<() => void> {
    const task = this.#task(name);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => { release = resolve; });
    task.gate = gate;
    await task.current;
    return () => {
      if (task.gate === gate) task.gate = undefined;
      release();
    };
  }

  async #attempt(task: Task, step: (signal: AbortSignal) => Promise<void> | void): Promise<boolean> {
    const name = task.name;
    try {
      const injected = task.injected.shift();
      if (injected) throw injected;
      await step(this.#abort.signal);
      task.failures = 0;
      this.#succeeded?.(name);
      if (task.lastMessage !== undefined) this.#recovered(task);
      return true;
    } catch (err) {
      if (this.stopped) return false;
      task.failures++;
      this.failed(name, err);
      return false;
    }
  }

  /**
   * The wait before a self-scheduled task's next run (a poll loop that also wakes on events):
   * `intervalMs` while it succeeds, the back-off while it fails.
   */
  delay(name: string, intervalMs: number, backoff: Backoff = DEFAULT_BACKOFF): number {
    const failures = this.#task(name).failures;
    return failures === 0 ? intervalMs : backoffMs(backoff, failures);
  }

  /** Brings a periodic task's next run forward to now (the fault tests; a run already going is left alone). */
  kick(name: string): void {
    this.#tasks.get(name)?.now?.();
  }

  /** Ends one task's schedule (its part stops before the others) and waits for its run in flight. */
  async cancel(name: string): Promise<void> {
    const task = this.#tasks.get(name);
    if (!task) return;
    task.cancelled = true;
    clearTimeout(task.timer);
    task.timer = undefined;
    await task.running;
    if (this.#tasks.get(name) === task) this.#tasks.delete(name);
  }

  /** Reports a failure a task caught itself (it retries on its own schedule): logged at `error` and counted. */
  failed(name: string, err: unknown): void {
    const task = this.#task(name);
    this.#errors?.(name);
    const message = err instanceof Error ? err.message : String(err);
    // Every failure is counted; a repeat of the same one is logged once a minute, not once a retry.
    const now = Date.now();
    if (message === task.lastMessage && now - task.lastLoggedAt < REPEAT_LOG_MS) return;
    task.lastMessage = message;
    task.lastLoggedAt = now;
    if (this.#o.logger) this.#o.logger.error({ component: 'supervisor', task: name, err: message }, `background task ${name} failed: ${message}`);
    else this.#o.log?.(`supervisor: background task ${name} failed: ${message}`);
  }

  #recovered(task: Task): void {
    task.lastMessage = undefined;
    if (this.#o.logger) this.#o.logger.info({ component: 'supervisor', task: task.name }, `background task ${task.name} works again`);
    else this.#o.log?.(`supervisor: background task ${task.name} works again`);
  }

  /** Makes the next `times` runs of `name` fail with `err` before doing anything: the fault tests' hook. */
  inject(name: string, err: Error = new Error(`injected failure in ${name}`), times = 1): void {
    const task = this.#task(name);
    for (let i = 0; i < times; i++) task.injected.push(err);
  }

  /** The names of the tasks started so far. */
  tasks(): string[] {
    return [...this.#tasks.keys()];
  }

  async stop(): Promise<void> {
    this.#abort.abort();
    for (const task of this.#tasks.values()) clearTimeout(task.timer);
    await Promise.all([...this.#tasks.values()].map((t) => t.running));
  }

  #task(name: string): Task {
    let task = this.#tasks.get(name);
    if (!task) {
      task = { name, timer: undefined, running: undefined, now: undefined, cancelled: false, failures: 0, injected: [], lastMessage: undefined, lastLoggedAt: 0, gate: undefined, current: undefined };
      this.#tasks.set(name, task);
    }
    return task;
  }
}

/** The wait before retry number `failures` (1 for the first). */
export function backoffMs(b: Backoff, failures: number): number {
  return Math.min(b.maxMs, b.minMs * 2 ** Math.max(0, Math.min(failures - 1, 20)));
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
