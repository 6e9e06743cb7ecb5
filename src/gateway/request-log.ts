import type { ServerResponse } from 'node:http';
import type { RequestLogEntry } from '../wire/account.js';

/**
 * Request logs (docs/gateway.md, "Request logs"): each gateway worker keeps, per endpoint, the
 * last `gateway.request_log_size` HTTP calls in a ring of fixed-size records, in memory only.
 * The hot path allocates one small record per call and stores it in the ring when the answer
 * closes; nothing is sent to the main thread or the store until someone reads the log (the main
 * thread then asks every worker and merges, gateway/index.ts).
 */

const NOTE = Symbol('rpcctl.callNote');

/** One call, filled in on its way through the request steps. Fixed shape: its fields are set in the constructor. */
export class CallNote {
  /** This worker's sequence number, set when the record enters the ring. */
  seq = 0;
  /** When the request arrived (epoch ms). */
  readonly at = Date.now();
  readonly started = performance.now();
  /** The JSON-RPC method (a batch's first element's), or `GET /path` on a REST network; '' when the body never parsed. */
  method = '';
  status = 0;
  /** The JSON-RPC error code of the answer (a batch's first error), null when none is known. */
  code: number | null = null;
  ms = 0;
  credits = 0;
  /** Answered from the cache (a batch: every element). */
  cached = false;
  /** Elements of a batch; 0 for a single call. */
  batch = 0;
  readonly endpointId: number;
  readonly ip: string;
  readonly log: RequestLog;
  constructor(log: RequestLog, endpointId: number, ip: string) {
    this.log = log;
    this.endpointId = endpointId;
    this.ip = ip;
  }
}

type Noted = ServerResponse & { [NOTE]?: CallNote };

/** Longest method name kept: a client's method may be anything up to the body's size. */
export const MAX_LOGGED_METHOD = 100;

/**
 * The method as the log keeps it: a longer one is cut, and copied so that the record does not
 * keep the request's whole text alive (a slice of a long string may point into it).
 */
export function loggedMethod(method: string): string {
  return method.length <= MAX_LOGGED_METHOD ? method : Buffer.from(`${method.slice(0, MAX_LOGGED_METHOD)}…`).toString();
}

/** Starts the record of a call to an endpoint; it enters the log when the answer is finished or the client went away (499). */
export function noteCall(log: RequestLog, res: ServerResponse, endpointId: number, ip: string): CallNote {
  const note = new CallNote(log, endpointId, ip);
  (res as Noted)[NOTE] = note;
  // `on`, not `once` (whose wrapper is one more allocation a call): 'close' comes once.
  res.on('close', closed);
  return note;
}

function closed(this: ServerResponse): void {
  const note = (this as Noted)[NOTE]!;
  note.status = this.writableFinished ? this.statusCode : 499;
  note.ms = performance.now() - note.started;
  note.log.push(note);
}

/** The record of the call `res` answers; undefined when request logs are off or the request has no endpoint. */
export function noteOf(res: ServerResponse): CallNote | undefined {
  return (res as Noted)[NOTE];
}

/** Sets the answer's JSON-RPC error code unless one is known already (a batch keeps its first). */
export function noteCode(res: ServerResponse, code: number | undefined): void {
  const n = (res as Noted)[NOTE];
  if (n && n.code === null && code !== undefined) n.code = code;
}

/** A record as it crosses to the main thread: seq, at, method, status, code, ms, credits, ip, cached, batch. */
export type CallWire = [number, number, string, number, number | null, number, number, string, boolean, number];

/** What a reader asks a worker: one endpoint's calls after `after` (this worker's seq), optionally errors only or one method. */
export interface CallQuery {
  endpointId: number;
  after: number;
  errorsOnly: boolean;
  method: string | undefined;
}

/** Whether a call counts as an error for `status=error`: an HTTP error, the client gone, or a JSON-RPC error in the answer. */
export function isErrorCall(status: number, code: number | null): boolean {
  return status >= 400 || code !== null;
}

interface Ring { items: CallNote[]; next: number }

/**
 * One worker's request logs: a ring per endpoint, created at its first call, never larger than
 * `size`. Memory: about 150 bytes a record, so at most endpoints × size × 150 bytes per worker.
 */
export class RequestLog {
  readonly size: number;
  readonly #rings = new Map<number, Ring>();
  /** Starts past any sequence a worker this one replaces could have reached, so a reader's cursor stays valid across a restart. */
  #seq = Date.now() * 1000;

  constructor(size: number) {
    this.size = size;
  }

  /** This worker's latest sequence number: a reader's cursor for what comes next. */
  get seq(): number {
    return this.#seq;
  }

  push(note: CallNote): void {
    note.seq = ++this.#seq;
    let ring = this.#rings.get(note.endpointId);
    if (!ring) this.#rings.set(note.endpointId, ring = { items: [], next: 0 });
    if (ring.items.length < this.size) ring.items.push(note);
    else ring.items[ring.next] = note;
    ring.next = (ring.next + 1) % this.size;
  }

  /** The endpoint's calls matching `q`, oldest first. */
  read(q: CallQuery): CallWire[] {
    const ring = this.#rings.get(q.endpointId);
    if (!ring) return [];
    const out: CallWire[] = [];
    const n = ring.items.length;
    const first = n < this.size ? 0 : ring.next;
    for (let i = 0; i < n; i++) {
      const c = ring.items[(first + i) % n]!;
      if (c.seq <= q.after) continue;
      if (q.errorsOnly && !isErrorCall(c.status, c.code)) continue;
      if (q.method !== undefined && c.method !== q.method) continue;
      out.push([c.seq, c.at, c.method, c.status, c.code, Math.round(c.ms * 10) / 10, c.credits, c.ip, c.cached, c.batch]);
    }
    return out;
  }
}

export interface RequestLogRead {
  /** Newest first, at most `limit`. */
  calls: RequestLogEntry[];
  /** The last call's id when older calls match too: pass it as `before` for the next page. */
  next_before: string | null;
  /** Pass as `after` to get only the calls that came after this read. */
  cursor: string;
}

/** The read cursor: each worker's latest sequence number, in base 36. */
export function parseCursor(cursor: string | undefined): number[] {
  if (!cursor) return [];
  return cursor.split('.').map((s) => {
    const n = Number.parseInt(s, 36);
    return Number.isSafeInteger(n) && n >= 0 ? n : 0;
  });
}

type Key = [at: number, seq: number, worker: number];

function idOf(k: Key): string {
  return `${k[0].toString(36)}-${k[1].toString(36)}-${k[2]}`;
}

/** A `before` id back as its sort key; undefined when it is not one of ours. */
export function parseId(id: string): Key | undefined {
  const m = /^([0-9a-z]{1,12})-([0-9a-z]{1,12})-(\d{1,3})$/.exec(id);
  return m ? [Number.parseInt(m[1]!, 36), Number.parseInt(m[2]!, 36), Number(m[3])] : undefined;
}

/** Newest first: arrival time, then sequence, then worker (a total order: a worker's sequence numbers are its own). */
function newerFirst(x: Key, y: Key): number {
  return y[0] - x[0] || y[1] - x[1] || y[2] - x[2];
}

/**
 * The workers' answers merged: newest first, those older than `before` only, cut to `limit`;
 * the cursor keeps, for a worker that did not answer (it died), the position it was given.
 */
export function mergeCalls(answers: Array<{ seq: number; calls: CallWire[] } | undefined>, after: number[], limit: number, before?: Key): RequestLogRead {
  const rows: Array<{ k: Key; c: CallWire }> = [];
  const cursor: number[] = [];
  answers.forEach((a, w) => {
    cursor.push(a ? a.seq : after[w] ?? 0);
    for (const c of a?.calls ?? []) {
      const k: Key = [c[1], c[0], w];
      if (!before || newerFirst(before, k) < 0) rows.push({ k, c });
    }
  });
  rows.sort((x, y) => newerFirst(x.k, y.k));
  const page = rows.slice(0, limit);
  return {
    calls: page.map(({ k, c: [, at, method, status, code, ms, credits, ip, cached, batch] }) => ({
      id: idOf(k), at: new Date(at).toISOString(), method, status, rpc_code: code, latency_ms: ms, credits, client_ip: ip, cached, batch: batch === 0 ? null : batch,
    })),
    next_before: rows.length > limit ? idOf(page[page.length - 1]!.k) : null,
    cursor: cursor.map((s) => s.toString(36)).join('.'),
  };
}
