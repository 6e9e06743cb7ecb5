import type { IncomingMessage, ServerResponse } from 'node:http';
import { RpcctlError } from './errors.js';

export class BodyTooLargeError extends RpcctlError {
  readonly code = 'E_BODY_TOO_LARGE';
  readonly limit: number;
  constructor(limit: number) {
    super(`request body too large (limit ${limit} bytes)`);
    this.name = 'BodyTooLargeError';
    this.limit = limit;
  }
}

/** The body did not arrive within its time: the socket is closed after the answer. */
export class BodyTimeoutError extends RpcctlError {
  readonly code = 'E_BODY_TIMEOUT';
  constructor(ms: number) {
    super(`request body not received within ${ms} ms`);
    this.name = 'BodyTimeoutError';
  }
}

/** Too many body bytes are already in flight from this client, or from everyone. */
export class BodyBudgetError extends RpcctlError {
  readonly code = 'E_BODY_BUDGET';
  constructor() {
    super('too many request bytes in flight');
    this.name = 'BodyBudgetError';
  }
}

export interface ReadBodyOptions {
  /** Whole-body time limit from the first call; a slow sender is cut off. */
  timeoutMs?: number;
  /** Bytes are charged to this lease (see BodyBudget) while they are read and held. */
  lease?: BodyLease;
}

const EMPTY = Buffer.alloc(0);

/**
 * Reads a whole request body, refusing more than `limit` bytes without buffering them, more
 * than the budget allows in flight, and a body slower than `timeoutMs`.
 */
export function readBody(req: IncomingMessage, limit: number, opts: ReadBodyOptions = {}): Promise<Buffer> {
  const length = req.headers['content-length'];
  // Most GETs have no body: skip the stream machinery for them.
  if (req.headers['transfer-encoding'] === undefined && (length === undefined || length === '0')) {
    return Promise.resolve(EMPTY);
  }
  const declared = length === undefined ? undefined : Number(length);
  if (declared !== undefined && declared > limit) {
    req.resume();
    return Promise.reject(new BodyTooLargeError(limit));
  }
  const lease = opts.lease;
  if (lease && declared !== undefined && !lease.take(declared)) {
    req.resume();
    return Promise.reject(new BodyBudgetError());
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const timer = opts.timeoutMs === undefined ? undefined : setTimeout(() => fail(new BodyTimeoutError(opts.timeoutMs!)), opts.timeoutMs);
    function fail(err: Error): void {
      if (done) return;
      done = true;
      clearTimeout(timer);
      chunks.length = 0;
      req.off('data', onData);
      req.resume();
      reject(err);
    }
    function onData(chunk: Buffer): void {
      if (done) return;
      size += chunk.length;
      if (size > limit) return fail(new BodyTooLargeError(limit));
      // A chunked body is charged as it comes; a declared one was charged up front.
      if (lease && declared === undefined && !lease.take(chunk.length)) return fail(new BodyBudgetError());
      chunks.push(chunk);
    }
    req.on('data', onData);
    req.on('end', () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    });
    req.on('error', (err) => fail(err));
  });
}

/** Per-client cells in a budget shared by threads; two addresses that hash to one cell share its allowance. */
const SHARED_BUDGET_CELLS = 16_384;
const ROW = 1 + SHARED_BUDGET_CELLS;

/**
 * Memory for a BodyBudget that several threads (the gateway's workers) charge as one: a row
 * per thread of [total, ...per-client cells], so a thread that dies can be given back.
 */
export function sharedBodyBudgetMemory(threads: number): SharedArrayBuffer {
  return new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT * ROW * threads);
}

/** Gives back everything thread `index` held: it ended without releasing its leases. */
export function releaseBodyBudgetThread(memory: SharedArrayBuffer, index: number): void {
  new Int32Array(memory, Int32Array.BYTES_PER_ELEMENT * ROW * index, ROW).fill(0);
}

/**
 * Caps the request-body bytes held in memory, per client address and in total. A request's
 * bytes stay charged until its answer is finished (the body is held that long), then return.
 * Given shared memory, the gateway's worker threads charge one budget: a client's connections
 * land on different workers, and the cap is per client, not per worker. Each thread adds to
 * its own row and then sums every row, so two threads can never both take room only one had
 * (at worst both refuse). Counts there are 32-bit, which the config's ceiling on these limits
 * (1 GiB) leaves room for.
 */
export class BodyBudget {
  readonly perClient: number;
  readonly total: number;
  #used = 0;
  readonly #byClient = new Map<string, number>();
  readonly #shared: { cells: Int32Array; mine: number; threads: number } | undefined;

  constructor(perClient: number, total: number, shared?: { memory: SharedArrayBuffer; index: number }) {
    this.perClient = perClient;
    this.total = total;
    if (shared) {
      const cells = new Int32Array(shared.memory);
      this.#shared = { cells, mine: ROW * shared.index, threads: cells.length / ROW };
    }
  }

  get used(): number {
    return this.#shared ? this.#sum(0) : this.#used;
  }

  /** A lease for one request; everything it took is given back when its answer is over (sent or aborted). */
  lease(client: string, res: ServerResponse): BodyLease {
    const lease = new BodyLease(this, client);
    res.once('close', () => lease.release());
    return lease;
  }

  /** @internal */
  tryTake(client: string, bytes: number): boolean {
    const shared = this.#shared;
    if (shared) {
      const { cells, mine } = shared;
      const cell = cellOf(client);
      Atomics.add(cells, mine, bytes);
      Atomics.add(cells, mine + cell, bytes);
      if (this.#sum(0) > this.total || this.#sum(cell) > this.perClient) {
        Atomics.sub(cells, mine + cell, bytes);
        Atomics.sub(cells, mine, bytes);
        return false;
      }
      return true;
    }
    const mine = this.#byClient.get(client) ?? 0;
    if (this.#used + bytes > this.total || mine + bytes > this.perClient) return false;
    this.#used += bytes;
    this.#byClient.set(client, mine + bytes);
    return true;
  }

  /** @internal */
  give(client: string, bytes: number): void {
    const shared = this.#shared;
    if (shared) {
      Atomics.sub(shared.cells, shared.mine + cellOf(client), bytes);
      Atomics.sub(shared.cells, shared.mine, bytes);
      return;
    }
    this.#used -= bytes;
    const left = (this.#byClient.get(client) ?? 0) - bytes;
    if (left <= 0) this.#byClient.delete(client);
    else this.#byClient.set(client, left);
  }

  #sum(offset: number): number {
    const { cells, threads } = this.#shared!;
    let n = 0;
    for (let t = 0; t < threads; t++) n += Atomics.load(cells, t * ROW + offset);
    return n;
  }
}

/** FNV-1a of the address, as a cell offset in a row (1-based: offset 0 is the row's total). */
function cellOf(client: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < client.length; i++) h = Math.imul(h ^ client.charCodeAt(i), 0x01000193);
  return 1 + ((h >>> 0) % SHARED_BUDGET_CELLS);
}

export class BodyLease {
  readonly #budget: BodyBudget;
  readonly #client: string;
  #held = 0;
  #released = false;

  constructor(budget: BodyBudget, client: string) {
    this.#budget = budget;
    this.#client = client;
  }

  take(bytes: number): boolean {
    if (this.#released || !this.#budget.tryTake(this.#client, bytes)) return false;
    this.#held += bytes;
    return true;
  }

  release(): void {
    if (this.#released) return;
    this.#released = true;
    if (this.#held > 0) this.#budget.give(this.#client, this.#held);
    this.#held = 0;
  }
}
