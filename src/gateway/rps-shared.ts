/**
 * Every endpoint's RPS window in one SharedArrayBuffer that all gateway workers count in, so a
 * limit of 100/s admits 100/s whatever the number of workers. One 64-bit word per endpoint
 * (its slot, given by the main thread): the Unix second in the high half, the count taken in
 * that second in the low half. One compare-and-swap moves both, so a new second's reset can
 * never lose a count taken by another worker at the same moment.
 */

/** Slots the buffer may grow to (8 bytes each); only what is used is committed. */
const MAX_SLOTS = 1 << 24;
const LOW = 0xffffffffn;

type GrowableSab = SharedArrayBuffer & { grow(bytes: number): void; readonly growable: boolean };

export class SharedWindows {
  readonly buffer: SharedArrayBuffer;
  /**
   * Open WebSockets per endpoint: per slot, the total (what the limit checks, exactly) then
   * each worker's own share, so the share of a worker that died can be given back.
   */
  readonly sockets: SharedArrayBuffer;
  readonly #words: BigUint64Array;
  readonly #sockets: Int32Array;
  readonly #stride: number;
  /** The current second as a BigInt, made once a second rather than once a request. */
  #secondNumber = -1;
  #second = 0n;

  /** New buffers (main thread, for `workers` workers), or a worker's views of the main thread's. */
  constructor(workers: number, buffers?: { windows: SharedArrayBuffer; sockets: SharedArrayBuffer }) {
    const Sab = SharedArrayBuffer as unknown as new (bytes: number, opts: { maxByteLength: number }) => SharedArrayBuffer;
    this.#stride = workers + 1;
    this.buffer = buffers?.windows ?? new Sab(8 * 1024, { maxByteLength: 8 * MAX_SLOTS });
    this.sockets = buffers?.sockets ?? new Sab(4 * this.#stride * 1024, { maxByteLength: 4 * this.#stride * MAX_SLOTS });
    // No length given: the views follow the buffers as the main thread grows them.
    this.#words = new BigUint64Array(this.buffer);
    this.#sockets = new Int32Array(this.sockets);
  }

  /** Main thread: room for slots [0, n). */
  ensure(n: number): void {
    if (n > MAX_SLOTS) throw new Error(`more than ${MAX_SLOTS} endpoints: RPS windows do not fit`);
    grow(this.buffer as GrowableSab, n * 8);
    grow(this.sockets as GrowableSab, n * 4 * this.#stride);
  }

  /** Takes a WebSocket place on the slot for worker `w` if fewer than `max` are open. */
  acquireSocket(slot: number, w: number, max: number): boolean {
    const a = this.#sockets;
    const i = slot * this.#stride;
    for (;;) {
      const n = Atomics.load(a, i);
      if (n >= max) return false;
      if (Atomics.compareExchange(a, i, n, n + 1) === n) {
        Atomics.add(a, i + 1 + w, 1);
        return true;
      }
    }
  }

  releaseSocket(slot: number, w: number): void {
    const i = slot * this.#stride;
    Atomics.sub(this.#sockets, i + 1 + w, 1);
    Atomics.sub(this.#sockets, i, 1);
  }

  /** Main thread: gives back every place worker `w` held (it died with its sockets). */
  releaseWorker(w: number): void {
    const a = this.#sockets;
    for (let i = 0; i + this.#stride <= a.length; i += this.#stride) {
      const held = Atomics.exchange(a, i + 1 + w, 0);
      if (held !== 0) Atomics.sub(a, i, held);
    }
  }

  /** Takes up to `cost` from the slot's window of the current second; returns how many it took. */
  take(slot: number, limit: number, cost: number, nowMs = Date.now()): number {
    const words = this.#words;
    const s = Math.floor(nowMs / 1000);
    if (s !== this.#secondNumber) {
      this.#secondNumber = s;
      this.#second = BigInt(s);
    }
    const second = this.#second;
    for (;;) {
      const word = Atomics.load(words, slot);
      let sec = word >> 32n;
      let count = 0;
      // A worker that read the clock a moment later already opened the next second: count there.
      if (sec >= second) count = Number(word & LOW);
      else sec = second;
      const taken = Math.min(cost, Math.max(0, limit - count));
      if (taken === 0) return 0;
      if (Atomics.compareExchange(words, slot, word, (sec << 32n) | BigInt(count + taken)) === word) return taken;
    }
  }

}

function grow(b: GrowableSab, need: number): void {
  if (need <= b.byteLength) return;
  let bytes = b.byteLength;
  while (bytes < need) bytes *= 2;
  b.grow(Math.min(bytes, (b as unknown as { maxByteLength: number }).maxByteLength));
}
