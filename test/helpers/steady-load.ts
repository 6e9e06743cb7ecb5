/** One answer a client got (or the error it got instead), with when it was asked and answered. */
export interface Answer {
  /** Which loop asked: `gateway A`, `api B`, ... */
  target: string;
  sentAt: number;
  at: number;
  /** The answer as the client saw it, normalised for comparison: `200 result`, `503 ...`, `error ECONNREFUSED`. */
  answer: string;
}

/** A span of time during which `allowed` answers are accepted besides the normal ones. */
export interface FaultWindow {
  name: string;
  from: number;
  to: number;
  allowed: (a: Answer) => boolean;
}

/**
 * A steady client load: each loop asks, records the answer, pauses `gapMs`, asks again, until
 * stopped. Every answer is kept, so a test can count exactly what was answered and check what
 * changed while a fault lasted.
 */
export class SteadyLoad {
  readonly answers: Answer[] = [];
  #running = true;
  readonly #loops: Promise<void>[] = [];
  readonly #gapMs: number;

  constructor(gapMs = 25) {
    this.#gapMs = gapMs;
  }

  run(target: string, ask: () => Promise<string>, concurrency = 1): this {
    for (let n = 0; n < concurrency; n++) this.#loops.push(this.#loop(target, ask));
    return this;
  }

  async stop(): Promise<Answer[]> {
    this.#running = false;
    await Promise.all(this.#loops);
    return this.answers;
  }

  count(target: RegExp | string, answer: string): number {
    return this.answers.filter((a) => matches(a.target, target) && a.answer === answer).length;
  }

  async #loop(target: string, ask: () => Promise<string>): Promise<void> {
    while (this.#running) {
      const sentAt = Date.now();
      let answer: string;
      try {
        answer = await ask();
      } catch (err) {
        const e = err as { code?: string; message?: string };
        answer = `error ${e.code ?? e.message}`;
      }
      this.answers.push({ target, sentAt, at: Date.now(), answer });
      await new Promise((r) => setTimeout(r, this.#gapMs));
    }
  }
}

function matches(target: string, want: RegExp | string): boolean {
  return typeof want === 'string' ? target === want : want.test(target);
}

/**
 * The answers that are neither normal nor allowed by a fault window they overlap (in flight
 * across two windows, either may allow it), as readable lines; a run of the same answer from
 * the same loop is one line (`api B: 500 ... x12 from +1234 to +1500 ms of PostgreSQL stopped`).
 */
export function unexpectedAnswers(answers: Answer[], normal: (a: Answer) => boolean, windows: FaultWindow[]): string[] {
  const runs = new Map<string, { what: string; where: string; n: number; first: number; last: number }>();
  for (const a of [...answers].sort((x, y) => x.sentAt - y.sentAt)) {
    if (normal(a)) continue;
    const during = windows.filter((w) => a.at >= w.from && a.sentAt <= w.to);
    if (during.some((w) => w.allowed(a))) continue;
    const before = windows.filter((w) => w.to < a.sentAt).at(-1);
    const [where, offset] = during[0] ? [`of ${during[0].name}`, a.sentAt - during[0].from]
      : before ? [`after ${before.name} ended`, a.sentAt - before.to]
      : ['before any fault', 0];
    const what = `${a.target}: ${a.answer}`;
    const run = runs.get(`${what}\n${where}`);
    if (run) {
      run.n++;
      run.last = offset;
    } else {
      runs.set(`${what}\n${where}`, { what, where, n: 1, first: offset, last: offset });
    }
  }
  return [...runs.values()].map((r) => r.n === 1 ? `${r.what} at +${r.first} ms ${r.where}` : `${r.what} x${r.n} from +${r.first} to +${r.last} ms ${r.where}`);
}
