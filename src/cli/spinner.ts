import type { OutStream } from './io.js';

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/**
 * A spinner on stderr for calls that take a while, like gh's: nothing for the first
 * `delayMs` (most calls end before), and nothing at all off a terminal. Calls may overlap;
 * it spins while any is running.
 */
export class Spinner {
  readonly #stream: OutStream;
  readonly #delayMs: number;
  #running = 0;
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
    this.#running++;
    this.#label = label;
    if (this.#running === 1) {
      this.#delay = setTimeout(() => {
        this.#tick = setInterval(() => this.#draw(), 80);
        this.#tick.unref();
        this.#draw();
      }, this.#delayMs);
      this.#delay.unref();
    }
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      if (--this.#running === 0) this.#stop();
    };
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
