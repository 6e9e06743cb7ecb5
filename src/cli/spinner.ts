import type { OutStream } from './io.js';

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

const shared = new WeakMap<OutStream, Spinner>();

/**
 * The one spinner of a stream: every call of an invocation shares it (calls may overlap, as
 * `account`'s two do), so `run` can stop it before it writes an error, whichever call failed.
 */
export function spinnerOf(stream: OutStream): Spinner {
  let spinner = shared.get(stream);
  if (!spinner) shared.set(stream, spinner = new Spinner(stream));
  return spinner;
}

/** Clears the stream's spinner line, if it has one, so what is written next starts a line of its own. */
export function stopSpinner(stream: OutStream): void {
  shared.get(stream)?.stop();
}

/**
 * A spinner on stderr for calls that take a while, like gh's: nothing for the first
 * `delayMs` (most calls end before), and nothing at all off a terminal. Calls may overlap;
 * it spins while any is running.
 */
export class Spinner {
  readonly #stream: OutStream;
  readonly #delayMs: number;
  /** The calls running now; a call's end removes its own token, so `stop` can forget them all. */
  readonly #running = new Set<object>();
  #label = '';
  #delay: NodeJS.Timeout | undefined;
  #tick: NodeJS.Timeout | undefined;
  #frame = 0;
  #shown = false;

  constructor(stream: OutStream, delayMs = 300) {
    this.#stream = stream;
    this.#delayMs = delayMs;
  }

  /** Starts (or joins) spinning with this label; the returned function ends this call's part. */
  start(label: string): () => void {
    if (this.#stream.isTTY !== true) return () => {};
    const token = {};
    this.#running.add(token);
    this.#label = label;
    if (this.#running.size === 1) {
      this.#delay = setTimeout(() => {
        this.#tick = setInterval(() => this.#draw(), 80);
        this.#tick.unref();
        this.#draw();
      }, this.#delayMs);
      this.#delay.unref();
    }
    return () => {
      if (this.#running.delete(token) && this.#running.size === 0) this.#stop();
    };
  }

  /** Stops at once, whatever is still running, and clears the line: before an error is written. */
  stop(): void {
    this.#running.clear();
    this.#stop();
  }

  /** Writes a line of its own on stderr without tearing the spinner line. */
  note(text: string): void {
    this.#clear();
    this.#stream.write(`${text}\n`);
    if (this.#tick) this.#draw();
  }

  #draw(): void {
    this.#shown = true;
    this.#stream.write(`\r${FRAMES[this.#frame++ % FRAMES.length]} ${this.#label}\x1b[K`);
  }

  #clear(): void {
    if (this.#shown) this.#stream.write('\r\x1b[K');
    this.#shown = false;
  }

  #stop(): void {
    clearTimeout(this.#delay);
    clearInterval(this.#tick);
    this.#delay = this.#tick = undefined;
    this.#clear();
  }
}
